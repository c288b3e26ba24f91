// Command rwq-interop plays one role on a queue that Python and TypeScript programs share, for the
// interop tests (tests/test_interop_langs.py): rwq-interop ROLE REDIS_URL PREFIX, with the role's
// options as one JSON object on stdin and what it did as one JSON object on stdout (a worker
// first prints "ready" on a line of its own). Roles: produce, lease, clean, work, dead, schedule.
// It only maps JSON to the rwq package's calls; the Worker and the Scheduler are the package's own.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	rwq "github.com/rwq-protocol/rwq/go"
)

// options is every role's input; each role reads the fields it needs.
type options struct {
	Shards int `json:"shards"` // 0: a plain queue; n: profile sharded with n shards
	Items  []struct {
		ID      string `json:"id"`
		Data    []byte `json:"data"` // base64 in JSON
		DelayMs int64  `json:"delay_ms"`
	} `json:"items"`
	Policy      *rwq.RetryPolicy `json:"policy"`
	Count       int              `json:"count"`
	LeaseMs     int64            `json:"lease_ms"`
	BlockMs     int64            `json:"block_ms"`
	Complete    bool             `json:"complete"`
	Concurrency int              `json:"concurrency"`
	DoneKey     string           `json:"done_key"`
	HandlerMs   int64            `json:"handler_ms"`
	DeadlineMs  int64            `json:"deadline_ms"`
}

type leased struct {
	ID      string `json:"id"`
	Data    []byte `json:"data"`
	Attempt int64  `json:"attempt"`
}

type call struct {
	leased
	OK bool `json:"ok"`
}

func main() {
	if len(os.Args) != 4 {
		log.Fatal("usage: rwq-interop produce|lease|clean|work|dead|schedule REDIS_URL PREFIX < options.json")
	}
	role, url, prefix := os.Args[1], os.Args[2], os.Args[3]
	var opts options
	raw, err := io.ReadAll(os.Stdin)
	if err == nil {
		err = json.Unmarshal(raw, &opts)
	}
	if err != nil {
		log.Fatalf("bad options: %v", err)
	}
	ropts, err := rwq.ParseRedisURL(url)
	if err != nil {
		log.Fatal(err)
	}
	rdb := redis.NewUniversalClient(ropts)
	defer rdb.Close()
	var q rwq.WorkQueue
	if opts.Shards > 0 {
		q, err = rwq.NewSharded(rdb, prefix, opts.Shards, nil)
	} else {
		q, err = rwq.New(rdb, prefix, nil)
	}
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	var out any
	switch role {
	case "produce":
		out, err = produce(ctx, q, opts)
	case "lease":
		out, err = lease(ctx, q, opts)
	case "clean":
		out, err = clean(ctx, q)
	case "work":
		out, err = work(ctx, rdb, q, opts)
	case "dead":
		out, err = dead(ctx, q)
	case "schedule":
		out, err = schedule(ctx, q, opts)
	default:
		err = fmt.Errorf("unknown role %q", role)
	}
	if err != nil {
		log.Fatalf("%s: %v", role, err)
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		log.Fatal(err)
	}
}

// produce stores the policy, if given, then adds the items in order, each delayed by its delay_ms.
func produce(ctx context.Context, q rwq.WorkQueue, opts options) (map[string]any, error) {
	if opts.Policy != nil {
		if err := q.SetRetryPolicy(ctx, opts.Policy); err != nil {
			return nil, err
		}
	}
	added := []bool{}
	for _, it := range opts.Items {
		var ok bool
		var err error
		if it.DelayMs > 0 {
			ok, err = q.AddDelayed(ctx, it.ID, it.Data, it.DelayMs)
		} else {
			ok, err = q.Add(ctx, it.ID, it.Data)
		}
		if err != nil {
			return nil, err
		}
		added = append(added, ok)
	}
	return map[string]any{"added": added}, nil
}

// lease takes up to count items (waiting up to block_ms for each, if set) and completes them if
// asked; otherwise it exits holding them, as a crashed consumer would.
func lease(ctx context.Context, q rwq.WorkQueue, opts options) (map[string]any, error) {
	got, completed := []leased{}, []bool{}
	for i := 0; i < opts.Count; i++ {
		var l *rwq.Lease
		var err error
		if opts.BlockMs > 0 {
			l, err = q.LeaseBlocking(ctx, opts.LeaseMs, opts.BlockMs)
		} else {
			l, err = q.Lease(ctx, opts.LeaseMs)
		}
		if err != nil {
			return nil, err
		}
		if l == nil {
			break
		}
		got = append(got, leased{l.ID, l.Data, l.Attempt})
		if opts.Complete {
			done, err := q.CompleteOwned(ctx, *l)
			if err != nil {
				return nil, err
			}
			completed = append(completed, done)
		}
	}
	return map[string]any{"leased": got, "completed": completed}, nil
}

