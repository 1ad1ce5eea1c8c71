package redistest

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/breakwater-crawl/breakwater/storage/redis/internal/keyslot"
)

// Cluster is a real Redis Cluster of masters only, started by a test on
// free 127.0.0.1 ports in a temporary directory and torn down when the
// test ends. Persistence is off: a master restarted by RestartMaster comes
// back empty, as a Redis without persistence does.
type Cluster struct {
	t       testing.TB
	dir     string
	cli     string
	busFlag bool // redis-server takes --cluster-port (7.0 and later)
	nodes   []*clusterNode
}

type clusterNode struct {
	port, bus int
	conf      string
	cmd       *exec.Cmd
	exited    chan struct{}
	out       *lockedBuffer
}

// Addr is the node's "127.0.0.1:port".
func (n *clusterNode) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(n.port)) }

// NewCluster starts masters redis-server processes with cluster mode on
// (each with its own port and cluster bus port, persistence off), joins
// them with `redis-cli --cluster create … --cluster-replicas 0`, which
// spreads the 16384 slots evenly in node order, and waits until every node
// says cluster_state:ok. The test is skipped (with the reason logged) when
// redis-server or redis-cli is missing, or failed when REDISTEST_REQUIRE_REAL
// is set. Everything is stopped and removed when the test ends.
func NewCluster(t testing.TB, masters int) *Cluster {
	t.Helper()
	if masters < 3 {
		t.Fatalf("redistest: a Redis Cluster needs at least 3 masters, not %d", masters)
	}
	server, err1 := exec.LookPath("redis-server")
	cli, err2 := exec.LookPath("redis-cli")
	if err := errors.Join(err1, err2); err != nil {
		msg := fmt.Sprintf("redistest: no Redis Cluster for this test: redis-server and redis-cli are needed on PATH (%v)", err)
		if v := os.Getenv("REDISTEST_REQUIRE_REAL"); v != "" && v != "0" {
			t.Fatal(msg + "; REDISTEST_REQUIRE_REAL is set, so this is a failure")
		}
		t.Skip(msg)
	}
	major, err := serverMajor(server)
	if err == nil && major < 6 {
		err = fmt.Errorf("%s is version %d: NewCluster needs Redis 6 or later (redis-cli --cluster-yes)", server, major)
	}
	if err != nil {
		if v := os.Getenv("REDISTEST_REQUIRE_REAL"); v != "" && v != "0" {
			t.Fatalf("redistest: no Redis Cluster for this test: %v; REDISTEST_REQUIRE_REAL is set, so this is a failure", err)
		}
		t.Skipf("redistest: no Redis Cluster for this test: %v", err)
	}
	c := &Cluster{t: t, dir: t.TempDir(), cli: cli, busFlag: major >= 7}
	t.Cleanup(c.stop)
	for i := 0; i < masters; i++ {
		n, err := c.startNode(server, i)
		if err != nil {
			t.Fatalf("redistest: starting cluster node %d: %v", i, err)
		}
		c.nodes = append(c.nodes, n)
	}
	args := []string{"--cluster", "create"}
	for _, n := range c.nodes {
		args = append(args, n.addr())
	}
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := c.redisCLI(30*time.Second, args...); err != nil {
		t.Fatalf("redistest: redis-cli %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	if err := c.WaitOK(30 * time.Second); err != nil {
		t.Fatalf("redistest: %v", err)
	}
	return c
}

// startNode starts node i on two free ports (client and cluster bus: the
// bus's default, port+10000, may be out of range for an ephemeral port, so
// it is given with --cluster-port; before Redis 7, which lacks the flag,
// the port is drawn below 55536 with port+10000 free too).
func (c *Cluster) startNode(server string, i int) (*clusterNode, error) {
	var last error
	for try := 0; try < 5; try++ {
		port, bus, err := c.ports()
		if err != nil {
			return nil, err
		}
		n := &clusterNode{port: port, bus: bus, conf: filepath.Join(c.dir, fmt.Sprintf("nodes-%d.conf", i))}
		if last = c.run(server, n); last == nil {
			return n, nil
		}
	}
	return nil, last
}

// run starts (or restarts) n's process and waits until it answers PING.
func (c *Cluster) run(server string, n *clusterNode) error {
	dir := filepath.Join(c.dir, "node-"+strconv.Itoa(n.port))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	args := []string{"--port", strconv.Itoa(n.port)}
	if c.busFlag {
		args = append(args, "--cluster-port", strconv.Itoa(n.bus))
	}
	n.cmd = exec.Command(server, append(args,
		"--bind", "127.0.0.1", "--protected-mode", "yes",
		"--cluster-enabled", "yes", "--cluster-config-file", n.conf, "--cluster-node-timeout", "2000",
		"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no",
		"--loglevel", "warning", "--logfile", "")...)
	n.out = &lockedBuffer{}
	n.cmd.Stdout, n.cmd.Stderr = n.out, n.out
	n.cmd.SysProcAttr = procAttr()
	if err := n.cmd.Start(); err != nil {
		return err
	}
	n.exited = make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) { _ = cmd.Wait(); close(exited) }(n.cmd, n.exited)
	opts := goredis.Options{Addr: n.addr()}
	deadline := time.Now().Add(5 * time.Second)
	for {
		select {
		case <-n.exited:
			return fmt.Errorf("redis-server on port %d exited at start: %s", n.port, strings.TrimSpace(n.out.String()))
		default:
		}
		err := ping(&opts, 200*time.Millisecond)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			n.kill()
			return fmt.Errorf("redis-server on port %d did not answer PING within 5s: %v", n.port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ports returns a free client port and a free cluster bus port.
func (c *Cluster) ports() (port, bus int, err error) {
	if c.busFlag {
		if port, err = freePort(); err == nil {
			bus, err = freePort()
		}
		return port, bus, err
	}
	for try := 0; try < 50; try++ {
		port = 20000 + mrand.IntN(35000)
		if portFree(port) && portFree(port+10000) {
			return port, port + 10000, nil
		}
	}
	return 0, 0, errors.New("no free port p below 55536 with p+10000 free too")
}

func portFree(p int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// serverMajor returns redis-server's major version.
func serverMajor(server string) (int, error) {
	out, err := exec.Command(server, "--version").Output()
	if err != nil {
		return 0, fmt.Errorf("%s --version: %w", server, err)
	}
	// "Redis server v=7.0.15 sha=…"
	_, v, ok := strings.Cut(string(out), "v=")
	if ok {
		if major, _, ok := strings.Cut(v, "."); ok {
			if n, err := strconv.Atoi(major); err == nil {
				return n, nil
			}
		}
	}
	return 0, fmt.Errorf("%s --version said %q: no version found", server, strings.TrimSpace(string(out)))
}

func (n *clusterNode) kill() {
	if n.cmd == nil || n.cmd.Process == nil {
		return
	}
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.exited:
	case <-time.After(3 * time.Second):
		_ = n.cmd.Process.Kill()
		<-n.exited
	}
}

func (c *Cluster) stop() {
	var wg sync.WaitGroup
	for _, n := range c.nodes {
		wg.Add(1)
		go func() { defer wg.Done(); n.kill() }()
	}
	wg.Wait()
}

// redisCLI runs redis-cli with args, bounded by within.
func (c *Cluster) redisCLI(within time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	out, err := exec.CommandContext(ctx, c.cli, args...).CombinedOutput()
	return string(out), err
}

// Addrs returns the masters' addresses, "127.0.0.1:port", in node order.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		out[i] = n.addr()
	}
	return out
}

// URL returns the cluster's seeds in the form storage/redis's ParseURL and
// productcrawl's -redis read: "redis+cluster://127.0.0.1:p1,127.0.0.1:p2,…".
func (c *Cluster) URL() string { return "redis+cluster://" + strings.Join(c.Addrs(), ",") }

// Options returns ClusterOptions for the cluster, with
// ContextTimeoutEnabled so that a context deadline bounds every command.
func (c *Cluster) Options() *goredis.ClusterOptions {
	return &goredis.ClusterOptions{Addrs: c.Addrs(), ContextTimeoutEnabled: true, DisableIdentity: true}
}

// Client returns a ClusterClient for the cluster, closed when the test
// ends.
func (c *Cluster) Client(t testing.TB) *goredis.ClusterClient {
	t.Helper()
	cc := goredis.NewClusterClient(c.Options())
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// Node returns a plain client to master i, closed when the test ends: for
// CLUSTER commands and for looking at one node's keys.
func (c *Cluster) Node(t testing.TB, i int) *goredis.Client {
	t.Helper()
	cl := goredis.NewClient(&goredis.Options{Addr: c.nodes[i].addr(), ContextTimeoutEnabled: true, DisableIdentity: true})
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// Masters is the number of masters.
func (c *Cluster) Masters() int { return len(c.nodes) }

// WaitOK waits until every node says cluster_state:ok and all agree on
// who serves every slot.
func (c *Cluster) WaitOK(within time.Duration) error {
	deadline := time.Now().Add(within)
	var last string
	for {
		ok := true
		var first string
		for _, n := range c.nodes {
			cl := goredis.NewClient(&goredis.Options{Addr: n.addr(), MaxRetries: -1, DisableIdentity: true})
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			info, err := cl.ClusterInfo(ctx).Result()
			var shape string
			if err == nil {
				shape, err = slotShape(ctx, cl)
			}
			cancel()
			_ = cl.Close()
			switch {
			case err != nil:
				ok, last = false, fmt.Sprintf("node %s: %v", n.addr(), err)
			case !strings.Contains(info, "cluster_state:ok"):
				ok, last = false, fmt.Sprintf("node %s: not cluster_state:ok", n.addr())
			case first == "":
				first = shape
			case shape != first:
				ok, last = false, fmt.Sprintf("node %s sees other slot owners than %s", n.addr(), c.nodes[0].addr())
			}
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster not ok within %v: %s", within, last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// slotShape is the node's view of which port serves which slot range.
func slotShape(ctx context.Context, cl *goredis.Client) (string, error) {
	slots, err := cl.ClusterSlots(ctx).Result()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, s := range slots {
		if len(s.Nodes) == 0 {
			continue
		}
		fmt.Fprintf(&b, "%d-%d@%s;", s.Start, s.End, s.Nodes[0].Addr)
	}
	return b.String(), nil
}

// NodeID returns master i's cluster node id.
func (c *Cluster) NodeID(t testing.TB, i int) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	id, err := c.Node(t, i).Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil {
		t.Fatalf("redistest: CLUSTER MYID on node %d: %v", i, err)
	}
	return id
}

// Owner returns the index of the master that serves slot.
func (c *Cluster) Owner(t testing.TB, slot int) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	slots, err := c.Node(t, 0).ClusterSlots(ctx).Result()
	if err != nil {
		t.Fatalf("redistest: CLUSTER SLOTS: %v", err)
	}
	for _, s := range slots {
		if slot >= int(s.Start) && slot <= int(s.End) && len(s.Nodes) > 0 {
			for i, n := range c.nodes {
				if s.Nodes[0].Addr == n.addr() {
					return i
				}
			}
		}
	}
	t.Fatalf("redistest: nobody serves slot %d", slot)
	return -1
}

// MigrationStep is called by MigrateSlot after each key it moved, with the
// number moved so far; the slot is MIGRATING on the source and IMPORTING on
// the target all along, so clients meanwhile get ASK (for a key already
// moved) and TRYAGAIN (for a script whose keys are split between the two).
type MigrationStep func(moved int)

// MigrateSlot moves slot from its owner to master to, as `redis-cli
// --cluster reshard` does, one key at a time: CLUSTER SETSLOT IMPORTING on
// the target and MIGRATING on the source, MIGRATE of each key (step is
// called after each, nil for none), then CLUSTER SETSLOT NODE on both, so
// clients get MOVED from then on. It returns the number of keys moved.
func (c *Cluster) MigrateSlot(t testing.TB, slot, to int, step MigrationStep) int {
	t.Helper()
	from := c.Owner(t, slot)
	if from == to {
		t.Fatalf("redistest: slot %d is on node %d already", slot, to)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	src, dst := c.Node(t, from), c.Node(t, to)
	srcID, dstID := c.NodeID(t, from), c.NodeID(t, to)
	must := func(what string, err error) {
		if err != nil {
			t.Fatalf("redistest: migrating slot %d from node %d to %d: %s: %v", slot, from, to, what, err)
		}
	}
	must("SETSLOT IMPORTING", dst.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", srcID).Err())
	must("SETSLOT MIGRATING", src.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", dstID).Err())
	moved := 0
	for {
		keys, err := src.ClusterGetKeysInSlot(ctx, slot, 10).Result()
		must("GETKEYSINSLOT", err)
		if len(keys) == 0 {
			break
		}
		for _, k := range keys {
			err := src.Do(ctx, "MIGRATE", "127.0.0.1", c.nodes[to].port, k, 0, 5000, "REPLACE").Err()
			if err != nil && err.Error() != "NOKEY" {
				must("MIGRATE "+k, err)
			}
			moved++
			if step != nil {
				step(moved)
			}
		}
	}
	// The new owner first, then the old one, then the others: as
	// redis-cli does.
	must("SETSLOT NODE on target", dst.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", dstID).Err())
	must("SETSLOT NODE on source", src.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", dstID).Err())
	for i := range c.nodes {
		if i != from && i != to {
			must("SETSLOT NODE", c.Node(t, i).Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", dstID).Err())
		}
	}
	must("wait for ok", c.WaitOK(30*time.Second))
	return moved
}

// RestartMaster stops master i (SIGTERM; persistence is off, so its data
// is gone) and starts it again on the same ports with the same cluster
// config file: it comes back as the same node, serving the same slots,
// empty, as a master without persistence does after a crash. It waits
// until the cluster is ok again.
func (c *Cluster) RestartMaster(t testing.TB, i int) {
	t.Helper()
	server, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	n := c.nodes[i]
	n.kill()
	if err := c.run(server, n); err != nil {
		t.Fatalf("redistest: restarting master %d: %v", i, err)
	}
	if err := c.WaitOK(30 * time.Second); err != nil {
		t.Fatalf("redistest: after restarting master %d: %v", i, err)
	}
}

// Slot returns the hash slot of key, as Redis Cluster computes it (CRC16
// of the hash tag if the key has one).
func Slot(key string) int { return keyslot.Of(key) }
