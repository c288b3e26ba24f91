package rwq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Worker defaults and limits.
const (
	DefaultWorkerLeaseMs     = 30_000
	DefaultPollTimeoutMs     = 1_000
	DefaultShutdownGraceMs   = 10_000
	MaxWorkerConcurrency     = 10_000
	FallbackDelayMs          = 1_000 // a failed item's delay on a queue without a retry policy (RWQ-WORKER-002)
	maxReasonBytes           = 1024
	burstPause               = 50 * time.Millisecond
	redisBackoffBase         = 100 * time.Millisecond
	redisBackoffCap          = 5 * time.Second
	cleanJitter              = 0.25
	defaultWorkerConcurrency = 1
)

// DefaultWorkerRetryPolicy is the policy a Worker stores when the queue has none: 5 attempts, then
// the dead set (kept 7 days, at most 10,000); between attempts 1 s, 2 s, 4 s, 8 s, each shortened
// by up to 25 % at random. The same as the Python worker's.
func DefaultWorkerRetryPolicy() RetryPolicy {
	p := DefaultRetryPolicy()
	p.JitterPct = 25
	return p
}

// Causes of a handler's context ending, as context.Cause reports them (ErrLeaseLost too: a
// renewal found the lease lost, and another worker may run the item).
var (
	// ErrHandlerTimeout: the handler ran longer than WorkerOptions.TimeoutMs; its item is failed.
	ErrHandlerTimeout = errors.New("rwq: the handler ran longer than its timeout")
	// ErrWorkerStopped: the worker stopped and its grace period ended; the item was given back
	// with its attempt refunded.
	ErrWorkerStopped = errors.New("rwq: the worker stopped")
	// ErrPolicyMissing: the queue has no retry policy and the worker may not store one (RWQ-WORKER-001).
	ErrPolicyMissing = errors.New("rwq: no retry policy")
)

// NonRetryableError is a handler's failure that no retry can fix: the item is dead-lettered now,
// whatever attempts are left (RWQ-WORKER-005). Make one with NonRetryable.
type NonRetryableError struct{ Err error }

func (e *NonRetryableError) Error() string { return "non-retryable: " + errText(e.Err) }
func (e *NonRetryableError) Unwrap() error { return e.Err }

// NonRetryable marks err as a failure no retry can fix: returned by a handler (wrapped or not), it
// dead-letters the item at once.
func NonRetryable(err error) error { return &NonRetryableError{Err: err} }

// RetryLaterError asks for the item to run again after DelayMs rather than the policy's backoff;
// the attempt still counts (RWQ-WORKER-005, RWQ-RETRY-017). Make one with RetryLater.
type RetryLaterError struct {
	DelayMs int64
	Err     error
}

func (e *RetryLaterError) Error() string {
	return fmt.Sprintf("retry in %d ms: %s", e.DelayMs, errText(e.Err))
}
func (e *RetryLaterError) Unwrap() error { return e.Err }

// RetryLater asks for the item to run again in delayMs. On a queue that had no retry policy when
// the worker started, a delay under FallbackDelayMs is raised to it (RWQ-WORKER-002).
func RetryLater(delayMs int64, err error) error { return &RetryLaterError{DelayMs: delayMs, Err: err} }

// PanicError is a handler's panic, recovered: the item is failed like any error, with the stack
// kept as the dead item's detail.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// Job is a leased item in a handler's hands: ID, Data and Attempt (1 for the first lease under a
// retry policy) of its Lease. Printing a Job never prints the lease token.
type Job struct {
	Lease
}

// Handler does the work of one item. Returning nil completes it; returning an error records a
// failed attempt (retried after the queue's backoff, dead-lettered once its attempts are used up;
// see NonRetryable and RetryLater); a panic is recovered and counts as an error.
//
// ctx ends when the handler should stop: context.Cause(ctx) is ErrHandlerTimeout (the item is
// failed), ErrLeaseLost (another worker may run it), or ErrWorkerStopped (the worker's grace
// period ended; the item was given back). What the handler returns after that is ignored.
type Handler func(ctx context.Context, job *Job) error

