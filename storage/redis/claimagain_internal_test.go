package redis

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync/atomic"
	"testing"

	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
	goredis "github.com/redis/go-redis/v9"
)

// A claim whose answer was lost (Redis went away after running it) leased
// a job nobody knows of. Its retry, with the same token, must hand out that
// job again, not lease a second one while the first waits out its lease.
// With shards, the retry starts at the shard whose answer was lost.
func TestClaimAgainHandsOutTheJobALostAnswerLeased(t *testing.T) {
	for _, shards := range []int{1, 3} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) { testClaimAgain(t, shards) })
	}
}

func testClaimAgain(t *testing.T, shards int) {
	client, prefix := redistest.New(t)
	q, err := newQueue(client, "crawl-1", Config{Namespace: prefix, Shards: shards})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := q.Enqueue(ctx, &queueJob{ID: "a", URL: "http://shop.test/a"}, &queueJob{ID: "b", URL: "http://shop.test/b"}); err != nil {
		t.Fatal(err)
	}
	token, at := newToken(), -1
	first, err := q.claim(ctx, token, &at) // its answer "never arrives"
	if err != nil {
		t.Fatal(err)
	}
	again, err := q.claim(ctx, token, &at)
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != first.ID {
		t.Fatalf("the retry leased %s, want %s, which the lost answer had leased", again.ID, first.ID)
	}
	if err := q.Ack(ctx, again); err != nil {
		t.Fatalf("ack of the job handed out again: %v", err)
	}
	// With a token that holds nothing it claims as usual.
	at = -1
	next, err := q.claim(ctx, newToken(), &at)
	if err != nil || next.ID == first.ID {
		t.Fatalf("claim with a fresh token: %v, %v; want the other job", next, err)
	}
	if st, _ := q.Stats(ctx); st.InFlight != 1 || st.Ready != 0 {
		t.Fatalf("stats %+v: want the other job in flight, nothing ready", st)
	}
}

// dropFirstClaimReply is a go-redis hook that lets the first run of the
// claim script reach Redis and then loses its answer, as a connection cut
// after the command was sent does.
type dropFirstClaimReply struct {
	dropped atomic.Bool
}

func (*dropFirstClaimReply) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (*dropFirstClaimReply) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}

func (h *dropFirstClaimReply) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		err := next(ctx, cmd)
		args := cmd.Args()
		if err == nil && len(args) > 1 && fmt.Sprint(args[0]) == "evalsha" && args[1] == scriptClaim.Hash() && h.dropped.CompareAndSwap(false, true) {
			cmd.SetErr(io.EOF)
			return io.EOF
		}
		return err
	}
}

// The wiring, not the script alone: a CollyStorage whose first claim ran
// in Redis but whose answer was lost after go-redis had given up (the hook
// sits above its retries) must hand out the job that claim leased on its
// own retry, and lease nothing more.
func TestGetRequestRetriesALostClaimWithItsToken(t *testing.T) {
	client, prefix := redistest.New(t)
	hook := &dropFirstClaimReply{}
	client.AddHook(hook)
	requireOneJobAfterALostClaim(t, client, client, prefix, hook.dropped.Load)
}

// requireOneJobAfterALostClaim adds two jobs through a CollyStorage on
// client, has GetRequest claim one with the claim's answer lost (lost
// reports that it was), and requires that, read through admin, exactly
// one job be leased, the one handed out, and the other be ready.
func requireOneJobAfterALostClaim(t *testing.T, client, admin *goredis.Client, prefix string, lost func() bool) {
	t.Helper()
	cs, err := NewCollyStorage(client, "crawl-1", Config{Namespace: prefix})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ctx := context.Background()
	for _, u := range []string{"http://shop.test/a", "http://shop.test/b"} {
		if err := cs.AddRequest([]byte(fmt.Sprintf(`{"URL":%q,"Method":"GET"}`, u))); err != nil {
			t.Fatal(err)
		}
	}
	if err := scriptClaim.Load(ctx, client).Err(); err != nil { // so that the claim is one EVALSHA carrying the hash
		t.Fatal(err)
	}
	raw, err := cs.GetRequest()
	if err != nil {
		t.Fatalf("get request after a lost answer: %v", err)
	}
	if !lost() {
		t.Fatal("no claim answer was lost: the test proves nothing")
	}
	st, err := cs.q.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	leased, err := leasedJobs(ctx, admin, cs.q.shards[0][keyLeases])
	if err != nil {
		t.Fatal(err)
	}
	var sr struct{ URL string }
	if err := json.Unmarshal(raw, &sr); err != nil {
		t.Fatal(err)
	}
	id := idKey(requestID(sr.URL, nil))
	if st.InFlight != 1 || st.Ready != 1 || len(leased) != 1 {
		t.Fatalf("after one GetRequest: %+v, leases %v; want one job in flight (%s, handed out) and one ready (the retry leased another job)", st, leased, sr.URL)
	}
	if _, ok := leased[id]; !ok {
		t.Fatalf("GetRequest handed out %s (%s), but the job leased is %v", sr.URL, id, leased)
	}
}
