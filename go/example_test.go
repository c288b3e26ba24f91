package rwq_test

// These examples run as tests (go test) against the redis-server the package's tests start;
// REDIS_ADDR is its address. Without redis-server on PATH the tests fail and say so.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"

	"github.com/redis/go-redis/v9"
	rwq "github.com/rwq-protocol/rwq/go"
)

// quiet keeps the examples' output to what they print.
var quiet = slog.New(slog.NewTextHandler(discard{}, nil))

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// A producer adds an item; a consumer leases it, does the work and completes it.
func Example() {
	ctx := context.Background()
	// MaxRetries -1: a script call whose reply was lost must not be sent again (RWQ-FAIL-004).
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv("REDIS_ADDR"), MaxRetries: -1})
	defer rdb.Close()
	q, err := rwq.New(rdb, "example:emails", nil)
	if err != nil {
		panic(err)
	}

	added, err := q.Add(ctx, "welcome-42", []byte(`{"to": "ada@example.com"}`)) // idempotent by id
	fmt.Println("added:", added, err)
	again, _ := q.Add(ctx, "welcome-42", []byte(`{}`))
	fmt.Println("added again:", again)

	lease, err := q.LeaseBlocking(ctx, 30_000, 5_000) // a 30 s lease; wait up to 5 s for an item
	if err != nil || lease == nil {
		panic(fmt.Sprint("no item: ", err))
	}
	fmt.Printf("leased %s: %s\n", lease.ID, lease.Data)
	done, err := q.CompleteOwned(ctx, *lease) // ErrLeaseLost if another consumer took it over
	fmt.Println("completed:", done, err)
	// Output:
	// added: true <nil>
	// added again: false
	// leased welcome-42: {"to": "ada@example.com"}
	// completed: true <nil>
}

// A Worker runs a handler on every item, here until the queue is drained (Burst).
func ExampleWorker() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv("REDIS_ADDR"), MaxRetries: -1})
	defer rdb.Close()
	q, _ := rwq.New(rdb, "example:thumbnails", nil)
	for _, id := range []string{"img-1", "img-2", "img-3"} {
		q.Add(ctx, id, []byte("pixels of "+id))
	}

	var mu sync.Mutex
	var handled []string
	w, err := rwq.NewWorker(q, func(ctx context.Context, job *rwq.Job) error {
		mu.Lock()
		defer mu.Unlock()
		handled = append(handled, job.ID) // returning nil completes the item
		return nil
	}, &rwq.WorkerOptions{Concurrency: 2, Burst: true, Logger: quiet})
	if err != nil {
		panic(err)
	}
	if err := w.Run(ctx); err != nil { // a service runs until ctx is cancelled (SIGTERM)
		panic(err)
	}
	slices.Sort(handled)
	fmt.Println(handled, w.Stats())
	// Output: [img-1 img-2 img-3] {3 0 0 0}
}

// A handler steers what a failure does: NonRetryable dead-letters the item at once; RetryLater
// runs it again after a delay of its choice; any other error (or a panic) waits the backoff of
// the queue's retry policy, and dead-letters the item once its attempts are used up.
func ExampleNonRetryable() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv("REDIS_ADDR"), MaxRetries: -1})
	defer rdb.Close()
	q, _ := rwq.New(rdb, "example:invoices", nil)
	q.Add(ctx, "invoice-7", []byte(`{"amount": "twelve"}`))

	w, _ := rwq.NewWorker(q, func(ctx context.Context, job *rwq.Job) error {
		return rwq.NonRetryable(fmt.Errorf("invoice %s: amount is not a number", job.ID))
	}, &rwq.WorkerOptions{Burst: true, Logger: quiet})
	_ = w.Run(ctx)

	dead, _ := q.DeadItem(ctx, "invoice-7")
	fmt.Printf("%s after %d attempt: %s\n", dead.ID, dead.Attempts, dead.Reason)
	// Output: invoice-7 after 1 attempt: non-retryable: invoice invoice-7: amount is not a number
}

// Every error is an *rwq.Error with a SPEC code: test it with errors.Is against the sentinels,
// or errors.As for the details. Bad arguments fail before any I/O.
func ExampleError() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv("REDIS_ADDR"), MaxRetries: -1})
	defer rdb.Close()
	q, _ := rwq.New(rdb, "example:errors", nil)

	_, err := q.Lease(ctx, 0) // a lease of 0 ms
	var rerr *rwq.Error
	fmt.Println(errors.Is(err, rwq.ErrInvalidArgument), errors.As(err, &rerr) && rerr.Code == rwq.CodeInvalidArgument)

	rdb.Set(ctx, "example:errors:queue", "not a list", 0)
	_, err = q.Add(ctx, "a", nil)
	fmt.Println(errors.Is(err, rwq.ErrWrongType))
	// Output:
	// true true
	// true
}

// ParseRedisURL gives go-redis options with the settings rwq needs (MaxRetries -1);
// IsClusterMode makes NewUniversalClient a cluster client seeded by that one node.
func ExampleParseRedisURL() {
	opts, err := rwq.ParseRedisURL("redis://" + os.Getenv("REDIS_ADDR") + "/0?client_name=billing-worker")
	if err != nil {
		panic(err)
	}
	rdb := redis.NewUniversalClient(opts)
	defer rdb.Close()
	q, err := rwq.New(rdb, "example:url", nil)
	fmt.Println(q.Prefix(), err, opts.MaxRetries, opts.ClientName)
	// Output: example:url <nil> -1 billing-worker
}

// A queue bigger than one Redis node: 4 shards {example:big#0}..{example:big#3}; every client
// of the queue must use the same count.
func ExampleNewSharded() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv("REDIS_ADDR"), MaxRetries: -1})
	defer rdb.Close()
	s, _ := rwq.NewSharded(rdb, "example:big", 4, nil)
	for i := 0; i < 10; i++ {
		s.Add(ctx, fmt.Sprint("item-", i), nil)
	}
	counts, _ := s.Counts(ctx)
	fmt.Println(counts.Queued, len(s.Shards()))
	// Output: 10 4
}

// A consumer that pays one round trip per item: complete the item and lease the next together.
func ExampleQueue_CompleteOwnedAndLease() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv("REDIS_ADDR"), MaxRetries: -1})
	defer rdb.Close()
	q, _ := rwq.New(rdb, "example:pipeline", nil)
	q.AddMany(ctx, []rwq.Item{{ID: "a"}, {ID: "b"}, {ID: "c"}})

	next, err := q.Lease(ctx, 30_000)
	for err == nil && next != nil {
		fmt.Println("working on", next.ID)
		// The outcome is Done, Gone, or NotHolder (the lease was lost meanwhile: never an error).
		_, next, err = q.CompleteOwnedAndLease(ctx, *next, 30_000)
	}
	fmt.Println("drained, err:", err)
	// Output:
	// working on a
	// working on b
	// working on c
	// drained, err: <nil>
}
