package redis_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/breakwater-crawl/breakwater/storage/redis"
	"github.com/breakwater-crawl/breakwater/storage/redis/redistest"
	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
)

// A page that keeps failing ends in the crawl's dead letters, with its last
// error, for a person to decide on; the rest of the crawl completes.
func ExampleCollyStorage_DeadLetters() {
	ctx := context.Background()
	client, err := exampleClient()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/p/7" {
			http.Error(w, "restocking", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, `<a href="/p/1">1</a> <a href="/p/7">7</a>`)
	}))
	defer site.Close()
	crawl := "example-dead-" + strconv.Itoa(os.Getpid())
	defer redis.DeleteCrawl(ctx, client, "bwexample", crawl, 1)

	cs, err := redis.NewCollyStorage(client, crawl, redis.Config{Namespace: "bwexample", MaxAttempts: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()
	c := colly.NewCollector()
	cs.Register(c)
	q, _ := queue.New(1, cs)
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { q.AddURL(e.Request.AbsoluteURL(e.Attr("href"))) })
	c.OnScraped(func(r *colly.Response) { cs.Ack(r.Request) })
	c.OnError(func(r *colly.Response, err error) { cs.Fail(r.Request, err) })
	q.AddURL(site.URL + "/")
	if err := q.Run(c); err != nil {
		fmt.Println(err)
		return
	}

	st, err := cs.Stats(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("pending:", st.Pending(), "dead:", st.Dead)
	dead, err := cs.DeadLetters(ctx, 10)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range dead {
		fmt.Printf("dead: %s after %d attempt(s): %s\n", strings.TrimPrefix(d.URL, site.URL), d.Attempts, d.LastError)
	}
	// Output:
	// pending: 0 dead: 1
	// dead: /p/7 after 1 attempt(s): Service Unavailable
}

// The queue under CollyStorage: one failure that exhausts its single
// attempt, and the dead letter it leaves behind.
func TestQueueDeadLetter(t *testing.T) {
	ctx := context.Background()
	client, ns := redistest.New(t)
	q, err := redis.NewQueue(client, "lanes", redis.Config{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	_, err = q.Enqueue(ctx,
		&redis.Job{ID: "a", URL: "https://shop.example/p/1"},
		&redis.Job{ID: "b", URL: "https://shop.example/p/7?restock", MaxAttempts: 1},
	)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		job, err := q.Claim(ctx)
		var empty *redis.EmptyError
		if errors.As(err, &empty) {
			got = append(got, fmt.Sprint("drained: ", empty.Drained()))
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, job.URL)
		if job.MaxAttempts == 1 {
			err = q.Fail(ctx, job, errors.New("HTTP 503"))
		} else {
			err = q.Ack(ctx, job)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	dead, err := q.Dead(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dead {
		got = append(got, fmt.Sprintf("dead: %s after %d attempt(s): %s", d.URL, d.Attempts, d.LastError))
	}
	want := []string{
		"https://shop.example/p/1",
		"https://shop.example/p/7?restock",
		"drained: true",
		"dead: https://shop.example/p/7?restock after 1 attempt(s): HTTP 503",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
