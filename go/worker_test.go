package rwq

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The Worker's tests, against the real redis-server of TestMain; each is bounded in time.

// syncBuffer is a log sink the worker's goroutines may write to at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// events collects a worker's events and lets a test wait for one.
type events struct {
	mu     sync.Mutex
	all    []WorkerEvent
	cursor int // next waits after the event it returned last
}

func newEvents() *events { return &events{} }

func (e *events) on(ev WorkerEvent) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

// next returns the first event of kind (for id, if given) after the one next returned last,
// waiting for it at most within, or fails the test.
func (e *events) next(t *testing.T, kind EventKind, id string, within time.Duration) WorkerEvent {
	t.Helper()
	return e.find(t, kind, id, within, true)
}

// any returns the first event of kind (for id, if given) whenever it came, waiting at most within.
func (e *events) any(t *testing.T, kind EventKind, id string, within time.Duration) WorkerEvent {
	t.Helper()
	return e.find(t, kind, id, within, false)
}

func (e *events) find(t *testing.T, kind EventKind, id string, within time.Duration, ordered bool) WorkerEvent {
	t.Helper()
	for deadline := time.Now().Add(within); ; time.Sleep(5 * time.Millisecond) {
		e.mu.Lock()
		from := 0
		if ordered {
			from = e.cursor
		}
		for i := from; i < len(e.all); i++ {
			if ev := e.all[i]; ev.Kind == kind && (id == "" || ev.ID == id) {
				if ordered {
					e.cursor = i + 1
				}
				e.mu.Unlock()
				return ev
			}
		}
		e.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("no %s event for %q within %v", kind, id, within)
		}
	}
}

func (e *events) count(kind EventKind) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, ev := range e.all {
		if ev.Kind == kind {
			n++
		}
	}
	return n
}

// started runs w until the returned stop is called; stop cancels Run's context and waits, at
// most 10 s, for Run to return, which it asserts is nil.
func started(t *testing.T, w *Worker) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Errorf("Run did not return within 10 s of its context's end")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// burst runs w (Burst set) to the end, at most 10 s.
func burst(t *testing.T, w *Worker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatal("the burst worker did not stop by itself within 10 s")
	}
}

func quietLog() (*slog.Logger, *syncBuffer) {
	buf := &syncBuffer{}
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

func addItems(t *testing.T, q WorkQueue, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if ok := must[bool](t)(q.Add(ctx, id, []byte("payload of "+id))); !ok {
			t.Fatalf("%s not added", id)
		}
	}
}

// dueIn is how long until the delayed item id is due, by the server's clock.
func dueIn(t *testing.T, rdb *redis.Client, q *Queue, id string) time.Duration {
	t.Helper()
	score := must[float64](t)(rdb.ZScore(ctx, q.Prefix()+":delayed", id).Result())
	now := must[time.Time](t)(rdb.Time(ctx).Result())
	return time.Duration(int64(score)-now.UnixMilli()) * time.Millisecond
}

func testPolicy(maxAttempts, baseMs int64) *RetryPolicy {
	return &RetryPolicy{MaxAttempts: maxAttempts, Backoff: BackoffFixed, BaseMs: baseMs, DeadMaxCount: 100, DeadMaxAgeMs: 3_600_000}
}

func TestWorkerCompletesEveryItemWithinItsConcurrency(t *testing.T) {
	q, _ := newQueue(t, nil)
	ids := make([]string, 12)
	for i := range ids {
		ids[i] = fmt.Sprint("item-", i)
	}
	addItems(t, q, ids...)
	var now, most atomic.Int64
	seen := sync.Map{}
	log, _ := quietLog()
	ev := newEvents()
	w := must[*Worker](t)(NewWorker(q, func(ctx context.Context, job *Job) error {
		n := now.Add(1)
		defer now.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		if string(job.Data) != "payload of "+job.ID {
			return fmt.Errorf("payload %q", job.Data)
		}
		if _, again := seen.LoadOrStore(job.ID, true); again {
			return fmt.Errorf("%s handled twice", job.ID)
		}
		time.Sleep(40 * time.Millisecond)
		return nil
	}, &WorkerOptions{Concurrency: 3, Burst: true, Logger: log, OnEvent: ev.on}))
	burst(t, w)
	if got := w.Stats(); got != (WorkerStats{Completed: 12}) {
		t.Fatalf("stats %+v, want 12 completed", got)
	}
	if m := most.Load(); m != 3 {
		t.Fatalf("at most %d handlers ran at once, want exactly Concurrency 3", m)
	}
	if c := must[Counts](t)(q.Counts(ctx)); c != (Counts{}) {
		t.Fatalf("counts after the drain: %+v", c)
	}
	if ev.count(EventLeased) != 12 || ev.count(EventCompleted) != 12 {
		t.Fatalf("events: %d leased, %d completed", ev.count(EventLeased), ev.count(EventCompleted))
	}
	if err := w.Run(ctx); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a second Run: %v, want INVALID_ARGUMENT", err)
	}
}

