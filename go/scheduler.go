package rwq

import (
	"context"
	"log/slog"
	"math"
	"os"
	"sync"
	"time"
)

// The scheduler of profile periodic (SPEC §23.4). No leader is elected: any number of schedulers,
// in any language, may run on one queue, and each slot still becomes at most one item (the fire
// script's watermark). A tick reads every schedule with the server's now, fires each one's due
// slots oldest first, and says when the next slot is; Run ticks until its context ends, waiting
// until that slot by the server's clock (the last reply's now plus the time waited on the
// monotonic clock), never more than 10 s, and registers as a live worker of kind "scheduler".

const (
	// SchedulerRefreshMs is the longest a scheduler waits between ticks, each of which reads the
	// definitions again (RWQ-SCHED-012, -018).
	SchedulerRefreshMs  = 10_000
	schedulerBackoffMs  = 1000 // after a failed tick: 1 s, doubling up to 10 s
	schedulerMaxBackoff = 10_000
)

// SchedulerOptions tune a Scheduler; the zero value of each field is its default.
type SchedulerOptions struct {
	Logger *slog.Logger // default slog.Default()
	// HeartbeatMs: how often Run registers the scheduler in P:workers with kind "scheduler"
	// (profile workers, SPEC §21); default 5000, at most HeartbeatTTLMs/3; negative: never.
	HeartbeatMs int64
	// HeartbeatTTLMs: how long a beat keeps the scheduler listed, 1000..3600000; default 30000.
	HeartbeatTTLMs int64
}

// Tick is what one pass of a scheduler did: the ids of the items it added, the server's now of
// its last reply, and the next slot of any schedule not paused (NextMs -1 when there is none).
type Tick struct {
	Fired  []string
	NowMs  int64
	NextMs int64
}

// Scheduler fires the slots of a queue's schedules. Make one with NewScheduler; Tick is one pass,
// Run loops. Sharded queues have no schedules (RWQ-SCHED-016), so it takes a *Queue.
type Scheduler struct {
	q         *Queue
	o         SchedulerOptions
	log       *slog.Logger
	id        string
	mu        sync.Mutex
	refused   map[[2]string]bool // (name, digest) of the definitions logged as unreadable
	startedMs int64              // the server's now at the first beat
}

