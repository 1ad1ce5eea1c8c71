// Package proxy tells a bad proxy from a bad site: a Pool gives every
// proxy of a crawler's pool a circuit of its own (package circuit), takes
// a proxy whose circuit opens out of the rotation, and probes it again
// after a cooldown that grows with each ejection.
//
// Pool.ProxyFunc is a drop-in for Colly's proxy.RoundRobinProxySwitcher,
// taking the same list: it rotates over the proxies not ejected and tells
// Colly which one it chose as Colly's switcher does (the request's context
// under colly.ProxyURLKey, which Colly copies to Request.ProxyURL). A user
// with a proxy function of their own asks Pool.Ejected before using a
// proxy. Either way, each attempt is charged to its proxy with
// Pool.Record, which says whether the proxy, not the site, explains its
// failure, comparing the proxies' answers from one site. Which proxy
// carried an attempt is best learnt at the transport, with
// Track: Colly's Request.ProxyURL stays empty whenever its client has a
// timeout, as it has by default (see Track, and ExampleTrack for the
// dozen lines of RoundTripper).
//
// An ejected proxy is probed after Cooldown × its ejections in a row
// (capped at MaxCooldown, shortened at random by up to Jitter of it, as
// Envoy's outlier detection does): the rotation gives it one request; a
// success restores it, a failure ejects it again for longer. At most
// MaxEjectedShare of the pool (default half, at least one proxy) is
// ejected at once: a proxy failing past that stays in the rotation, and
// Pool.ClientSide reports that the client side (network, credentials, the
// crawler's own host) is the likely cause, not the proxies.
//
// A proxy is named by its host:port, credentials removed (Snapshot.Name):
// in logs, hooks and Stats. The package imports no part of package breaker: the
// domain circuits and the proxy circuits are wired together elsewhere.
// A Pool is safe for concurrent use.
package proxy