func TestWorkerOnAShardedQueue(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: standaloneAddr, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	s := must[*ShardedQueue](t)(NewSharded(rdb, "wsharded", 4, nil))
	addItems(t, s, "a", "b", "c", "d", "e", "f", "g", "h")
	var handled atomic.Int64
	log, _ := quietLog()
	w := must[*Worker](t)(NewWorker(s, func(context.Context, *Job) error { handled.Add(1); return nil },
		&WorkerOptions{Concurrency: 2, Burst: true, Logger: log}))
	burst(t, w)
	if handled.Load() != 8 || w.Stats().Completed != 8 {
		t.Fatalf("handled %d, stats %+v", handled.Load(), w.Stats())
	}
	if c := must[Counts](t)(s.Counts(ctx)); c != (Counts{}) {
		t.Fatalf("counts: %+v", c)
	}
}

// A handler running longer than its lease keeps the item: the worker renews it, so no light clean
// requeues it and no other consumer gets it.
func TestWorkerRenewsTheLeaseWhileTheHandlerRuns(t *testing.T) {
	q, rdb := newQueue(t, nil)
	addItems(t, q, "long")
	log, _ := quietLog()
	ev := newEvents()
	w := must[*Worker](t)(NewWorker(q, func(ctx context.Context, job *Job) error {
		select {
		case <-time.After(900 * time.Millisecond):
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}, &WorkerOptions{LeaseMs: 300, RenewIntervalMs: 80, CleanIntervalMs: -1, PollTimeoutMs: 100, Logger: log, OnEvent: ev.on}))
	stop := started(t, w)
	ev.next(t, EventLeased, "long", 5*time.Second)
	time.Sleep(600 * time.Millisecond) // twice the lease
	other := must[*Queue](t)(New(rdb, q.Prefix(), nil))
	if r := must[CleanReport](t)(other.LightClean(ctx, 100)); len(r.Requeued) != 0 {
		t.Fatalf("a light clean requeued %v: the lease was not renewed", r.Requeued)
	}
	if l := must[*Lease](t)(other.Lease(ctx, 1000)); l != nil {
		t.Fatalf("another consumer leased %s", l.ID)
	}
	ev.next(t, EventCompleted, "long", 5*time.Second)
	stop()
	if got := w.Stats(); got != (WorkerStats{Completed: 1}) {
		t.Fatalf("stats %+v", got)
	}
}

// With no policy on the queue, the worker stores its own; a failing item is retried after the
// policy's backoff and dead-lettered once its attempts are used up, reason and detail kept.
func TestWorkerStoresItsPolicyRetriesWithBackoffThenDeadLetters(t *testing.T) {
	q, _ := newQueue(t, nil)
	addItems(t, q, "bad")
	log, _ := quietLog()
	ev := newEvents()
	policy := testPolicy(3, 150)
	var attempts []int64
	var mu sync.Mutex
	w := must[*Worker](t)(NewWorker(q, func(ctx context.Context, job *Job) error {
		mu.Lock()
		attempts = append(attempts, job.Attempt)
		mu.Unlock()
		return fmt.Errorf("boom on attempt %d", job.Attempt)
	}, &WorkerOptions{Retry: policy, PollTimeoutMs: 50, Logger: log, OnEvent: ev.on}))
	started(t, w)
	ev.next(t, EventFailed, "bad", 5*time.Second)
	failedAt := time.Now()
	ev.next(t, EventLeased, "bad", 5*time.Second)
	if gap := time.Since(failedAt); gap < 100*time.Millisecond {
		t.Fatalf("retried %v after the failure, before the policy's 150 ms backoff", gap)
	}
	dead := ev.next(t, EventDead, "bad", 5*time.Second)
	if dead.Attempt != 3 || dead.Err == nil {
		t.Fatalf("dead event %+v", dead)
	}
	if stored := must[*RetryPolicy](t)(q.RetryPolicy(ctx)); stored == nil || *stored != *policy {
		t.Fatalf("stored policy %v, want the worker's %v", stored, policy)
	}
	d := must[*DeadItem](t)(q.DeadItem(ctx, "bad"))
	if d == nil || d.Attempts != 3 || d.Reason != "boom on attempt 3" || !strings.Contains(d.Detail, "boom on attempt 3") {
		t.Fatalf("dead item %+v", d)
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(attempts) != "[1 2 3]" {
		t.Fatalf("attempts %v", attempts)
	}
	if s := w.Stats(); s.Failed != 3 || s.Completed != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// On a queue with no policy (and NoRetryPolicy), a failure waits the fallback delay, and a
// RetryLater asking for less is raised to it (RWQ-WORKER-002).
func TestWorkerWithoutPolicyWaitsTheFallbackDelay(t *testing.T) {
	q, rdb := newQueue(t, nil)
	addItems(t, q, "plain", "soon")
	log, logged := quietLog()
	ev := newEvents()
	w := must[*Worker](t)(NewWorker(q, func(ctx context.Context, job *Job) error {
		if job.ID == "soon" {
			return RetryLater(10, errors.New("not yet"))
		}
		return errors.New("boom")
	}, &WorkerOptions{NoRetryPolicy: true, Concurrency: 2, PollTimeoutMs: 50, Logger: log, OnEvent: ev.on}))
	stop := started(t, w)
	ev.next(t, EventFailed, "", 5*time.Second)
	ev.next(t, EventFailed, "", 5*time.Second)
	stop()
	for _, id := range []string{"plain", "soon"} {
		if d := dueIn(t, rdb, q, id); d < 700*time.Millisecond || d > FallbackDelayMs*time.Millisecond {
			t.Fatalf("%s is due in %v, want about the fallback %d ms", id, d, FallbackDelayMs)
		}
	}
	if p := must[*RetryPolicy](t)(q.RetryPolicy(ctx)); p != nil {
		t.Fatalf("NoRetryPolicy stored %v", p)
	}
	if !strings.Contains(logged.String(), "RWQ-WORKER-002") {
		t.Fatalf("the raised delay was not logged:\n%s", logged)
	}
}

// With a policy, RetryLater's delay is kept, and NonRetryable dead-letters at the first attempt.
func TestWorkerRetryLaterAndNonRetryable(t *testing.T) {
	q, rdb := newQueue(t, nil)
	addItems(t, q, "later", "never")
	log, _ := quietLog()
	ev := newEvents()
	w := must[*Worker](t)(NewWorker(q, func(ctx context.Context, job *Job) error {
		if job.ID == "later" {
			return fmt.Errorf("wrapped: %w", RetryLater(400, errors.New("rate limited")))
		}
		return NonRetryable(errors.New("bad input"))
	}, &WorkerOptions{Retry: testPolicy(5, 10_000), Concurrency: 2, PollTimeoutMs: 50, Logger: log, OnEvent: ev.on}))
	stop := started(t, w)
	ev.any(t, EventFailed, "later", 5*time.Second)
	if d := dueIn(t, rdb, q, "later"); d < 250*time.Millisecond || d > 400*time.Millisecond {
		t.Fatalf("later is due in %v, want the 400 ms it asked (not the policy's 10 s)", d)
	}
	dead := ev.any(t, EventDead, "never", 5*time.Second)
	stop()
	if dead.Attempt != 1 {
		t.Fatalf("dead at attempt %d, want 1", dead.Attempt)
	}
	d := must[*DeadItem](t)(q.DeadItem(ctx, "never"))
	if d == nil || d.Reason != "non-retryable: bad input" {
		t.Fatalf("dead item %+v", d)
	}
}

// A handler's panic fails its item, the panic text as reason and its stack as detail.
func TestWorkerRecoversHandlerPanics(t *testing.T) {
	q, _ := newQueue(t, nil)
	addItems(t, q, "p", "fine")
	log, _ := quietLog()
	w := must[*Worker](t)(NewWorker(q, func(ctx context.Context, job *Job) error {
		if job.ID == "p" {
			panic("kaboom")
		}
		return nil
	}, &WorkerOptions{Retry: testPolicy(1, 1000), Burst: true, Logger: log}))
	burst(t, w)
	if s := w.Stats(); s != (WorkerStats{Completed: 1, Failed: 1}) {
		t.Fatalf("stats %+v", s)
	}
	d := must[*DeadItem](t)(q.DeadItem(ctx, "p"))
	if d == nil || d.Reason != "panic: kaboom" || !strings.Contains(d.Detail, "worker_test.go") || !strings.Contains(d.Detail, "goroutine") {
		t.Fatalf("dead item %+v", d)
	}
}

// A handler past TimeoutMs has its context ended (cause ErrHandlerTimeout) and its item failed.
func TestWorkerTimesOutAHandler(t *testing.T) {
	q, _ := newQueue(t, nil)
	addItems(t, q, "slow")
	log, _ := quietLog()
	cause := make(chan error, 1)
	w := must[*Worker](t)(NewWorker(q, func(ctx context.Context, job *Job) error {
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return nil // ignored: the item is failed
	}, &WorkerOptions{Retry: testPolicy(1, 1000), TimeoutMs: 100, Burst: true, Logger: log}))
	start := time.Now()
	burst(t, w)
	if !errors.Is(<-cause, ErrHandlerTimeout) {
		t.Fatal("the handler's context did not end with ErrHandlerTimeout")
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("took %v", took)
	}
	d := must[*DeadItem](t)(q.DeadItem(ctx, "slow"))
	if d == nil || !strings.Contains(d.Reason, "timeout") {
		t.Fatalf("dead item %+v", d)
	}
	if s := w.Stats(); s != (WorkerStats{Failed: 1}) {
		t.Fatalf("stats %+v", s)
	}
}

// A stop lets a running handler finish within the grace period, and leases nothing more.
func TestWorkerStopLetsRunningHandlersFinish(t *testing.T) {
	q, _ := newQueue(t, nil)
	addItems(t, q, "first", "second")
	log, _ := quietLog()
	ev := newEvents()
	w := must[*Worker](t)(NewWorker(q, func(ctx context.Context, job *Job) error {
		time.Sleep(300 * time.Millisecond)
		return ctx.Err()
	}, &WorkerOptions{ShutdownGraceMs: 5000, PollTimeoutMs: 50, Logger: log, OnEvent: ev.on}))
	stop := started(t, w)
	ev.next(t, EventLeased, "first", 5*time.Second)
	stop()
	if s := w.Stats(); s != (WorkerStats{Completed: 1}) {
		t.Fatalf("stats %+v", s)
	}
	if c := must[Counts](t)(q.Counts(ctx)); c != (Counts{Queued: 1}) {
		t.Fatalf("counts %+v: the second item must stay queued", c)
	}
}

// A handler still running when the grace period ends has its context ended (ErrWorkerStopped) and
// its item given back with the attempt refunded (RWQ-WORKER-004).
func TestWorkerStopGivesBackUnfinishedItemsWithRefund(t *testing.T) {
	q, _ := newQueue(t, nil)
	addItems(t, q, "stuck")
	log, _ := quietLog()
	ev := newEvents()
	cause := make(chan error, 1)
	w := must[*Worker](t)(NewWorker(q, func(ctx context.Context, job *Job) error {
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return ctx.Err()
	}, &WorkerOptions{Retry: testPolicy(2, 1000), ShutdownGraceMs: 100, PollTimeoutMs: 50, Logger: log, OnEvent: ev.on}))
	stop := started(t, w)
	leased := ev.next(t, EventLeased, "stuck", 5*time.Second)
	start := time.Now()
	stop()
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("the stop took %v with a 100 ms grace period", took)
	}
	if !errors.Is(<-cause, ErrWorkerStopped) {
		t.Fatal("the handler's context did not end with ErrWorkerStopped")
	}
	if s := w.Stats(); s != (WorkerStats{Released: 1}) {
		t.Fatalf("stats %+v", s)
	}
	if c := must[Counts](t)(q.Counts(ctx)); c != (Counts{Queued: 1}) {
		t.Fatalf("counts %+v", c)
	}
	again := must[*Lease](t)(q.Lease(ctx, 1000))
	if leased.Attempt != 1 || again == nil || again.Attempt != 1 {
		t.Fatalf("attempts: %d, then %v: the given-back attempt was not refunded", leased.Attempt, again)
	}
}

// The worker's light clean brings back the item of a consumer that died holding it.
func TestWorkerLightCleanBringsBackAbandonedItems(t *testing.T) {
	q, rdb := newQueue(t, nil)
	addItems(t, q, "orphan")
	crashed := must[*Queue](t)(New(rdb, q.Prefix(), nil))
	if l := must[*Lease](t)(crashed.Lease(ctx, 50)); l == nil {
		t.Fatal("nothing leased")
	}
	log, _ := quietLog()
	ev := newEvents()
	w := must[*Worker](t)(NewWorker(q, func(context.Context, *Job) error { return nil },
		&WorkerOptions{CleanIntervalMs: 100, PollTimeoutMs: 50, Logger: log, OnEvent: ev.on}))
	started(t, w)
	ev.next(t, EventCompleted, "orphan", 5*time.Second)
}

// A lease found lost by the renewer ends the handler's context with ErrLeaseLost; the item is
// not settled by this worker.
func TestWorkerLostLeaseEndsTheHandlersContext(t *testing.T) {
	q, rdb := newQueue(t, nil)
	addItems(t, q, "taken")
	log, _ := quietLog()
	ev := newEvents()
	cause := make(chan error, 1)
	w := must[*Worker](t)(NewWorker(q, func(ctx context.Context, job *Job) error {
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return nil
	}, &WorkerOptions{LeaseMs: 1000, RenewIntervalMs: 50, PollTimeoutMs: 50, CleanIntervalMs: -1, Logger: log, OnEvent: ev.on}))
	stop := started(t, w)
	ev.next(t, EventLeased, "taken", 5*time.Second)
	other := must[*Queue](t)(New(rdb, q.Prefix(), nil))
	if ok := must[bool](t)(other.Complete(ctx, "taken")); !ok {
		t.Fatal("completing by id failed")
	}
	ev.next(t, EventLost, "taken", 5*time.Second)
	stop()
	if !errors.Is(<-cause, ErrLeaseLost) {
		t.Fatal("the handler's context did not end with ErrLeaseLost")
	}
	if s := w.Stats(); s != (WorkerStats{Lost: 1}) {
		t.Fatalf("stats %+v", s)
	}
}

// An operator's stored policy is kept, with one warning naming the command that changes it.
func TestWorkerKeepsTheStoredPolicy(t *testing.T) {
	q, _ := newQueue(t, nil)
	operator := testPolicy(7, 2000)
	if err := q.SetRetryPolicy(ctx, operator); err != nil {
		t.Fatal(err)
	}
	log, logged := quietLog()
	w := must[*Worker](t)(NewWorker(q, func(context.Context, *Job) error { return nil },
		&WorkerOptions{Retry: testPolicy(2, 10), Burst: true, Logger: log}))
	burst(t, w)
	if p := must[*RetryPolicy](t)(q.RetryPolicy(ctx)); p == nil || *p != *operator {
		t.Fatalf("policy %v, want the operator's %v", p, operator)
	}
	if out := logged.String(); !strings.Contains(out, "RWQ-WORKER-003") || !strings.Contains(out, "rwq policy set --prefix "+q.Prefix()) {
		t.Fatalf("no RWQ-WORKER-003 warning:\n%s", out)
	}
}

// A worker whose ACL user may only read the policy refuses to start on a queue without one,
// naming the admin command, and writes nothing (RWQ-WORKER-001).
func TestWorkerRefusesToStartWithoutAPolicyItMayNotStore(t *testing.T) {
	admin := redis.NewClient(&redis.Options{Addr: standaloneAddr, MaxRetries: -1})
	t.Cleanup(func() { admin.Close() })
	prefix := "wnoperm"
	client := roleClient(t, admin, "worker", prefix, specRoles(t)["worker"])
	q := must[*Queue](t)(New(client, prefix, nil))
	log, _ := quietLog()
	w := must[*Worker](t)(NewWorker(q, func(context.Context, *Job) error { return nil }, &WorkerOptions{Burst: true, Logger: log}))
	err := w.Run(ctx)
	if !errors.Is(err, ErrPolicyMissing) || !strings.Contains(err.Error(), "rwq policy set --prefix wnoperm") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Run: %v", err)
	}
	if keys := must[[]string](t)(admin.Keys(ctx, prefix+":*").Result()); len(keys) != 0 {
		t.Fatalf("wrote %v", keys)
	}
	// Without a policy, by choice, it runs.
	w = must[*Worker](t)(NewWorker(q, func(context.Context, *Job) error { return nil }, &WorkerOptions{NoRetryPolicy: true, Burst: true, Logger: log}))
	burst(t, w)
}

func TestNewWorkerRefusesBadOptionsBeforeAnyIO(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer rdb.Close()
	q := must[*Queue](t)(New(rdb, "jobs", nil))
	ok := func(context.Context, *Job) error { return nil }
	for name, o := range map[string]*WorkerOptions{
		"concurrency":      {Concurrency: -1},
		"too many":         {Concurrency: MaxWorkerConcurrency + 1},
		"lease":            {LeaseMs: 1},
		"renew >= lease":   {LeaseMs: 1000, RenewIntervalMs: 1000},
		"timeout":          {TimeoutMs: -5},
		"policy":           {Retry: &RetryPolicy{Backoff: "linear"}},
		"policy and none":  {Retry: testPolicy(1, 1), NoRetryPolicy: true},
		"poll":             {PollTimeoutMs: -1},
		"clean too seldom": {CleanIntervalMs: MaxDurationMs + 1},
	} {
		if _, err := NewWorker(q, ok, o); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: %v, want INVALID_ARGUMENT", name, err)
		}
	}
	if _, err := NewWorker(nil, ok, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("nil queue: %v", err)
	}
	if _, err := NewWorker(q, nil, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("nil handler: %v", err)
	}
}

