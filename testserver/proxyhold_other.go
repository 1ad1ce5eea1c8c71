//go:build !unix

package testserver

// portHold is a no-op where raw sockets are not at hand: a refusing
// proxy's port is free, and may be given to another socket meanwhile.
type portHold struct{}

func holdPort(string) *portHold { return nil }

func (h *portHold) release() {}