// WorkerOptions tune a Worker; the zero value of each field is its default.
type WorkerOptions struct {
	Concurrency     int   // items handled at once, 1..10000; default 1
	LeaseMs         int64 // each lease's length; default 30000, at least 2
	RenewIntervalMs int64 // how often one round trip renews every held lease; default LeaseMs/3
	PollTimeoutMs   int64 // how long a lease call waits for an item; default 1000 (under the client's ReadTimeout)
	// CleanIntervalMs: how often (+-25 %) the worker runs a paced light clean, which brings back
	// the items of crashed workers; default LeaseMs; negative: never.
	CleanIntervalMs int64
	// ShutdownGraceMs: at a stop, how long running handlers may finish before their items are
	// given back (attempt refunded); default 10000; negative: none.
	ShutdownGraceMs int64
	TimeoutMs       int64 // a handler running longer has its context ended and its item failed; 0: no limit
	// Retry is the policy stored when the queue has none (an operator's stored policy always
	// wins); nil: DefaultWorkerRetryPolicy. NoRetryPolicy: store none, and run without one if
	// the queue has none (failed items then wait FallbackDelayMs).
	Retry         *RetryPolicy
	NoRetryPolicy bool
	Burst         bool              // stop by itself once a lease finds nothing while nothing is in hand
	Logger        *slog.Logger      // default slog.Default()
	OnEvent       func(WorkerEvent) // called for each lease and each settled item; must not block
	// HeartbeatMs: how often the renewer registers the worker in P:workers (profile workers,
	// SPEC §21; rwq workers lists it); default 5000, at most HeartbeatTTLMs/3; negative: never.
	HeartbeatMs int64
	// HeartbeatTTLMs: how long a beat keeps the worker listed, 1000..3600000; default 30000.
	HeartbeatTTLMs int64
}

// EventKind is what happened to an item in a worker.
type EventKind string

// Event kinds.
const (
	EventLeased    EventKind = "leased"    // the handler starts
	EventCompleted EventKind = "completed" // the handler returned nil and the item was completed
	EventFailed    EventKind = "failed"    // a failed attempt; the item runs again later
	EventDead      EventKind = "dead"      // a failure that dead-lettered the item
	EventReleased  EventKind = "released"  // given back unfinished at a stop, its attempt refunded
	EventLost      EventKind = "lost"      // the lease was gone before the item was settled
)

// WorkerEvent is one item's event, for WorkerOptions.OnEvent.
type WorkerEvent struct {
	Kind     EventKind
	Queue    string
	ID       string
	Attempt  int64
	Duration time.Duration // from lease to settle (0 for EventLeased)
	Err      error         // the handler's error, for failed and dead
}

// WorkerStats count how the worker's items ended; dead-lettered ones count as Failed.
type WorkerStats struct {
	Completed, Failed, Released, Lost int64
}

// Worker runs a Handler on the items of a queue, as safely as the reference (Python) worker:
// leases renewed while handlers run, the queue's retry policy with backoff and dead-lettering,
// a fallback delay when the queue has none, a paced light clean on a timer, per-item timeouts,
// a bound on concurrency, panics recovered as failures, and a graceful stop that gives back
// (attempt refunded) what it cannot finish. Make one with NewWorker; it runs once.
type Worker struct {
	q       WorkQueue
	handler Handler
	o       WorkerOptions
	log     *slog.Logger

	mu      sync.Mutex
	held    map[*Job]*held           // leases the renewer keeps alive
	running map[string]chan struct{} // ids whose handler runs here, closed when it returns
	idle    int                      // burst: slots whose last lease found nothing

	completed, failed, released, lost atomic.Int64
	policyAtStart                     bool
	raised                            sync.Once
	started                           atomic.Bool
	stopping, halt                    chan struct{}
	stop                              func()
	id                                string       // the worker id of its heartbeat
	startedMs                         atomic.Int64 // the server's now at its first beat (RWQ-LIVE-005)
}