// NewScheduler returns a scheduler of q; Run checks its options (ErrInvalidArgument).
func NewScheduler(q *Queue, opts *SchedulerOptions) *Scheduler {
	o := SchedulerOptions{}
	if opts != nil {
		o = *opts
	}
	if o.HeartbeatTTLMs == 0 {
		o.HeartbeatTTLMs = DefaultHeartbeatTTL
	}
	if o.HeartbeatMs == 0 {
		o.HeartbeatMs = DefaultHeartbeatMs
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Scheduler{q: q, o: o, log: log, id: NewWorkerID(), refused: map[[2]string]bool{}}
	if q != nil {
		s.log = log.With("queue", q.Prefix())
	}
	return s
}

// ID is the scheduler's id in its queue's list of live workers.
func (s *Scheduler) ID() string { return s.id }

// parsed is stored's definition, or false for one a scheduler skips (RWQ-SCHED-017), logged once.
func (s *Scheduler) parsed(stored StoredSchedule) (walk, bool) {
	sched, err := stored.Schedule()
	var w walk
	if err == nil {
		w, err = sched.walk()
	}
	if err != nil {
		s.mu.Lock()
		key := [2]string{stored.Name, stored.Digest()}
		first := !s.refused[key]
		s.refused[key] = true
		s.mu.Unlock()
		if first {
			s.log.Warn("schedule is skipped", "schedule", stored.Name, "error", err)
		}
		return w, false
	}
	return w, true
}

// Tick reads the schedules, fires every due slot (never re-sending a call whose reply was lost,
// RWQ-SCHED-011) and says when the next slot is. Redis errors are returned.
func (s *Scheduler) Tick(ctx context.Context) (Tick, error) {
	if s.q == nil {
		return Tick{}, invalid("NewScheduler needs a queue")
	}
	list, err := s.q.Schedules(ctx)
	if err != nil {
		return Tick{}, err
	}
	type dueSlots struct {
		stored StoredSchedule
		walk   walk
		slots  []int64
	}
	var due []dueSlots // every schedule's slots by the list's now, as the other clients do
	for _, stored := range list.Schedules {
		if stored.PausedMs != nil {
			continue
		}
		if w, ok := s.parsed(stored); ok {
			mark := int64(-1)
			if stored.LastFiredMs != nil {
				mark = *stored.LastFiredMs
			}
			due = append(due, dueSlots{stored, w, w.due(mark, list.NowMs)})
		}
	}
	t := Tick{Fired: []string{}, NowMs: list.NowMs, NextMs: math.MaxInt64}
	for _, d := range due {
		mark := d.stored.LastFiredMs
		if len(d.slots) > 0 {
			f, err := s.q.Fire(ctx, d.stored.Name, d.stored.Digest(), d.slots)
			if err != nil {
				return Tick{}, err
			}
			t.NowMs, t.Fired = f.NowMs, append(t.Fired, f.Added...)
			if f.LastFiredMs != nil {
				mark = f.LastFiredMs
			}
			if f.Status != "ok" {
				continue // gone, stale or paused: the next tick reads the schedules again
			}
		}
		after := t.NowMs
		if mark != nil {
			after = max(after, *mark)
		}
		t.NextMs = min(t.NextMs, d.walk.next(after))
	}
	if t.NextMs == math.MaxInt64 {
		t.NextMs = -1
	}
	return t, nil
}

// waitAfter is how long to wait after tick, returned at monotonic time since: until its next
// slot by the server's clock, at least 1 ms, at most 10 s (RWQ-SCHED-018).
func waitAfter(t Tick, since time.Time) time.Duration {
	if t.NextMs < 0 {
		return SchedulerRefreshMs * time.Millisecond
	}
	left := time.Duration(t.NextMs-t.NowMs)*time.Millisecond - time.Since(since)
	return min(max(left, time.Millisecond), SchedulerRefreshMs*time.Millisecond)
}

// Run ticks until ctx ends, then leaves the live workers and returns nil. A failed tick is logged
// and the next comes after a backoff (1 s, doubling up to 10 s). Redis calls run on a context
// the stop does not cancel, so a fire is never abandoned half-way. Options it refuses return
// ErrInvalidArgument before any I/O. Run a Scheduler once at a time.
func (s *Scheduler) Run(ctx context.Context) error {
	if s.q == nil {
		return invalid("NewScheduler needs a queue")
	}
	if err := checkRange("HeartbeatTTLMs", s.o.HeartbeatTTLMs, MinWorkerTTLMs, MaxWorkerTTLMs); err != nil {
		return err
	}
	if s.o.HeartbeatMs > s.o.HeartbeatTTLMs/3 {
		return invalid("HeartbeatMs must be at most HeartbeatTTLMs / 3 (RWQ-LIVE-001)")
	}
	bg := context.WithoutCancel(ctx)
	beats := s.o.HeartbeatMs > 0
	backoff, beatAt := time.Duration(schedulerBackoffMs)*time.Millisecond, time.Time{}
	for ctx.Err() == nil {
		if beats && !time.Now().Before(beatAt) {
			s.beat(bg)
			beatAt = time.Now().Add(time.Duration(s.o.HeartbeatMs) * time.Millisecond)
		}
		var wait time.Duration
		if t, err := s.Tick(bg); err != nil {
			s.log.Error("scheduler tick failed", "next_in_ms", backoff.Milliseconds(), "error", err)
			wait, backoff = backoff, min(2*backoff, schedulerMaxBackoff*time.Millisecond)
		} else {
			backoff = schedulerBackoffMs * time.Millisecond
			for _, id := range t.Fired {
				s.log.Info("fired", "id", id)
			}
			wait = waitAfter(t, time.Now())
			if beats {
				wait = min(wait, max(time.Until(beatAt), time.Millisecond))
			}
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-timer.C:
		}
		timer.Stop()
	}
	if beats {
		if _, err := s.q.WorkerLeave(bg, s.id); err != nil {
			s.log.Warn("scheduler could not leave the live workers", "error", err)
		}
	}
	return nil
}

// record is what the heartbeat registers (SPEC §21), as a scheduler.
func (s *Scheduler) record() map[string]any {
	host, _ := os.Hostname()
	var started any
	if s.startedMs > 0 {
		started = s.startedMs
	}
	return map[string]any{"id": s.id, "kind": "scheduler", "host": host, "pid": os.Getpid(), "language": "go",
		"implementation": "rwq-go", "version": Version, "started_ms": started, "ttl_ms": s.o.HeartbeatTTLMs}
}

// beat registers the scheduler (twice the first time: the second record carries the server time
// of the first as started_ms); a failure is logged, and the next interval tries again.
func (s *Scheduler) beat(ctx context.Context) {
	for {
		b, err := s.q.WorkerBeat(ctx, s.id, s.o.HeartbeatTTLMs, s.record())
		if err != nil {
			s.log.Warn("scheduler heartbeat failed", "error", err)
			return
		}
		if s.startedMs > 0 {
			return
		}
		s.startedMs = b.NowMs
	}
}