func TestHandlerErrorsWorkWithErrorsIsAndAs(t *testing.T) {
	base := errors.New("base")
	var nr *NonRetryableError
	var rl *RetryLaterError
	if err := fmt.Errorf("ctx: %w", NonRetryable(base)); !errors.As(err, &nr) || !errors.Is(err, base) {
		t.Fatal("NonRetryable")
	}
	if err := RetryLater(5, base); !errors.As(err, &rl) || rl.DelayMs != 5 || !errors.Is(err, base) {
		t.Fatal("RetryLater")
	}
	if head("héllo", 2) != "h" || tail(strings.Repeat("é", 10), 9) != "...\n"+"éé" {
		t.Fatalf("cuts: %q %q", head("héllo", 2), tail(strings.Repeat("é", 10), 9))
	}
}

// One worker never runs an id twice at once: an item that timed out here and came back (its
// retry due) while its first run still goes on waits, lease renewed, until that run returns.
func TestWorkerNeverRunsAnIDTwiceAtOnce(t *testing.T) {
	q, _ := newQueue(t, nil)
	addItems(t, q, "stubborn")
	log, logged := quietLog()
	ev := newEvents()
	var running, overlaps, runs atomic.Int64
	w := must[*Worker](t)(NewWorker(q, func(ctx context.Context, job *Job) error {
		if running.Add(1) > 1 {
			overlaps.Add(1)
		}
		defer running.Add(-1)
		if runs.Add(1) == 1 {
			time.Sleep(700 * time.Millisecond) // ignores its context: runs on past its timeout
		}
		return nil
	}, &WorkerOptions{Retry: testPolicy(3, 50), TimeoutMs: 150, Concurrency: 2, PollTimeoutMs: 50, Logger: log, OnEvent: ev.on}))
	stop := started(t, w)
	ev.next(t, EventFailed, "stubborn", 5*time.Second) // the timeout
	ev.next(t, EventCompleted, "stubborn", 5*time.Second)
	stop()
	if overlaps.Load() != 0 || runs.Load() != 2 {
		t.Fatalf("%d runs, %d overlapping", runs.Load(), overlaps.Load())
	}
	if !strings.Contains(logged.String(), "leased again while an earlier run") {
		t.Fatalf("the second lease did not wait for the first run:\n%s", logged)
	}
	if s := w.Stats(); s != (WorkerStats{Completed: 1, Failed: 1}) {
		t.Fatalf("stats %+v", s)
	}
}

