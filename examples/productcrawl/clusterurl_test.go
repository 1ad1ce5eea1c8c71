package main

import (
	"slices"
	"testing"
)

func TestParseClusterURLReadsSeedsCredentialsAndOptions(t *testing.T) {
	o, err := parseClusterURL("redis+cluster://bob:s3cret@10.0.0.1:7000,10.0.0.2:7001,[::1]:7002/?pool_size=7&dial_timeout=2s")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"10.0.0.1:7000", "10.0.0.2:7001", "[::1]:7002"}; !slices.Equal(o.Addrs, want) {
		t.Errorf("Addrs = %q, want %q", o.Addrs, want)
	}
	if o.Username != "bob" || o.Password != "s3cret" || o.PoolSize != 7 || o.DialTimeout.Seconds() != 2 {
		t.Errorf("got user %q password %q pool %d dial %v", o.Username, o.Password, o.PoolSize, o.DialTimeout)
	}
	if o.TLSConfig != nil {
		t.Error("TLS on for redis+cluster://")
	}
	o, err = parseClusterURL("rediss+cluster://h:1")
	if err != nil || o.TLSConfig == nil || !slices.Equal(o.Addrs, []string{"h:1"}) {
		t.Errorf("rediss+cluster: %+v, %v; want TLS and one seed", o, err)
	}
}

func TestParseClusterURLRejectsWhatItCannotUse(t *testing.T) {
	for _, raw := range []string{
		"redis://h:1",                  // not a cluster URL
		"redis+cluster://",             // no seed
		"redis+cluster://h1,h2:2",      // a seed without a port
		"redis+cluster://h:1/3",        // a database
		"redis+cluster://h:1?addr=h:2", // seeds twice
		"redis+cluster://h:1?bogus=1",  // unknown option
	} {
		if _, err := parseClusterURL(raw); err == nil {
			t.Errorf("ParseClusterURL(%q) accepted it", raw)
		}
	}
	if !isClusterURL("REDIS+CLUSTER://h:1") || isClusterURL("redis://h:1") {
		t.Error("IsClusterURL")
	}
}
