package profiles_test

import (
	"fmt"

	"github.com/breakwater-crawl/breakwater/examples/productcrawl/profiles"
	"github.com/breakwater-crawl/breakwater/extensions/breaker"
)

func Example() {
	file := []byte(`breaker_profiles:
  fragile:
    extends: conservative
    consecutive_failures: 3
    cooldown_seconds: 600
    max_cooldown_seconds: 3600
default: standard
domains:
  shop.example.com: fragile
  .example.org: aggressive
`)
	set, err := profiles.Parse("profiles.yaml", file)
	if err != nil {
		fmt.Println(err) // profiles.yaml:LINE: path: value: what is wrong
		return
	}
	b, err := breaker.New(set.Config())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, host := range []string{"shop.example.com", "www.example.org", "elsewhere.example"} {
		b.Allow(host)
	}
	for _, st := range b.Stats() {
		fmt.Println(st.Domain, st.Profile)
	}
	fragile, _ := set.Profile("fragile")
	fmt.Println(fragile.WindowSize, fragile.ConsecutiveFailures, fragile.Cooldown, fragile.MaxCooldown)
	// Output:
	// elsewhere.example standard
	// shop.example.com fragile
	// www.example.org aggressive
	// 10 3 10m0s 1h0m0s
}

func ExampleParse_error() {
	_, err := profiles.Parse("profiles.yaml", []byte(`breaker_profiles:
  fragile:
    extends: conservative
    cooldown: 600
    failure_threshold: 1.5
`))
	fmt.Println(err)
	// Output:
	// profiles.yaml:4: breaker_profiles.fragile.cooldown: unknown field; this setting is in seconds: write cooldown_seconds
}
