// Package redistest gives tests a real Redis and a key prefix of their own.
//
// New picks the first Redis that works, in this order:
//
//  1. REDIS_URL, when it is set (CI sets it), e.g. redis://127.0.0.1:6379/0.
//  2. A redis-server found on PATH, started by the test binary on a free
//     127.0.0.1 port with persistence off, shared by every test of the binary
//     and stopped when the binary ends (use Main in TestMain so it is stopped
//     cleanly; without Main it is still killed when the test process dies).
//  3. Only when neither works, an in-process miniredis, announced loudly in
//     the test log: it runs Lua and sorted sets but is not Redis. Set
//     REDISTEST_REQUIRE_REAL=1 to fail instead of falling back.
//
// Every call to New returns its own client and a unique key prefix made of
// the test's name and a random part. Put every key the test writes under that
// prefix: at the end of the test the keys matching prefix* are deleted with
// SCAN and UNLINK, never KEYS or FLUSHDB, so tests sharing a server (or
// sharing one with a developer's data) never touch each other's keys.
//
// NewCluster starts a real Redis Cluster for one test instead: three (or
// more) redis-server masters with cluster mode on, on free ports in a
// temporary directory, joined by redis-cli --cluster create, torn down
// when the test ends. It needs redis-server and redis-cli (Redis 6 or
// later) and skips the test without them, unless REDISTEST_REQUIRE_REAL is
// set. MigrateSlot moves a slot to another master key by key (clients meet
// ASK, TRYAGAIN, then MOVED) and RestartMaster restarts a master empty;
// Slot computes a key's hash slot.
//
//	func TestMain(m *testing.M) { redistest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		client, prefix := redistest.New(t)
//		client.Set(ctx, prefix+":k", "v", 0)
//	}
package redistest
