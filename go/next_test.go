package rwq

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// snapshot is every key of q's prefix (name without the prefix) and its value, with lease tokens
// replaced by "held" and sorted-set scores (times) left out, so that two queues built the same
// way compare equal.
func snapshot(t *testing.T, q *Queue, rdb *redis.Client) map[string]string {
	t.Helper()
	out := map[string]string{}
	keys := must[[]string](t)(rdb.Keys(ctx, q.prefix+":*").Result())
	for _, key := range keys {
		name := strings.TrimPrefix(key, q.prefix)
		var v string
		switch typ := must[string](t)(rdb.Type(ctx, key).Result()); typ {
		case "string":
			v = must[string](t)(rdb.Get(ctx, key).Result())
			if strings.HasPrefix(name, ":lease:") || strings.HasPrefix(name, ":leased_by_session:") {
				v = "held"
			}
		case "list":
			v = fmt.Sprint(must[[]string](t)(rdb.LRange(ctx, key, 0, -1).Result()))
		case "hash":
			h := must[map[string]string](t)(rdb.HGetAll(ctx, key).Result())
			fields := make([]string, 0, len(h))
			for f, x := range h {
				fields = append(fields, f+"="+x)
			}
			sort.Strings(fields)
			v = fmt.Sprint(fields)
		case "zset":
			v = fmt.Sprint(must[[]string](t)(rdb.ZRange(ctx, key, 0, -1).Result()))
		default:
			t.Fatalf("unexpected key type %s of %s", typ, key)
		}
		out[name] = v
	}
	return out
}

// RWQ-NEXT-001: complete_and_lease has exactly the effects and replies of complete then lease.
func TestCompleteAndLeaseEqualsCompleteThenLease(t *testing.T) {
	type result struct {
		outcomes []Outcome
		leases   []Lease
		state    map[string]string
	}
	run := func(owner, combined bool) result {
		q, rdb := newQueue(t, nil)
		must[struct{}](t)(struct{}{}, q.SetRetryPolicy(ctx, &RetryPolicy{MaxAttempts: 5, Backoff: BackoffFixed}))
		for _, id := range []string{"a", "b", "c", "d", "e"} {
			must[bool](t)(q.Add(ctx, id, []byte("data-"+id)))
		}
		must[bool](t)(q.AddDelayed(ctx, "z", []byte("later"), 60_000))
		held := must[[]Lease](t)(q.LeaseMany(ctx, 2, 30_000))     // a, b
		must[int64](t)(rdb.RPush(ctx, q.queue, "ghost").Result()) // the next lease meets it first
		ids := []string{"a", "never", "z", "b"}
		leases := []Lease{held[0], {ID: "never", Token: "t"}, held[1]}
		if owner { // b completed behind its holder's back: gone
			must[int64](t)(rdb.Del(ctx, q.prefix+":item:b").Result())
		}
		var r result
		switch {
		case combined && owner:
			r.outcomes, r.leases = must2[[]Outcome, []Lease](t)(q.CompleteOwnedAndLeaseMany(ctx, leases, 2, 10_000))
		case combined:
			r.outcomes, r.leases = must2[[]Outcome, []Lease](t)(q.CompleteAndLeaseMany(ctx, ids, 2, 10_000))
		case owner:
			r.outcomes = must[[]Outcome](t)(q.CompleteManyOwned(ctx, leases))
			r.leases = must[[]Lease](t)(q.LeaseMany(ctx, 2, 10_000))
		default:
			r.outcomes = must[[]Outcome](t)(q.CompleteMany(ctx, ids))
			r.leases = must[[]Lease](t)(q.LeaseMany(ctx, 2, 10_000))
		}
		for _, l := range r.leases {
			if l.Token == held[0].Token || l.Token != r.leases[0].Token || len(l.Token) != 32 {
				t.Fatalf("leases must share one fresh token: %+v", r.leases)
			}
			if stored := must[string](t)(rdb.Get(ctx, q.prefix+":lease:"+l.ID).Result()); stored != l.Token {
				t.Fatalf("lease key of %s holds %q, the client reports %q", l.ID, stored, l.Token)
			}
			if ttl := must[time.Duration](t)(rdb.PTTL(ctx, q.prefix+":lease:"+l.ID).Result()); ttl <= 0 || ttl > 10*time.Second {
				t.Fatalf("lease of %s has PTTL %d", l.ID, ttl)
			}
		}
		r.state = snapshot(t, q, rdb)
		for i := range r.leases {
			r.leases[i].Token = ""
		}
		return r
	}
	for _, owner := range []bool{false, true} {
		sequential, combined := run(owner, false), run(owner, true)
		if !reflect.DeepEqual(sequential, combined) {
			t.Fatalf("owner=%v: complete then lease gave\n%+v\ncomplete_and_lease gave\n%+v", owner, sequential, combined)
		}
		want := []Outcome{Done, Gone, Done, Done}
		if owner {
			want = []Outcome{Done, NotHolder, Gone}
		}
		if !reflect.DeepEqual(combined.outcomes, want) {
			t.Fatalf("owner=%v: outcomes %v, want %v", owner, combined.outcomes, want)
		}
		if len(combined.leases) != 2 || combined.leases[0].ID != "c" || string(combined.leases[0].Data) != "data-c" ||
			combined.leases[0].Attempt != 1 || combined.leases[1].ID != "d" {
			t.Fatalf("owner=%v: leases %+v", owner, combined.leases)
		}
	}
}