type held struct {
	cancel   context.CancelCauseFunc
	settling bool
}

// NewWorker checks its arguments (INVALID_ARGUMENT, before any I/O) and returns a worker of h on q.
func NewWorker(q WorkQueue, h Handler, opts *WorkerOptions) (*Worker, error) {
	if q == nil || h == nil {
		return nil, invalid("NewWorker needs a queue and a handler")
	}
	o := WorkerOptions{}
	if opts != nil {
		o = *opts
	}
	def := func(v *int64, d int64) {
		if *v == 0 {
			*v = d
		}
	}
	if o.Concurrency == 0 {
		o.Concurrency = defaultWorkerConcurrency
	}
	def(&o.LeaseMs, DefaultWorkerLeaseMs)
	def(&o.RenewIntervalMs, o.LeaseMs/3)
	def(&o.PollTimeoutMs, DefaultPollTimeoutMs)
	def(&o.CleanIntervalMs, o.LeaseMs)
	def(&o.ShutdownGraceMs, DefaultShutdownGraceMs)
	if o.ShutdownGraceMs < 0 {
		o.ShutdownGraceMs = 0
	}
	if err := checkRange("Concurrency", int64(o.Concurrency), 1, MaxWorkerConcurrency); err != nil {
		return nil, err
	}
	for _, c := range []struct {
		name   string
		v, min int64
	}{{"LeaseMs", o.LeaseMs, 2}, {"RenewIntervalMs", o.RenewIntervalMs, 1}, {"PollTimeoutMs", o.PollTimeoutMs, 1},
		{"ShutdownGraceMs", o.ShutdownGraceMs, 0}, {"TimeoutMs", o.TimeoutMs, 0}} {
		if err := checkDuration(c.name, c.v, c.min); err != nil {
			return nil, err
		}
	}
	if o.RenewIntervalMs >= o.LeaseMs {
		return nil, invalid("RenewIntervalMs must be shorter than LeaseMs")
	}
	if o.CleanIntervalMs > MaxDurationMs {
		return nil, invalid("CleanIntervalMs is too long")
	}
	def(&o.HeartbeatTTLMs, DefaultHeartbeatTTL)
	def(&o.HeartbeatMs, DefaultHeartbeatMs)
	if err := checkRange("HeartbeatTTLMs", o.HeartbeatTTLMs, MinWorkerTTLMs, MaxWorkerTTLMs); err != nil {
		return nil, err
	}
	if o.HeartbeatMs > o.HeartbeatTTLMs/3 {
		return nil, invalid("HeartbeatMs must be at most HeartbeatTTLMs / 3 (RWQ-LIVE-001)")
	}
	if o.NoRetryPolicy && o.Retry != nil {
		return nil, invalid("Retry and NoRetryPolicy exclude each other")
	}
	if !o.NoRetryPolicy {
		p := DefaultWorkerRetryPolicy()
		if o.Retry != nil {
			p = *o.Retry
		}
		if _, err := p.args(); err != nil {
			return nil, err
		}
		o.Retry = &p
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Worker{q: q, handler: h, o: o, log: log.With("queue", q.Prefix()), held: map[*Job]*held{},
		running: map[string]chan struct{}{}, stopping: make(chan struct{}), halt: make(chan struct{}),
		id: NewWorkerID()}, nil
}

// ID is the worker's id in its queue's list of live workers (profile workers).
func (w *Worker) ID() string { return w.id }

// Stats are how the items so far ended (a snapshot).
func (w *Worker) Stats() WorkerStats {
	return WorkerStats{w.completed.Load(), w.failed.Load(), w.released.Load(), w.lost.Load()}
}

// Run works until ctx is cancelled (or, with Burst, until the queue is drained), then stops
// gracefully: no more leases; running handlers may finish for ShutdownGraceMs, then their contexts
// end (ErrWorkerStopped) and their items are given back with the attempt refunded (RWQ-WORKER-004).
// Redis failures while running are logged and retried with backoff. Run returns nil after a stop,
// or the error that kept it from starting (ErrPolicyMissing, a Redis error reading the policy).
// A handler that ignores its context may still run when Run returns.
func (w *Worker) Run(ctx context.Context) error {
	if w.started.Swap(true) {
		return invalid("a Worker runs once")
	}
	if err := w.offerPolicy(ctx); err != nil {
		return err
	}
	// Redis calls run on a context the stop does not cancel: a script call abandoned half-way
	// may have run, and a settle must be able to finish during the grace period.
	bg := context.WithoutCancel(ctx)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	w.stop = stop
	w.log.Info("worker starting", "concurrency", w.o.Concurrency, "lease_ms", w.o.LeaseMs)
	var slots, helpers sync.WaitGroup
	for i := 0; i < w.o.Concurrency; i++ {
		slots.Add(1)
		go func() { defer slots.Done(); w.slot(bg) }()
	}
	done := make(chan struct{})
	helpers.Add(1)
	go func() { defer helpers.Done(); w.renewer(bg, done) }()
	if w.o.CleanIntervalMs > 0 {
		helpers.Add(1)
		go func() { defer helpers.Done(); w.cleaner(bg, done) }()
	}
	<-runCtx.Done()
	close(w.stopping)
	grace := time.NewTimer(time.Duration(w.o.ShutdownGraceMs) * time.Millisecond)
	slotsDone := make(chan struct{})
	go func() { slots.Wait(); close(slotsDone) }()
	select {
	case <-slotsDone:
	case <-grace.C:
		w.log.Warn("grace period over: giving back the items of running handlers", "grace_ms", w.o.ShutdownGraceMs)
	}
	grace.Stop()
	close(w.halt)
	w.mu.Lock()
	for _, h := range w.held {
		if !h.settling {
			h.cancel(ErrWorkerStopped)
		}
	}
	w.mu.Unlock()
	<-slotsDone
	close(done)
	helpers.Wait()
	if w.o.HeartbeatMs > 0 { // every item settled or given back (RWQ-LIVE-007)
		if _, err := w.q.WorkerLeave(bg, w.id); err != nil {
			w.log.Warn("leaving the live workers failed", "worker", w.id, "error", err)
		}
	}
	s := w.Stats()
	w.log.Info("worker stopped", "completed", s.Completed, "failed", s.Failed, "released", s.Released, "lost", s.Lost)
	return nil
}

// offerPolicy stores the worker's policy if the queue has none (RWQ-WORKER-001), notes whether
// the queue has one (RWQ-WORKER-002) and warns when a stored one differs (RWQ-WORKER-003).
func (w *Worker) offerPolicy(ctx context.Context) error {
	var stored bool
	var current *RetryPolicy
	var err error
	if w.o.Retry != nil {
		stored, err = w.q.SetRetryPolicyIfAbsent(ctx, w.o.Retry)
	}
	if stored {
		current = w.o.Retry
	} else {
		var rerr error
		if current, rerr = w.q.RetryPolicy(ctx); err == nil {
			err = rerr
		}
	}
	if err != nil && !errors.Is(err, ErrRedis) {
		return err // WRONG_TYPE, SHARD_MISMATCH...: the queue cannot be worked on
	}
	w.policyAtStart = current != nil
	fix := "rwq policy set --prefix " + w.q.Prefix()
	if s, ok := w.q.(*ShardedQueue); ok {
		fix += fmt.Sprintf(" --shards %d", len(s.Shards()))
	}
	switch {
	case w.o.Retry == nil && err != nil:
		return err
	case w.o.Retry == nil:
	case stored:
		w.log.Info("the queue had no retry policy: stored the worker's", "policy", w.o.Retry.String())
	case current != nil && *current != *w.o.Retry:
		w.log.Warn("the queue keeps its stored retry policy, not this worker's: the stored one applies to every "+
			"worker; an admin changes it with `"+fix+"` (RWQ-WORKER-003)", "stored", current.String(), "worker", w.o.Retry.String())
	case current != nil:
	case errors.Is(err, ErrNoPermission):
		return fmt.Errorf("%w: queue %q has no retry policy and this worker may not store one: run `%s` as an "+
			"admin (or set WorkerOptions.NoRetryPolicy to run without one) (RWQ-WORKER-001)", ErrPolicyMissing, w.q.Prefix(), fix)
	default:
		w.log.Warn("could not store or read the retry policy; failed items wait the fallback delay (RWQ-WORKER-002)",
			"error", err, "fallback_ms", FallbackDelayMs)
	}
	return nil
}

func (w *Worker) isStopping() bool { return closed(w.stopping) }

func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// sleep waits d (with jitter from the caller) or until c is closed; false if c closed.
func sleep(d time.Duration, c chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c:
		return false
	}
}

