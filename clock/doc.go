// Package clock is the time source Breakwater's time-dependent logic takes
// (cooldowns, windows, Retry-After pauses, backoff), so tests run on a
// manual clock: exact, and without sleeping.
//
// Production code uses System. Tests use clocktest.Fake, which stands
// still until the test moves it.
package clock