func must2[A, B any](t *testing.T) func(A, B, error) (A, B) {
	return func(a A, b B, err error) (A, B) {
		t.Helper()
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return a, b
	}
}

// RWQ-NEXT-003: a lost lease is an outcome, the item stays as it was, and the lease part runs.
func TestCompleteOwnedAndLeaseReportsLostLeasePerItem(t *testing.T) {
	q, rdb := newQueue(t, nil)
	must[[]bool](t)(q.AddMany(ctx, []Item{{"a", []byte("1")}, {"b", []byte("2")}, {"c", []byte("3")}}))
	a := *must[*Lease](t)(q.Lease(ctx, 30_000))
	stranger := Lease{ID: a.ID, Token: "not-the-token"}

	out, next, err := q.CompleteOwnedAndLease(ctx, stranger, 30_000)
	if err != nil || out != NotHolder || next == nil || next.ID != "b" || string(next.Data) != "2" {
		t.Fatalf("stranger: outcome %v, next %+v, err %v", out, next, err)
	}
	if tok := must[string](t)(rdb.Get(ctx, q.prefix+":lease:a").Result()); tok != a.Token {
		t.Fatal("a stranger changed the lease")
	}
	if must[int64](t)(rdb.Exists(ctx, q.prefix+":item:a").Result()) != 1 {
		t.Fatal("a stranger completed the item")
	}
	// The holder of b settles it and a stale lease on a in one call: per-item outcomes, and c.
	outs, leases, err := q.CompleteOwnedAndLeaseMany(ctx, []Lease{*next, stranger}, 5, 30_000)
	if err != nil || !reflect.DeepEqual(outs, []Outcome{Done, NotHolder}) || len(leases) != 1 || leases[0].ID != "c" {
		t.Fatalf("batch: outcomes %v, leases %+v, err %v", outs, leases, err)
	}
	// The holder of a completes it; nothing is ready: no lease and no error.
	out, next, err = q.CompleteOwnedAndLease(ctx, a, 30_000)
	if err != nil || out != Done || next != nil {
		t.Fatalf("holder: outcome %v, next %+v, err %v", out, next, err)
	}
	out, next, err = q.CompleteAndLease(ctx, "c", 30_000)
	if err != nil || out != Done || next != nil {
		t.Fatalf("complete by id: outcome %v, next %+v, err %v", out, next, err)
	}
	if out, _, err := q.CompleteAndLease(ctx, "c", 30_000); err != nil || out != Gone {
		t.Fatalf("second completer: outcome %v, err %v", out, err)
	}
	if c := must[Counts](t)(q.Counts(ctx)); c != (Counts{}) {
		t.Fatalf("counts %+v", c)
	}
}

// RWQ-NEXT-002: an invalid lease argument completes nothing, in the client and in the script.
func TestCompleteAndLeaseInvalidLeaseArgumentWritesNothing(t *testing.T) {
	q, rdb := newQueue(t, nil)
	must[[]bool](t)(q.AddMany(ctx, []Item{{"a", []byte("1")}, {"b", []byte("2")}}))
	a := *must[*Lease](t)(q.Lease(ctx, 30_000))
	before := snapshot(t, q, rdb)
	if _, _, err := q.CompleteOwnedAndLease(ctx, a, 0); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("lease_ms 0: %v", err)
	}
	if _, _, err := q.CompleteAndLeaseMany(ctx, []string{"a"}, 0, 1000); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("count 0: %v", err)
	}
	// The script's own checks, past the client's validation.
	for name, argv := range map[string][]any{
		"lease_ms":      {0, "tok", 1, "0", "0", "owner", a.ID, a.Token},
		"lease_ms long": {MaxDurationMs + 1, "tok", 1, "0", "0", "any", "a"},
		"token":         {1000, "", 1, "0", "0", "any", "a"},
		"count":         {1000, "tok", 1001, "0", "0", "any", "a"},
		"legacy":        {1000, "tok", 1, "2", "0", "any", "a"},
		"flat":          {1000, "tok", 1, "0", "2", "any", "a"},
		"mode":          {1000, "tok", 1, "0", "0", "mine", "a"},
		"no items":      {1000, "tok", 1, "0", "0", "any"},
		"odd pairs":     {1000, "tok", 1, "0", "0", "owner", "a"},
	} {
		_, err := q.eval(ctx, "complete_and_lease", q.both(), argv...)
		var rerr *Error
		if !errors.As(err, &rerr) || rerr.Code != CodeInvalidArgument {
			t.Errorf("%s: want INVALID_ARGUMENT from the script, got %v", name, err)
		}
	}
	if after := snapshot(t, q, rdb); !reflect.DeepEqual(before, after) {
		t.Fatalf("an invalid call wrote:\nbefore %v\nafter  %v", before, after)
	}
	if tok := must[string](t)(rdb.Get(ctx, q.prefix+":lease:a").Result()); tok != a.Token {
		t.Fatal("the lease on a changed")
	}
}