// backoff is bounded exponential backoff with jitter: about 0.1 s, doubling up to 5 s.
type backoff int

func (b *backoff) next() time.Duration {
	d := redisBackoffBase << min(int(*b), 16)
	if d > redisBackoffCap || d <= 0 {
		d = redisBackoffCap
	}
	*b++
	return time.Duration(float64(d) * (0.5 + rand.Float64()/2))
}

func (w *Worker) slot(bg context.Context) {
	var next *Lease // the next item, when the last settle leased it
	var b backoff
	for {
		if next == nil {
			if w.isStopping() {
				return
			}
			l, err := w.poll(bg)
			if err != nil {
				d := b.next()
				w.log.Warn("lease failed; retrying", "error", err, "in", d)
				sleep(d, w.stopping)
				continue
			}
			b = 0
			if next = l; l == nil {
				continue
			}
		}
		job := &Job{Lease: *next}
		next = nil
		if w.isStopping() { // stopped while this lease was on its way: give it back
			w.giveBack(bg, job, time.Now())
			return
		}
		next = w.work(bg, job)
	}
}

// poll leases one item: blocking up to PollTimeoutMs; with Burst, without waiting, stopping the
// worker once every slot found nothing.
func (w *Worker) poll(bg context.Context) (*Lease, error) {
	if !w.o.Burst {
		return w.q.LeaseBlocking(bg, w.o.LeaseMs, w.o.PollTimeoutMs)
	}
	l, err := w.q.Lease(bg, w.o.LeaseMs)
	if l != nil || err != nil {
		return l, err
	}
	w.mu.Lock()
	w.idle++
	drained := w.idle == w.o.Concurrency
	w.mu.Unlock()
	if drained {
		w.log.Info("burst: no item ready and none in hand; stopping")
		w.stop()
		return nil, nil
	}
	sleep(burstPause, w.stopping)
	w.mu.Lock()
	w.idle--
	w.mu.Unlock()
	return nil, nil
}

