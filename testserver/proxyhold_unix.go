//go:build unix

package testserver

import (
	"net/netip"
	"syscall"
)

// portHold keeps a refusing proxy's port its own: a TCP socket bound to
// the port and never listening. The kernel still answers a client's SYN
// with a reset (ECONNREFUSED), and no other socket can bind the port
// meanwhile: the hold does not set SO_REUSEADDR, which Linux requires of
// both sockets to share a port. Without it, a store or proxy started
// while this one refuses could be given the port.
type portHold struct{ fd int }

// holdPort binds addr (ip:port) without listening; nil if it cannot (the
// refusal is then as before: nothing on the port).
func holdPort(addr string) *portHold {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().Is4() {
		return nil
	}
	// SOCK_CLOEXEC is Linux's; as Go's net package does where it is
	// missing, mark the socket close-on-exec under the fork lock.
	syscall.ForkLock.RLock()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}); err != nil {
		syscall.Close(fd)
		return nil
	}
	return &portHold{fd: fd}
}

// release frees the port, if h holds it, for the proxy to listen again.
func (h *portHold) release() {
	if h != nil {
		syscall.Close(h.fd)
	}
}
