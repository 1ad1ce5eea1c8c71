package redis

import (
	"context"
	"testing"

	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
)

// A claim whose answer was lost (Redis went away after running it) leased
// a job nobody knows of. Its retry, with the same token, must hand out that
// job again, not lease a second one while the first waits out its lease.
func TestClaimAgainHandsOutTheJobALostAnswerLeased(t *testing.T) {
	client, prefix := redistest.New(t)
	q, err := NewQueue(client, "crawl-1", WithNamespace(prefix))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := q.Enqueue(ctx, &Job{ID: "a", URL: "http://shop.test/a"}, &Job{ID: "b", URL: "http://shop.test/b"}); err != nil {
		t.Fatal(err)
	}
	token := newToken()
	first, err := q.claim(ctx, scriptClaim, token) // its answer "never arrives"
	if err != nil {
		t.Fatal(err)
	}
	again, err := q.claim(ctx, scriptCollyClaimAgain, token)
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
	next, err := q.claim(ctx, scriptCollyClaimAgain, newToken())
	if err != nil || next.ID == first.ID {
		t.Fatalf("claim again with a fresh token: %v, %v; want the other job", next, err)
	}
	if st, _ := q.Stats(ctx); st.InFlight != 1 || st.Ready != 0 {
		t.Fatalf("stats %+v: want the other job in flight, nothing ready", st)
	}
}