// work runs the handler on job and settles the item; it returns the next lease when the settle
// took one.
func (w *Worker) work(bg context.Context, job *Job) *Lease {
	start := time.Now()
	hctx, cancel := context.WithCancelCause(bg)
	defer cancel(nil)
	h := &held{cancel: cancel}
	w.mu.Lock()
	w.held[job] = h
	earlier := w.running[job.ID]
	w.mu.Unlock()
	defer func() { w.mu.Lock(); delete(w.held, job); w.mu.Unlock() }()
	// One worker never runs an id twice at once: an earlier run of it (timed out, lease lost)
	// may still go on here. Hold this lease (renewed) until it returns.
	for earlier != nil {
		w.log.Warn("item leased again while an earlier run of it goes on here; waiting", "id", job.ID)
		select {
		case <-earlier:
		case <-hctx.Done(): // its lease was lost meanwhile
			w.lost.Add(1)
			w.emit(job, EventLost, start, nil)
			return nil
		case <-w.stopping:
			w.giveBack(bg, job, start)
			return nil
		}
		w.mu.Lock()
		if earlier = w.running[job.ID]; earlier == nil {
			w.running[job.ID] = make(chan struct{})
		}
		w.mu.Unlock()
	}
	w.mu.Lock()
	if w.running[job.ID] == nil {
		w.running[job.ID] = make(chan struct{})
	}
	finished := w.running[job.ID]
	w.mu.Unlock()
	if w.o.TimeoutMs > 0 { // counted from the handler's start
		var c context.CancelFunc
		hctx, c = context.WithTimeoutCause(hctx, time.Duration(w.o.TimeoutMs)*time.Millisecond, ErrHandlerTimeout)
		defer c()
	}
	w.emit(job, EventLeased, start, nil)
	result := make(chan error, 1)
	go func() {
		defer func() {
			w.mu.Lock()
			delete(w.running, job.ID)
			w.mu.Unlock()
			close(finished)
		}()
		result <- w.call(hctx, job)
	}()
	var err error
	select {
	case err = <-result:
	case <-hctx.Done():
	}
	if hctx.Err() != nil { // what the handler returns once its context ended is ignored
		return w.interrupted(bg, job, start, context.Cause(hctx), finished)
	}
	w.mu.Lock()
	h.settling = true
	w.mu.Unlock()
	return w.settle(bg, job, start, err)
}

