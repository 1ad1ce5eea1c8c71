// Package profiles reads breaker profiles from a YAML file: a
// breaker_profiles block, extended with every field of breaker.Profile,
// plus which profile each domain uses and which one the rest use.
//
//	breaker_profiles:
//	  fragile:                       # a name of your own
//	    extends: conservative        # optional: start from another profile
//	    window_size: 10
//	    failure_threshold: 0.6
//	    cooldown_seconds: 300
//	    half_open_probes: 1
//	    consecutive_failures: 3
//	    slow_call_seconds: 5
//	    slow_call_rate: 0.8
//	    slope_multiple: 3
//	    slope_floor_ms: 200
//	    slope_trip: false
//	    max_cooldown_seconds: 1800
//	    timeout_multiple: 4
//	    timeout_floor_ms: 1000
//	    timeout_after: 20
//	  standard:                      # a built-in name: changes the built-in
//	    cooldown_seconds: 120
//	default: standard                # every domain not listed below
//	domains:
//	  shop.example.com: fragile      # an exact host (with :port if the URLs have one)
//	  .example.org: aggressive       # example.org and every subdomain
//	pacing:                          # optional: a least gap per domain
//	  shop.example.com: {min_gap_ms: 500}
//	  .example.org: {min_gap_seconds: 2}
//
// Each setting is the breaker.Profile field of the same name (see its
// documentation for what the rules do and which values are in range).
// Durations are numbers in the unit their name ends with, *_seconds or
// *_ms, fractions allowed (cooldown_seconds: 0.5 is 500 ms). Booleans are
// true or false; YAML 1.1's yes and no are strings here.
//
// A file with a mistake is rejected whole by Load and Parse, before any
// request is sent; each mistake names the file, the line, the field and
// its value (Error). Where a profile starts (extends, a built-in name, any
// other name) is on Parse.
//
// # Use
//
//	set, err := profiles.Load("profiles.yaml")
//	if err != nil { ... }                      // a usage error: exit 64
//	cfg := set.Config()
//	cfg.Logger = log
//	b, err := breaker.New(cfg)
//
// A nil *Set behaves as an empty file, so a program whose profiles file is
// optional can call the same methods either way.
package profiles
