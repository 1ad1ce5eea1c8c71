// Package circuitbench holds the gobreaker half of the breaker's
// micro-benchmarks: sony/gobreaker/v2's TwoStepCircuitBreaker doing what
// extensions/breaker's BenchmarkClosedOneDomain, BenchmarkClosedParallel1000Domains
// and BenchmarkOpenRefusal do, under the same names, so one run shows both
// side by side:
//
//	go test -run '^$' -bench 'Closed|Open' -benchmem ./extensions/breaker/ ./bench/circuitbench/
//
// It lives in the bench module so that the library's module does not
// require gobreaker. It has no non-test code.
package circuitbench
