package rwq

import (
	"context"
	"errors"
	"math/rand"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
)

// sent counts every command and pipeline a client hands to the network (SPEC RWQ-ERR-002: an
// invalid call sends nothing, not even the server check of a queue's first call).
type sent struct{ n atomic.Int64 }

func (s *sent) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

func (s *sent) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		s.n.Add(1)
		return next(ctx, cmd)
	}
}

func (s *sent) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		s.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// badArguments draws invalid arguments: each call gets exactly one bad argument (the others are
// valid), so the test shows that every argument is checked on its own.
type badArguments struct{ r *rand.Rand }

func (b badArguments) id() string {
	return []string{"", strings.Repeat("x", MaxIDBytes+1+b.r.Intn(100))}[b.r.Intn(2)]
}
func (b badArguments) newID() string {
	return []string{"", strings.Repeat("é", MaxIDBytes), "bad\xff\xfe"}[b.r.Intn(3)]
}
func (b badArguments) ms() int64 {
	return []int64{0, -1 - b.r.Int63n(1000), MaxDurationMs + 1 + b.r.Int63n(1000)}[b.r.Intn(3)]
}
func (b badArguments) delay() int64 {
	return []int64{-1 - b.r.Int63n(1000), MaxDurationMs + 1 + b.r.Int63n(1000)}[b.r.Intn(2)]
}
func (b badArguments) count() int {
	return []int{0, -1 - b.r.Intn(100), MaxBatch + 1 + b.r.Intn(100)}[b.r.Intn(3)]
}
func (b badArguments) lease() Lease {
	good := Lease{ID: "a", Token: "tok"}
	switch b.r.Intn(3) {
	case 0:
		good.ID = b.id()
	case 1:
		good.Token = ""
	default:
		good.Token = strings.Repeat("t", MaxTokenBytes+1)
	}
	return good
}

// A batch of 1..1100 valid elements with one bad one, past the first call of 1000 half the time.
func batchWith[T any](b badArguments, good, bad T) []T {
	n := 1 + b.r.Intn(1100)
	items := make([]T, n)
	for i := range items {
		items[i] = good
	}
	items[b.r.Intn(n)] = bad
	return items
}

