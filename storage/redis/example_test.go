package redis_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/breakwater-crawl/breakwater/storage/redis"
	goredis "github.com/redis/go-redis/v9"
)

// A crawl's queue on the Redis at REDIS_URL (default the local one): three
// lanes, one failure that exhausts its single attempt, and the dead letter
// it leaves behind.
func Example() {
	ctx := context.Background()
	url := os.Getenv("REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379/0"
	}
	opts, err := goredis.ParseURL(url)
	if err != nil {
		fmt.Println(err)
		return
	}
	opts.ContextTimeoutEnabled = true // let deadlines cut a hung connection short
	client := goredis.NewClient(opts)
	defer client.Close()

	crawl := "example-" + strconv.Itoa(os.Getpid())
	q, err := redis.NewQueue(client, crawl, redis.WithNamespace("bwexample"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Del(ctx, q.Keys()...)

	_, err = q.Enqueue(ctx,
		&redis.Job{URL: "https://shop.example/sitemap-2019.xml", Lane: redis.Bulk},
		&redis.Job{URL: "https://shop.example/p/1"},
		&redis.Job{URL: "https://shop.example/p/7?restock", Lane: redis.Critical, MaxAttempts: 1},
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	for {
		job, err := q.Claim(ctx)
		var empty *redis.EmptyError
		if errors.As(err, &empty) {
			fmt.Println("drained:", empty.Drained())
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(job.Lane, job.URL)
		if job.Lane == redis.Critical {
			err = q.Fail(ctx, job, errors.New("HTTP 503"))
		} else {
			err = q.Ack(ctx, job)
		}
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	dead, err := q.Dead(ctx, 10)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range dead {
		fmt.Printf("dead: %s after %d attempt(s): %s\n", d.URL, d.Attempts, d.LastError)
	}
	// Output:
	// critical https://shop.example/p/7?restock
	// normal https://shop.example/p/1
	// bulk https://shop.example/sitemap-2019.xml
	// drained: true
	// dead: https://shop.example/p/7?restock after 1 attempt(s): HTTP 503
}