// interrupted handles a handler whose context ended before it returned: a timeout fails the
// item, a stop gives it back, a lost lease leaves it. Except at a stop, the slot stays busy until
// the handler returns, so that Concurrency bounds the handlers running.
func (w *Worker) interrupted(bg context.Context, job *Job, start time.Time, cause error, finished chan struct{}) *Lease {
	w.mu.Lock()
	delete(w.held, job) // no more renewals
	w.mu.Unlock()
	switch {
	case errors.Is(cause, ErrWorkerStopped):
		w.giveBack(bg, job, start)
		return nil
	case errors.Is(cause, ErrHandlerTimeout):
		w.log.Error("the handler ran longer than its timeout", "id", job.ID, "timeout_ms", w.o.TimeoutMs)
		w.settle(bg, job, start, fmt.Errorf("%w (%d ms)", ErrHandlerTimeout, w.o.TimeoutMs))
	default:
		w.lost.Add(1)
		w.log.Warn("the lease was lost while the handler ran (expired or taken over)", "id", job.ID)
		w.emit(job, EventLost, start, nil)
	}
	select {
	case <-finished:
	case <-w.halt:
	}
	return nil
}

// call runs the handler, a panic recovered as a *PanicError.
func (w *Worker) call(ctx context.Context, job *Job) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &PanicError{Value: p, Stack: debug.Stack()}
		}
	}()
	return w.handler(ctx, job)
}

// settle completes (err nil) or fails the item as its lease holder, retrying Redis failures until
// the grace period ends. A completion leases the next item in the same round trip while the
// worker runs (RWQ-NEXT-005); that lease is returned.
func (w *Worker) settle(bg context.Context, job *Job, start time.Time, err error) *Lease {
	var b backoff
	for {
		var next *Lease
		kind, done, serr := EventCompleted, false, error(nil)
		switch {
		case err == nil && !w.isStopping():
			var out Outcome
			out, next, serr = w.q.CompleteOwnedAndLease(bg, job.Lease, w.o.LeaseMs)
			done = out == Done
		case err == nil:
			done, serr = w.q.CompleteOwned(bg, job.Lease)
		default:
			reason, opts := w.failure(err)
			var r FailResult
			r, serr = w.q.FailWith(bg, job.Lease, reason, opts)
			done, kind = r.Outcome != FailGone, EventFailed
			if r.Outcome == FailDead {
				kind = EventDead
			}
		}
		if serr != nil && !errors.Is(serr, ErrLeaseLost) {
			if closed(w.halt) {
				w.log.Error("giving up settling the item at shutdown", "id", job.ID, "error", serr)
			} else {
				d := b.next()
				w.log.Warn("settling the item failed; retrying", "id", job.ID, "error", serr, "in", d)
				sleep(d, w.halt)
				continue
			}
		}
		switch {
		case !done:
			w.lost.Add(1)
			w.log.Warn("the lease was lost before the item was settled", "id", job.ID)
			w.emit(job, EventLost, start, err)
		case kind == EventCompleted:
			w.completed.Add(1)
			w.emit(job, kind, start, nil)
		default:
			w.failed.Add(1)
			w.log.Warn("handler failed", "id", job.ID, "attempt", job.Attempt, "dead", kind == EventDead, "error", err)
			w.emit(job, kind, start, err)
		}
		return next
	}
}