// runUntil runs w in the background; cancel ends Run's context, and wait waits (at most 10 s)
// for Run to return nil. Unlike started, cancel does not wait, so a test can act during the stop.
func runUntil(t *testing.T, w *Worker) (cancel func(), wait func()) {
	t.Helper()
	c, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(c) }()
	var once sync.Once
	wait = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Errorf("Run did not return within 10 s of its context's end")
			}
		})
	}
	t.Cleanup(wait)
	return cancel, wait
}

// During the grace period the renewer keeps renewing: a handler running past LeaseMs after the
// stop keeps its lease, so no other worker runs the item meanwhile (red-team mutant
// go_worker_renewals_stop_at_stop: the renewer ended at the stop).
func TestWorkerRenewsLeasesDuringTheGracePeriod(t *testing.T) {
	q, rdb := newQueue(t, nil)
	addItems(t, q, "slow")
	log, _ := quietLog()
	ev := newEvents()
	w := must[*Worker](t)(NewWorker(q, func(ctx context.Context, job *Job) error {
		select {
		case <-time.After(1000 * time.Millisecond):
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}, &WorkerOptions{LeaseMs: 300, RenewIntervalMs: 100, ShutdownGraceMs: 2000, CleanIntervalMs: -1,
		PollTimeoutMs: 50, Logger: log, OnEvent: ev.on}))
	cancel, wait := runUntil(t, w)
	ev.next(t, EventLeased, "slow", 5*time.Second)
	time.Sleep(50 * time.Millisecond)
	cancel()
	time.Sleep(550 * time.Millisecond) // 600 ms after the lease: twice LeaseMs
	if n := must[int64](t)(rdb.Exists(ctx, q.Prefix()+":lease:slow").Result()); n != 1 {
		t.Fatal("the lease expired during the grace period: the renewer stopped at the stop")
	}
	other := must[*Queue](t)(New(rdb, q.Prefix(), nil))
	if r := must[CleanReport](t)(other.LightClean(ctx, 100)); len(r.Requeued) != 0 {
		t.Fatalf("a light clean requeued %v during the grace period", r.Requeued)
	}
	wait()
	if s := w.Stats(); s != (WorkerStats{Completed: 1}) {
		t.Fatalf("stats %+v", s)
	}
}

// A handler that returns nil while the worker stops, after its lease was lost and another
// consumer leased the item, must not complete it: the settle completes as the lease holder only,
// and the worker counts the item lost (red-team mutant go_worker_completes_by_id_at_stop: a
// completion by id there completed the other consumer's item).
func TestWorkerAtStopDoesNotCompleteAnItemItLost(t *testing.T) {
	q, rdb := newQueue(t, nil)
	addItems(t, q, "moved")
	log, _ := quietLog()
	ev := newEvents()
	release := make(chan struct{})
	// Renewals every 5 s: none comes while the test moves the item, so the handler runs on and
	// returns nil rather than having its context ended by a renewal that finds the lease lost.
	w := must[*Worker](t)(NewWorker(q, func(ctx context.Context, job *Job) error {
		<-release
		return nil
	}, &WorkerOptions{LeaseMs: 10_000, RenewIntervalMs: 5_000, ShutdownGraceMs: 5_000, CleanIntervalMs: -1,
		PollTimeoutMs: 50, Logger: log, OnEvent: ev.on}))
	cancel, wait := runUntil(t, w)
	defer close(release)
	ev.next(t, EventLeased, "moved", 5*time.Second)
	// The lease ends (as if expired), a light clean requeues the item, another consumer leases it.
	must[int64](t)(rdb.Del(ctx, q.Prefix()+":lease:moved").Result())
	other := must[*Queue](t)(New(rdb, q.Prefix(), nil))
	if r := must[CleanReport](t)(other.LightClean(ctx, 100)); len(r.Requeued) != 1 {
		t.Fatalf("the light clean requeued %v, not the item", r.Requeued)
	}
	theirs := must[*Lease](t)(other.Lease(ctx, 10_000))
	if theirs == nil || theirs.ID != "moved" {
		t.Fatalf("the other consumer leased %v", theirs)
	}
	cancel()
	for deadline := time.Now().Add(5 * time.Second); !w.isStopping(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the worker did not start stopping")
		}
	}
	release <- struct{}{} // the handler returns nil while the worker stops
	wait()                // Run returns once the item is settled
	if ok, err := other.CompleteOwned(ctx, *theirs); !ok || err != nil {
		t.Fatalf("the other consumer's lease is gone (%v): the stopping worker completed the item it had lost", err)
	}
	if s := w.Stats(); s != (WorkerStats{Lost: 1}) {
		t.Fatalf("stats %+v", s)
	}
	ev.any(t, EventLost, "moved", time.Second)
}

