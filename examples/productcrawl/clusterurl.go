package main

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	goredis "github.com/redis/go-redis/v9"
)

// clusterScheme and clusterTLSScheme are the URL schemes -redis reads as
// a Redis Cluster given by its seed nodes (parseClusterURL).
const (
	clusterScheme    = "redis+cluster"
	clusterTLSScheme = "rediss+cluster"
)

// isClusterURL reports whether raw names a Redis Cluster
// ("redis+cluster://" or "rediss+cluster://") rather than one server.
func isClusterURL(raw string) bool {
	s := strings.ToLower(raw)
	return strings.HasPrefix(s, clusterScheme+"://") || strings.HasPrefix(s, clusterTLSScheme+"://")
}

// parseClusterURL reads a Redis Cluster's seed nodes and options from
//
//	redis+cluster://[user:password@]host1:port1,host2:port2,…[/][?option=value&…]
//
// (rediss+cluster:// for TLS). One reachable seed is enough. The options
// are go-redis's ClusterOptions in snake case (dial_timeout, pool_size…);
// a path other than "/" or "/0" is an error (a cluster has database 0
// only). Build the client with goredis.NewClusterClient.
func parseClusterURL(raw string) (*goredis.ClusterOptions, error) {
	if !isClusterURL(raw) {
		return nil, fmt.Errorf("redis cluster URL %q: want %s://host:port,host:port… (or %s:// for TLS)", raw, clusterScheme, clusterTLSScheme)
	}
	scheme, rest, _ := strings.Cut(raw, "://")
	base := strings.TrimSuffix(strings.ToLower(scheme), "+cluster") // redis or rediss
	authority, tail := rest, ""
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		authority, tail = rest[:end], rest[end:]
	}
	user := ""
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		user, authority = authority[:at+1], authority[at+1:]
	}
	var hosts []string
	for _, h := range strings.Split(authority, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(h); err != nil {
			return nil, fmt.Errorf("redis cluster URL %q: seed %q: want host:port (%v)", raw, h, err)
		}
		hosts = append(hosts, h)
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("redis cluster URL %q: no seed node: want %s://host:port,host:port…", raw, clusterScheme)
	}
	path, query, _ := strings.Cut(tail, "?")
	if path != "" && path != "/" && path != "/0" {
		return nil, fmt.Errorf("redis cluster URL %q: path %q: a Redis Cluster has only database 0; leave the path out", raw, path)
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return nil, fmt.Errorf("redis cluster URL %q: options: %w", raw, err)
	}
	if q.Has("addr") {
		return nil, fmt.Errorf("redis cluster URL %q: give the seeds as host:port,host:port…, not as addr options", raw)
	}
	for _, h := range hosts[1:] {
		q.Add("addr", h)
	}
	opts, err := goredis.ParseClusterURL(base + "://" + user + hosts[0] + "?" + q.Encode())
	if err != nil {
		return nil, fmt.Errorf("redis cluster URL %q: %w", raw, err)
	}
	return opts, nil
}
