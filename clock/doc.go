// Package clock is the time source Breakwater's time-dependent logic takes
// (cooldowns, windows, Retry-After pauses, backoff), so tests run on a
// manual clock: exact, and without sleeping.
//
// Production code uses System. Tests use a Fake, which stands still until
// the test moves it: Advance and Set fire every After that falls due,
// BlockUntil waits for goroutines to reach their wait, and Drive lets time
// pass only while everything waits.
package clock