// breaker is a TCP proxy to the test server that can break one request: once armed, the next
// bytes a client sends close that connection instead of reaching Redis (a network blip).
type breaker struct {
	l     net.Listener
	armed atomic.Bool
	broke chan struct{}
	mu    sync.Mutex
	conns []net.Conn
}

func newBreaker(t *testing.T) *breaker {
	t.Helper()
	l := must[net.Listener](t)(net.Listen("tcp", "127.0.0.1:0"))
	b := &breaker{l: l, broke: make(chan struct{}, 1)}
	t.Cleanup(func() {
		l.Close()
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, c := range b.conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", standaloneAddr)
			if err != nil {
				c.Close()
				continue
			}
			b.mu.Lock()
			b.conns = append(b.conns, c, s)
			b.mu.Unlock()
			go func() { defer c.Close(); defer s.Close(); _, _ = io.Copy(c, s) }()
			go func() {
				defer c.Close()
				defer s.Close()
				buf := make([]byte, 32<<10)
				for {
					n, err := c.Read(buf)
					if n > 0 && b.armed.CompareAndSwap(true, false) {
						b.broke <- struct{}{}
						return
					}
					if n > 0 {
						if _, werr := s.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return b
}

// One failed renewal round trip (a connection broken mid-request) is logged and retried at the
// next interval; the leases are still held, so no handler is cancelled and nothing is lost
// (red-team mutant go_worker_renew_error_cancels_all: every handler was cancelled with
// ErrLeaseLost).
func TestWorkerKeepsHandlersRunningAfterAFailedRenewal(t *testing.T) {
	b := newBreaker(t)
	rdb := redis.NewClient(&redis.Options{Addr: b.l.Addr().String(), MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	queueSeq++
	q := must[*Queue](t)(New(rdb, fmt.Sprintf("test%d-%s", queueSeq, t.Name()), nil))
	addItems(t, q, "a", "b")
	log, logs := quietLog()
	ev := newEvents()
	release := make(chan struct{})
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	defer free()
	causes := make(chan error, 2)
	w := must[*Worker](t)(NewWorker(q, func(ctx context.Context, job *Job) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			causes <- context.Cause(ctx)
			return ctx.Err()
		}
	}, &WorkerOptions{Concurrency: 2, LeaseMs: 1000, RenewIntervalMs: 100, ShutdownGraceMs: 200, CleanIntervalMs: -1,
		PollTimeoutMs: 50, Logger: log, OnEvent: ev.on}))
	_, wait := runUntil(t, w)
	ev.any(t, EventLeased, "a", 5*time.Second)
	ev.any(t, EventLeased, "b", 5*time.Second)
	// Both slots now run a handler, so the renewer is the only one talking to Redis.
	b.armed.Store(true)
	select {
	case <-b.broke:
	case <-time.After(5 * time.Second):
		t.Fatal("no request came to break")
	}
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(logs.String(), "renewing leases failed"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the broken request was not a renewal; log:\n%s", logs.String())
		}
	}
	time.Sleep(250 * time.Millisecond) // two more renewal rounds, which succeed
	select {
	case err := <-causes:
		t.Fatalf("a handler's context ended (%v) after one failed renewal", err)
	default:
	}
	free()
	ev.any(t, EventCompleted, "a", 5*time.Second)
	ev.any(t, EventCompleted, "b", 5*time.Second)
	wait()
	if s := w.Stats(); s != (WorkerStats{Completed: 2}) {
		t.Fatalf("stats %+v", s)
	}
}
