// Package hostkey computes the key a URL host is known by across
// Breakwater: the breaker's domains, the checkpoint's queues, the shared
// circuits in Redis and the report's rows all use it, so they agree.
package hostkey

import "strings"

// Of returns the domain key for a URL host: lower-cased, port kept (the
// same key Colly's LimitRules match on).
func Of(host string) string { return strings.ToLower(host) }