// RWQ-NEXT-004: a lease part that stops after 1000 skipped entries (again = 1, no item) is
// followed by ordinary leases, not reported as an empty queue.
func TestCompleteAndLeaseContinuesAfterAgain(t *testing.T) {
	ghosts := make([]any, 1000)
	for i := range ghosts {
		ghosts[i] = fmt.Sprintf("ghost-%d", i)
	}
	setup := func() (*Queue, *redis.Client) {
		q, rdb := newQueue(t, nil)
		must[bool](t)(q.Add(ctx, "done", nil))
		must[bool](t)(q.Add(ctx, "real", []byte("payload")))
		must[int64](t)(rdb.LRem(ctx, q.queue, 0, "done").Result())
		must[int64](t)(rdb.RPush(ctx, q.queue, ghosts...).Result()) // leased before "real"
		return q, rdb
	}
	// The layout does make the script reply again = 1 with no item.
	raw, _ := setup()
	reply, err := raw.eval(ctx, "complete_and_lease", raw.both(), 1000, "tok", 1, "0", "0", "any", "done")
	parts, _ := reply.([]any)
	if err != nil || len(parts) != 2 || !reflect.DeepEqual(parts[0], []any{int64(1)}) {
		t.Fatalf("raw reply %v, err %v", reply, err)
	}
	if lease, _ := parts[1].([]any); len(lease) != 3 || lease[0] != int64(1) {
		t.Fatalf("the lease part should say again = 1 with no item: %v", parts[1])
	}

	q, rdb := setup()
	outs, leases, err := q.CompleteAndLeaseMany(ctx, []string{"done"}, 3, 10_000)
	if err != nil || !reflect.DeepEqual(outs, []Outcome{Done}) || len(leases) != 1 || leases[0].ID != "real" ||
		string(leases[0].Data) != "payload" || len(leases[0].Token) != 32 {
		t.Fatalf("outcomes %v, leases %+v, err %v", outs, leases, err)
	}
	if tok := must[string](t)(rdb.Get(ctx, q.prefix+":lease:real").Result()); tok != leases[0].Token {
		t.Fatal("the continued lease is not held under the returned token")
	}
	if c := must[Counts](t)(q.Counts(ctx)); c != (Counts{Processing: 1}) {
		t.Fatalf("ghosts left behind: %+v", c)
	}
}

func TestCompleteAndLeaseWritesLegacyLeaseKey(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		q, rdb := newQueue(t, &Options{LegacyLeaseKey: legacy})
		must[[]bool](t)(q.AddMany(ctx, []Item{{"a", nil}, {"b", nil}}))
		a := must[*Lease](t)(q.Lease(ctx, 10_000))
		out, next, err := q.CompleteOwnedAndLease(ctx, *a, 10_000)
		if err != nil || out != Done || next == nil || next.ID != "b" {
			t.Fatalf("legacy=%v: outcome %v, next %+v, err %v", legacy, out, next, err)
		}
		if n := must[int64](t)(rdb.Exists(ctx, q.prefix+":leased_by_session:a").Result()); n != 0 {
			t.Fatalf("legacy=%v: complete left the legacy lease key of a", legacy)
		}
		tok, err := rdb.Get(ctx, q.prefix+":leased_by_session:b").Result()
		if legacy && tok != next.Token || !legacy && !errors.Is(err, redis.Nil) {
			t.Fatalf("legacy=%v: legacy lease key of b is %q (%v)", legacy, tok, err)
		}
	}
}

func TestCompleteAndLeaseNoScriptFallback(t *testing.T) {
	q, rdb := newQueue(t, nil)
	must[[]bool](t)(q.AddMany(ctx, []Item{{"a", nil}, {"b", nil}}))
	must[string](t)(rdb.ScriptFlush(ctx).Result())
	// "a" was never leased: completing it by id also takes it out of the queue, then b is leased.
	if out, next, err := q.CompleteAndLease(ctx, "a", 1000); err != nil || out != Done || next == nil || next.ID != "b" {
		t.Fatalf("after SCRIPT FLUSH: outcome %v, next %+v, err %v", out, next, err)
	}
}