// giveBack releases an item whose handler did not fail, refunding its attempt (RWQ-WORKER-004).
func (w *Worker) giveBack(bg context.Context, job *Job, start time.Time) {
	ok, err := w.q.ReleaseWith(bg, job.Lease, ReleaseOptions{RefundAttempt: true})
	if err != nil && !errors.Is(err, ErrLeaseLost) {
		w.log.Error("giving back the item failed; it comes back when its lease expires", "id", job.ID, "error", err)
	}
	if ok {
		w.released.Add(1)
		w.emit(job, EventReleased, start, nil)
	} else {
		w.lost.Add(1)
		w.emit(job, EventLost, start, nil)
	}
}

// failure is the reason and the options of fail for a handler's error: dead now for a
// NonRetryable, the delay of a RetryLater (at least the fallback on a queue that had no policy),
// the fallback delay always, and the panic's stack or the error's text as detail.
func (w *Worker) failure(err error) (string, FailOptions) {
	opts := FailOptions{FallbackDelayMs: FallbackDelayMs}
	var nr *NonRetryableError
	var rl *RetryLaterError
	var pe *PanicError
	opts.Dead = errors.As(err, &nr)
	if !opts.Dead && errors.As(err, &rl) {
		d := max(rl.DelayMs, 0)
		if d < FallbackDelayMs && !w.policyAtStart {
			d = FallbackDelayMs
			w.raised.Do(func() {
				w.log.Warn("the queue has no retry policy: a RetryLater delay under the fallback is raised to it, "+
					"so that a failing item never runs in a hot loop (RWQ-WORKER-002)", "fallback_ms", FallbackDelayMs)
			})
		}
		opts.DelayMs = &d
	}
	detail := fmt.Sprintf("%+v", err)
	if errors.As(err, &pe) {
		detail = pe.Error() + "\n\n" + string(pe.Stack)
	}
	opts.Detail = tail(detail, MaxDetailBytes)
	return head(errText(err), maxReasonBytes), opts
}

// head is s cut to at most n bytes at a character boundary; tail keeps its last n bytes.
func head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - (n - 4)
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return "...\n" + s[i:]
}

func (w *Worker) emit(job *Job, kind EventKind, start time.Time, err error) {
	if w.o.OnEvent == nil {
		return
	}
	e := WorkerEvent{Kind: kind, Queue: w.q.Prefix(), ID: job.ID, Attempt: job.Attempt, Err: err}
	if kind != EventLeased {
		e.Duration = time.Since(start)
	}
	w.o.OnEvent(e)
}

// record is what the heartbeat registers (SPEC §21): never a lease token.
func (w *Worker) record() map[string]any {
	w.mu.Lock()
	items := make([]any, 0, min(len(w.held), maxRecordItems))
	for job := range w.held {
		if len(items) < maxRecordItems {
			items = append(items, job.ID)
		}
	}
	inHand := len(w.held)
	w.mu.Unlock()
	host, _ := os.Hostname()
	var started any
	if ms := w.startedMs.Load(); ms > 0 {
		started = ms
	}
	s := w.Stats()
	r := map[string]any{"id": w.id, "kind": "worker", "host": host, "pid": os.Getpid(), "language": "go",
		"implementation": "rwq-go", "version": Version, "started_ms": started, "ttl_ms": w.o.HeartbeatTTLMs,
		"concurrency": w.o.Concurrency, "in_hand": inHand, "items": items, "completed": s.Completed,
		"failed": s.Failed, "released": s.Released, "lost": s.Lost}
	for len(items) > 0 { // long ids: fewer of them
		if raw, err := encodeRecord(r); err == nil && len(raw) <= MaxWorkerRecordBytes {
			break
		}
		items = items[:len(items)-1]
		r["items"] = items
	}
	return r
}

