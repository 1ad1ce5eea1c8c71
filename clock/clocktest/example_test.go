package clocktest_test

import (
	"fmt"
	"time"

	"github.com/breakwater-crawl/breakwater/clock/clocktest"
)

// A cooldown of a minute, tested without waiting a minute.
func ExampleFake() {
	clk := clocktest.NewFake(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	done := clk.After(time.Minute)
	clk.Advance(59 * time.Second)
	select {
	case <-done:
		fmt.Println("too early")
	default:
		fmt.Println("still cooling down at", clk.Now().Format("15:04:05"))
	}
	clk.Advance(time.Second)
	fmt.Println("probe at", (<-done).Format("15:04:05"))
	// Output:
	// still cooling down at 12:00:59
	// probe at 12:01:00
}
