// Package circuittest is the table of circuit behaviour every
// circuit.Circuit must pass: the in-process circuit and storage/redis's
// shared circuit run the same tests, so their semantics are the same.
//
//	func TestClosedState(t *testing.T) { circuittest.RunClosed(t, newCircuit) }
package circuittest