func clean(ctx context.Context, q rwq.WorkQueue) (map[string]any, error) {
	light, err := q.LightClean(ctx, 100)
	if err != nil {
		return nil, err
	}
	deep, err := q.DeepClean(ctx, 1000)
	if err != nil {
		return nil, err
	}
	for _, r := range []*rwq.CleanReport{&light, &deep} { // lists as [], never null
		r.Requeued, r.Dead = append([]string{}, r.Requeued...), append([]string{}, r.Dead...)
	}
	return map[string]any{"light": light, "deep": deep}, nil
}

// dead lists the dead items, each read again by id for its payload.
func dead(ctx context.Context, q rwq.WorkQueue) ([]rwq.DeadItem, error) {
	items, err := q.DeadItems(ctx, 0, 1000)
	for i := 0; err == nil && i < len(items); i++ {
		var one *rwq.DeadItem
		if one, err = q.DeadItem(ctx, items[i].ID); one != nil {
			items[i] = *one
		}
	}
	return items, err
}

// work runs the package's Worker (no light cleans of its own: recovering items is the cleaner's
// role) with a handler that fails ids "fail-*" always and "flaky-*" at their first attempt, until
// done_key exists and the queue holds nothing queued, processing or delayed.
func work(ctx context.Context, rdb redis.UniversalClient, q rwq.WorkQueue, opts options) (map[string]any, error) {
	calls := []call{}
	record := make(chan call, 1)
	handler := func(hctx context.Context, job *rwq.Job) error {
		if opts.HandlerMs > 0 {
			time.Sleep(time.Duration(opts.HandlerMs) * time.Millisecond)
		}
		ok := !strings.HasPrefix(job.ID, "fail-") && !(strings.HasPrefix(job.ID, "flaky-") && job.Attempt == 1)
		record <- call{leased{job.ID, job.Data, job.Attempt}, ok}
		if !ok {
			return fmt.Errorf("go handler failed %s at attempt %d", job.ID, job.Attempt)
		}
		return nil
	}
	w, err := rwq.NewWorker(q, handler, &rwq.WorkerOptions{
		Concurrency: max(opts.Concurrency, 1), LeaseMs: opts.LeaseMs, PollTimeoutMs: 100,
		CleanIntervalMs: -1, ShutdownGraceMs: 5000,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return nil, err
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	ran := make(chan error, 1)
	fmt.Println("ready")
	go func() { ran <- w.Run(runCtx) }()
	deadline := time.After(time.Duration(max(opts.DeadlineMs, 1000)) * time.Millisecond)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	timedOut := false
	for running := true; running; {
		select {
		case c := <-record:
			calls = append(calls, c)
		case err := <-ran:
			return nil, fmt.Errorf("the worker stopped by itself: %w", err)
		case <-deadline:
			timedOut, running = true, false
		case <-tick.C:
			n, err := rdb.Exists(ctx, opts.DoneKey).Result()
			if err != nil {
				return nil, err
			}
			counts, err := q.Counts(ctx)
			if err != nil {
				return nil, err
			}
			running = n == 0 || counts.Queued+counts.Processing+counts.Delayed > 0
		}
	}
	stop()
	for {
		select {
		case c := <-record:
			calls = append(calls, c)
		case err := <-ran:
			if err != nil && !errors.Is(err, context.Canceled) {
				return nil, err
			}
			return map[string]any{"calls": calls, "stats": w.Stats(), "timed_out": timedOut}, nil
		}
	}
}

// schedule runs the package's Scheduler for deadline_ms and reports the ids it fired, from its log.
func schedule(ctx context.Context, q rwq.WorkQueue, opts options) (map[string]any, error) {
	plain, ok := q.(*rwq.Queue)
	if !ok {
		return nil, errors.New("schedule needs a queue that is not sharded")
	}
	var logged bytes.Buffer
	s := rwq.NewScheduler(plain, &rwq.SchedulerOptions{Logger: slog.New(slog.NewJSONHandler(&logged, nil))})
	run, stop := context.WithTimeout(ctx, time.Duration(opts.DeadlineMs)*time.Millisecond)
	defer stop()
	if err := s.Run(run); err != nil {
		return nil, err
	}
	fired := []string{}
	for _, line := range bytes.Split(logged.Bytes(), []byte("\n")) {
		var record struct{ Msg, ID string }
		if json.Unmarshal(line, &record) == nil && record.Msg == "fired" {
			fired = append(fired, record.ID)
		}
	}
	return map[string]any{"fired": fired}, nil
}