// beat registers the worker (twice the first time: the second record carries the server time of
// the first as started_ms); a failure is logged, and the next interval tries again.
func (w *Worker) beat(bg context.Context) {
	for {
		b, err := w.q.WorkerBeat(bg, w.id, w.o.HeartbeatTTLMs, w.record())
		if err != nil {
			w.log.Warn("heartbeat failed", "worker", w.id, "error", err)
			return
		}
		if !w.startedMs.CompareAndSwap(0, b.NowMs) {
			return
		}
	}
}

// renewer extends every held lease each RenewIntervalMs in one round trip; a lease found lost
// ends its handler's context (ErrLeaseLost). With the heartbeat on, it also beats at once and
// then every HeartbeatMs (RWQ-LIVE-001).
func (w *Worker) renewer(bg context.Context, done chan struct{}) {
	renewEvery := time.Duration(w.o.RenewIntervalMs) * time.Millisecond
	beatEvery := time.Duration(w.o.HeartbeatMs) * time.Millisecond
	renewAt, beatAt := time.Now().Add(renewEvery), time.Now()
	for {
		if w.o.HeartbeatMs > 0 && !time.Now().Before(beatAt) {
			beatAt = time.Now().Add(beatEvery)
			w.beat(bg)
		}
		wake := renewAt
		if w.o.HeartbeatMs > 0 && beatAt.Before(wake) {
			wake = beatAt
		}
		if !sleep(max(time.Until(wake), 0), done) {
			return
		}
		if time.Now().Before(renewAt) {
			continue
		}
		renewAt = time.Now().Add(renewEvery)
		w.mu.Lock()
		jobs, leases := make([]*Job, 0, len(w.held)), make([]Lease, 0, len(w.held))
		for job := range w.held {
			jobs, leases = append(jobs, job), append(leases, job.Lease)
		}
		w.mu.Unlock()
		if len(jobs) == 0 {
			continue
		}
		renewed, err := w.q.RenewMany(bg, leases, w.o.LeaseMs)
		if err != nil {
			w.log.Warn("renewing leases failed", "count", len(jobs), "error", err)
			continue
		}
		w.mu.Lock()
		for i, ok := range renewed {
			if h := w.held[jobs[i]]; !ok && h != nil && !h.settling {
				h.cancel(ErrLeaseLost)
			}
		}
		w.mu.Unlock()
	}
}

// cleaner runs a paced light clean every CleanIntervalMs, +-25 % at random, so that the items of
// crashed workers come back; the pace (3/4 of the interval) makes a fleet walk the list about
// once per interval, however many workers it has (RWQ-CLEAN-007).
func (w *Worker) cleaner(bg context.Context, done chan struct{}) {
	interval := float64(w.o.CleanIntervalMs) * float64(time.Millisecond)
	pace := max(w.o.CleanIntervalMs*3/4, 1)
	for sleep(time.Duration(interval*(1-cleanJitter+2*cleanJitter*rand.Float64())), done) {
		r, err := w.q.LightCleanPaced(bg, DefaultLightCleanChunk, pace)
		if err != nil {
			w.log.Warn("light clean failed", "error", err)
		} else if len(r.Requeued) > 0 || len(r.Dead) > 0 {
			w.log.Info("light clean", "requeued", len(r.Requeued), "dead", len(r.Dead), "promoted", r.Promoted)
		}
	}
}