func TestEveryBadArgumentIsRefusedBeforeAnyIO(t *testing.T) {
	counter := &sent{}
	rdb := redis.NewClient(&redis.Options{Addr: standaloneAddr, MaxRetries: -1})
	defer rdb.Close()
	rdb.AddHook(counter)
	q, err := New(rdb, "bad-args", nil)
	if err != nil {
		t.Fatal(err)
	}
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	b := badArguments{rand.New(rand.NewSource(seed))}
	ctx := context.Background()
	okLease := Lease{ID: "a", Token: "tok"}
	badPolicy := func() *RetryPolicy {
		p := DefaultRetryPolicy()
		switch b.r.Intn(4) {
		case 0:
			p.Backoff = "linear"
		case 1:
			p.MaxAttempts = -1
		case 2:
			p.JitterPct = 101
		default:
			p.BaseMs = MaxDurationMs + 1
		}
		return &p
	}
	calls := map[string]func() error{
		"Add":                  func() error { _, err := q.Add(ctx, b.newID(), nil); return err },
		"AddMany":              func() error { _, err := q.AddMany(ctx, batchWith(b, Item{ID: "a"}, Item{ID: b.newID()})); return err },
		"AddDelayed":           func() error { _, err := q.AddDelayed(ctx, "a", nil, b.delay()); return err },
		"AddManyDelayed":       func() error { _, err := q.AddManyDelayed(ctx, []Item{{ID: "a"}}, b.delay()); return err },
		"Lease":                func() error { _, err := q.Lease(ctx, b.ms()); return err },
		"LeaseBlocking":        func() error { _, err := q.LeaseBlocking(ctx, b.ms(), 100); return err },
		"LeaseBlockingTimeout": func() error { _, err := q.LeaseBlocking(ctx, 1000, -1-b.r.Int63n(10)); return err },
		"LeaseMany":            func() error { _, err := q.LeaseMany(ctx, b.count(), 1000); return err },
		"Renew":                func() error { _, err := q.Renew(ctx, b.lease(), 1000); return err },
		"RenewMs":              func() error { _, err := q.Renew(ctx, okLease, b.ms()); return err },
		"RenewMany":            func() error { _, err := q.RenewMany(ctx, batchWith(b, okLease, b.lease()), 1000); return err },
		"Complete":             func() error { _, err := q.Complete(ctx, b.id()); return err },
		"CompleteMany":         func() error { _, err := q.CompleteMany(ctx, batchWith(b, "a", b.id())); return err },
		"CompleteOwned":        func() error { _, err := q.CompleteOwned(ctx, b.lease()); return err },
		"CompleteManyOwned":    func() error { _, err := q.CompleteManyOwned(ctx, batchWith(b, okLease, b.lease())); return err },
		"CompleteAndLease":     func() error { _, _, err := q.CompleteAndLease(ctx, b.id(), 1000); return err },
		"CompleteAndLeaseMs":   func() error { _, _, err := q.CompleteAndLease(ctx, "a", b.ms()); return err },
		"CompleteAndLeaseMany": func() error {
			_, _, err := q.CompleteAndLeaseMany(ctx, []string{"a"}, b.count(), 1000)
			return err
		},
		"CompleteOwnedAndLeaseMany": func() error {
			_, _, err := q.CompleteOwnedAndLeaseMany(ctx, []Lease{b.lease()}, 1, 1000)
			return err
		},
		"Release":                   func() error { _, err := q.Release(ctx, b.lease()); return err },
		"ReleaseMany":               func() error { _, err := q.ReleaseMany(ctx, batchWith(b, okLease, b.lease())); return err },
		"ReleaseDelayed":            func() error { _, err := q.ReleaseDelayed(ctx, okLease, b.delay()); return err },
		"LightClean":                func() error { _, err := q.LightClean(ctx, b.count()); return err },
		"LightCleanPaced":           func() error { _, err := q.LightCleanPaced(ctx, 100, b.delay()); return err },
		"DeepClean":                 func() error { _, err := q.DeepClean(ctx, b.count()); return err },
		"SetRetryPolicy":            func() error { return q.SetRetryPolicy(ctx, badPolicy()) },
		"SetRetryPolicyIfAbsent":    func() error { _, err := q.SetRetryPolicyIfAbsent(ctx, badPolicy()); return err },
		"SetRetryPolicyIfAbsentNil": func() error { _, err := q.SetRetryPolicyIfAbsent(ctx, nil); return err },
		"Fail":                      func() error { _, err := q.Fail(ctx, b.lease(), ""); return err },
		"FailReason":                func() error { _, err := q.Fail(ctx, okLease, strings.Repeat("r", 1025+b.r.Intn(10))); return err },
		"FailWithDelay": func() error {
			d := b.delay()
			_, err := q.FailWith(ctx, okLease, "", FailOptions{DelayMs: &d})
			return err
		},
		"FailWithFallback": func() error {
			_, err := q.FailWith(ctx, okLease, "", FailOptions{FallbackDelayMs: b.delay()})
			return err
		},
		"FailWithDeadAndDelay": func() error {
			d := b.r.Int63n(1000)
			_, err := q.FailWith(ctx, okLease, "", FailOptions{Dead: true, DelayMs: &d})
			return err
		},
		"FailWithDetail": func() error {
			_, err := q.FailWith(ctx, okLease, "", FailOptions{Detail: strings.Repeat("é", 4097+b.r.Intn(10))})
			return err
		},
		"ReleaseWith": func() error {
			_, err := q.ReleaseWith(ctx, okLease, ReleaseOptions{DelayMs: b.delay(), RefundAttempt: true})
			return err
		},
		"ReleaseManyWith": func() error {
			_, err := q.ReleaseManyWith(ctx, batchWith(b, okLease, b.lease()), ReleaseOptions{RefundAttempt: true})
			return err
		},
		"DeadItems":      func() error { _, err := q.DeadItems(ctx, -1-b.r.Intn(10), 10); return err },
		"DeadItemsCount": func() error { _, err := q.DeadItems(ctx, 0, b.count()); return err },
		"DeadItem":       func() error { _, err := q.DeadItem(ctx, b.id()); return err },
		"RequeueDead":    func() error { _, err := q.RequeueDead(ctx, batchWith(b, "a", b.id())); return err },
		"NewPrefix": func() error {
			prefix := []string{"", "jobs*", "jobs?", "a:item", "jobs:lease:eu", "x[1]"}[b.r.Intn(6)]
			_, err := New(rdb, prefix, nil)
			return err
		},
		"NewAck": func() error {
			_, err := New(rdb, "jobs", &Options{Ack: &Ack{Replicas: b.count() * 2, TimeoutMs: b.ms()}})
			return err
		},
		"PurgeDead": func() error { _, err := q.PurgeDead(ctx, batchWith(b, "a", b.id())); return err },
	}
	tried, typed := 0, 0
	for round := 0; round < 30; round++ {
		for name, call := range calls {
			before := counter.n.Load()
			err := call()
			tried++
			if errors.Is(err, ErrInvalidArgument) {
				typed++
			} else {
				t.Errorf("%s: got %v, want ErrInvalidArgument", name, err)
			}
			if counter.n.Load() != before {
				t.Errorf("%s: an invalid call sent %d commands", name, counter.n.Load()-before)
			}
		}
	}
	t.Logf("bad calls tried %d, typed %d, commands sent %d", tried, typed, counter.n.Load())

	// The counter counts: a valid call sends commands (so the checks above can fail).
	if _, err := q.Counts(ctx); err != nil {
		t.Fatal(err)
	}
	if counter.n.Load() == 0 {
		t.Fatal("a valid call sent nothing: the hook does not count")
	}
}
