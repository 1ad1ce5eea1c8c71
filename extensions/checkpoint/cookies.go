package checkpoint

import "strings"

// cookieCacheSize is how many hosts a generation of the cookie cache
// holds: the cache keeps the cookies of the 4,096 to 8,192 hosts used
// last, whatever the number of hosts a crawl meets.
const cookieCacheSize = 4096

// cookieCache keeps the cookie strings of the hosts used last, an empty
// one for most, so that Colly's cookie jar does not read the store on
// every request. It is a cache of the store, written through by
// setHostCookies: a host it evicted reads its cookies back from the
// store when next used. It has two generations: a host is looked up in
// the recent one, then in the older one (and moved to the recent one);
// when the recent one is full it becomes the older one and the oldest is
// dropped. Once a write to the store failed, the cache is the only copy
// of what was not written: it is kept whole from then on (keepAll).
// Guarded by the checkpoint's lock.
type cookieCache struct {
	size          int // hosts per generation
	keepAll       bool
	recent, older map[string]string
}

func newCookieCache() cookieCache {
	return cookieCache{size: cookieCacheSize, recent: map[string]string{}}
}

// get returns host's cookies, and whether the cache has them.
func (c *cookieCache) get(host string) (string, bool) {
	if v, ok := c.recent[host]; ok {
		return v, true
	}
	v, ok := c.older[host]
	if ok {
		delete(c.older, host)
		c.put(host, v)
	}
	return v, ok
}

// put sets host's cookies. The key is a copy: host is part of a request's
// URL, which the cache would otherwise keep whole.
func (c *cookieCache) put(host, cookies string) {
	if _, ok := c.recent[host]; !ok {
		host = strings.Clone(host)
		if len(c.recent) >= c.size && !c.keepAll {
			c.older, c.recent = c.recent, make(map[string]string, len(c.recent))
		}
	}
	c.recent[host] = cookies
}

// len returns the number of hosts cached.
func (c *cookieCache) len() int { return len(c.recent) + len(c.older) }
