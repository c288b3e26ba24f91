package rwq

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

var ctx = context.Background()

// A stale copy of the scripts (the repository's lua/ changed, make generate not rerun) fails here.
func TestEmbeddedScriptsMatchManifest(t *testing.T) {
	repoLua := filepath.Join("..", "lua")
	raw, err := os.ReadFile(filepath.Join(repoLua, "manifest.json"))
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("not in the rwq repository (no ../lua/manifest.json): the embedded copy is checked there")
	}
	if err != nil {
		t.Fatalf("cannot read the repository's lua/manifest.json: %v", err)
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for name, entry := range m.Scripts {
		want[name] = entry.SHA1
		src, err := os.ReadFile(filepath.Join(repoLua, entry.File))
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha1.Sum(src); hex.EncodeToString(sum[:]) != entry.SHA1 {
			t.Errorf("lua/%s does not match lua/manifest.json (run make generate)", entry.File)
		}
	}
	if got := ScriptSHA1s(); !reflect.DeepEqual(got, want) {
		t.Fatalf("embedded scripts are stale; run `make generate` at the repository root\nembedded: %v\nmanifest: %v", got, want)
	}
}

// Invalid arguments fail with INVALID_ARGUMENT before any I/O: this queue's server does not exist.
func TestValidationBeforeIO(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer rdb.Close()
	q := must[*Queue](t)(New(rdb, "jobs", nil))
	good := Lease{ID: "a", Token: "t"}
	long := strings.Repeat("x", 513)
	cases := map[string]func() error{
		"empty id":          func() error { _, err := q.Add(ctx, "", nil); return err },
		"long id":           func() error { _, err := q.Add(ctx, long, nil); return err },
		"non-UTF-8 id":      func() error { _, err := q.Add(ctx, "a\xff", nil); return err },
		"one bad in many":   func() error { _, err := q.AddMany(ctx, []Item{{"a", nil}, {"", nil}}); return err },
		"negative delay":    func() error { _, err := q.AddDelayed(ctx, "a", nil, -1); return err },
		"delay too long":    func() error { _, err := q.AddDelayed(ctx, "a", nil, MaxDurationMs+1); return err },
		"lease_ms 0":        func() error { _, err := q.Lease(ctx, 0); return err },
		"lease_ms too long": func() error { _, err := q.Lease(ctx, MaxDurationMs+1); return err },
		"timeout -1":        func() error { _, err := q.LeaseBlocking(ctx, 1000, -1); return err },
		"count 0":           func() error { _, err := q.LeaseMany(ctx, 0, 1000); return err },
		"count 1001":        func() error { _, err := q.LeaseMany(ctx, 1001, 1000); return err },
		"renew no token":    func() error { _, err := q.Renew(ctx, Lease{ID: "a"}, 1000); return err },
		"renew long token":  func() error { _, err := q.Renew(ctx, Lease{ID: "a", Token: long}, 1000); return err },
		"renew lease_ms":    func() error { _, err := q.Renew(ctx, good, 0); return err },
		"complete empty":    func() error { _, err := q.Complete(ctx, ""); return err },
		"complete owned":    func() error { _, err := q.CompleteOwned(ctx, Lease{ID: "a"}); return err },
		"release no id":     func() error { _, err := q.Release(ctx, Lease{Token: "t"}); return err },
		"release delay":     func() error { _, err := q.ReleaseDelayed(ctx, good, -5); return err },
		"light chunk 0":     func() error { _, err := q.LightClean(ctx, 0); return err },
		"deep chunk 1001":   func() error { _, err := q.DeepClean(ctx, 1001); return err },
		"fail reason":       func() error { _, err := q.Fail(ctx, good, strings.Repeat("r", 1025)); return err },
		"policy backoff": func() error {
			return q.SetRetryPolicy(ctx, &RetryPolicy{Backoff: "linear"})
		},
		"policy jitter": func() error {
			return q.SetRetryPolicy(ctx, &RetryPolicy{Backoff: BackoffFixed, JitterPct: 101})
		},
		"next lease_ms 0": func() error { _, _, err := q.CompleteAndLease(ctx, "a", 0); return err },
		"next lease_ms long": func() error {
			_, _, err := q.CompleteOwnedAndLease(ctx, good, MaxDurationMs+1)
			return err
		},
		"next count 0":    func() error { _, _, err := q.CompleteAndLeaseMany(ctx, []string{"a"}, 0, 1000); return err },
		"next count 1001": func() error { _, _, err := q.CompleteAndLeaseMany(ctx, []string{"a"}, 1001, 1000); return err },
		"next no items":   func() error { _, _, err := q.CompleteAndLeaseMany(ctx, nil, 1, 1000); return err },
		"next no leases":  func() error { _, _, err := q.CompleteOwnedAndLeaseMany(ctx, nil, 1, 1000); return err },
		"next empty id":   func() error { _, _, err := q.CompleteAndLease(ctx, "", 1000); return err },
		"next long id":    func() error { _, _, err := q.CompleteAndLease(ctx, long, 1000); return err },
		"next no token":   func() error { _, _, err := q.CompleteOwnedAndLease(ctx, Lease{ID: "a"}, 1000); return err },
		"next long token": func() error { _, _, err := q.CompleteOwnedAndLease(ctx, Lease{ID: "a", Token: long}, 1000); return err },
		"next 1001 items": func() error {
			ids := strings.Split(strings.Repeat("a,", 1000)+"a", ",")
			_, _, err := q.CompleteAndLeaseMany(ctx, ids, 1, 1000)
			return err
		},
		"next 1001 leases": func() error {
			many := make([]Lease, 1001)
			for i := range many {
				many[i] = good
			}
			_, _, err := q.CompleteOwnedAndLeaseMany(ctx, many, 1, 1000)
			return err
		},
		"dead offset":  func() error { _, err := q.DeadItems(ctx, -1, 10); return err },
		"dead count":   func() error { _, err := q.DeadItems(ctx, 0, 0); return err },
		"dead get id":  func() error { _, err := q.DeadItem(ctx, long); return err },
		"requeue id":   func() error { _, err := q.RequeueDead(ctx, []string{""}); return err },
		"glob prefix":  func() error { _, err := New(rdb, "jobs*", nil); return err },
		"empty prefix": func() error { _, err := New(rdb, "", nil); return err },
		"retrying client": func() error {
			c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // go-redis retries 3 times by default
			defer c.Close()
			_, err := New(c, "jobs", nil)
			return err
		},
		"retrying cluster client": func() error {
			c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}, MaxRetries: 2})
			defer c.Close()
			_, err := New(c, "{jobs}", nil)
			return err
		},
		"cluster no tag": func() error {
			c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
			defer c.Close()
			_, err := New(c, "jobs", nil)
			return err
		},
	}
	for name, call := range cases {
		err := call()
		var rerr *Error
		if !errors.Is(err, ErrInvalidArgument) || !errors.As(err, &rerr) || rerr.Code != CodeInvalidArgument {
			t.Errorf("%s: want INVALID_ARGUMENT, got %v", name, err)
		}
	}
	// The same queue really is unreachable: a valid call is a REDIS_ERROR.
	if _, err := q.Add(ctx, "a", nil); !errors.Is(err, ErrRedis) {
		t.Fatalf("want REDIS_ERROR from an unreachable server, got %v", err)
	}
}

func TestAddLeaseCompleteRoundTrip(t *testing.T) {
	q, _ := newQueue(t, nil)
	payload := []byte("bin\x00\xff\xfe payload")
	if !must[bool](t)(q.Add(ctx, "a", payload)) {
		t.Fatal("first add should report true")
	}
	if must[bool](t)(q.Add(ctx, "a", []byte("other"))) {
		t.Fatal("second add of the same id should report false")
	}
	must[bool](t)(q.Add(ctx, "b", nil))
	must[bool](t)(q.Add(ctx, "ünïcode-✓", []byte{}))
	if c := must[Counts](t)(q.Counts(ctx)); c != (Counts{Queued: 3}) {
		t.Fatalf("counts %+v", c)
	}
	l := must[*Lease](t)(q.Lease(ctx, 30_000))
	if l == nil || l.ID != "a" || !bytes.Equal(l.Data, payload) || len(l.Token) != 32 || l.Attempt != 0 {
		t.Fatalf("lease %+v", l)
	}
	if !must[bool](t)(q.Renew(ctx, *l, 60_000)) {
		t.Fatal("renew of a held lease should succeed")
	}
	if c := must[Counts](t)(q.Counts(ctx)); c.Queued != 2 || c.Processing != 1 {
		t.Fatalf("counts %+v", c)
	}
	if !must[bool](t)(q.Complete(ctx, l.ID)) {
		t.Fatal("first completer should get true")
	}
	if must[bool](t)(q.Complete(ctx, l.ID)) {
		t.Fatal("second completer should get false")
	}
	if must[bool](t)(q.Renew(ctx, *l, 1000)) {
		t.Fatal("renew after complete should report false")
	}
	rest := must[[]Lease](t)(q.LeaseMany(ctx, 10, 1000))
	if len(rest) != 2 || rest[0].ID != "b" || rest[1].ID != "ünïcode-✓" || rest[0].Token != rest[1].Token || len(rest[1].Data) != 0 {
		t.Fatalf("lease_many %+v", rest)
	}
	if l := must[*Lease](t)(q.Lease(ctx, 1000)); l != nil {
		t.Fatalf("empty queue leased %+v", l)
	}
	if got := must[[]bool](t)(q.RenewMany(ctx, rest, 5000)); !reflect.DeepEqual(got, []bool{true, true}) {
		t.Fatalf("renew_many %v", got)
	}
	if got := must[[]Outcome](t)(q.CompleteMany(ctx, []string{"b", "ünïcode-✓", "never"})); !reflect.DeepEqual(got, []Outcome{Done, Done, Gone}) {
		t.Fatalf("complete_many %v", got)
	}
	if c := must[Counts](t)(q.Counts(ctx)); c != (Counts{}) {
		t.Fatalf("counts %+v", c)
	}
}

func TestBatchesSplitAt1000InOrder(t *testing.T) {
	q, rdb := newQueue(t, nil)
	items := make([]Item, 2500)
	for i := range items {
		items[i] = Item{fmt.Sprintf("id-%04d", i), []byte{byte(i)}}
	}
	items = append(items, Item{"id-0000", []byte("dup")}) // repeated id: reported false
	added := must[[]bool](t)(q.AddMany(ctx, items))
	if len(added) != 2501 || !added[0] || !added[2499] || added[2500] {
		t.Fatalf("add_many: %d results, last %v", len(added), added[2500])
	}
	var leases []Lease
	for len(leases) < 2500 {
		leases = append(leases, must[[]Lease](t)(q.LeaseMany(ctx, 1000, 60_000))...)
	}
	for i, l := range leases {
		if l.ID != items[i].ID {
			t.Fatalf("lease %d is %s, want %s", i, l.ID, items[i].ID)
		}
	}
	renewed := must[[]bool](t)(q.RenewMany(ctx, leases, 60_000))
	if len(renewed) != 2500 || !renewed[2499] {
		t.Fatalf("renew_many: %d", len(renewed))
	}
	out := must[[]Outcome](t)(q.CompleteManyOwned(ctx, leases))
	if len(out) != 2500 || out[0] != Done || out[2499] != Done {
		t.Fatalf("complete_many owned: %d", len(out))
	}
	if n := must[int64](t)(rdb.DBSize(ctx).Result()); n != 0 && must[int64](t)(rdb.Exists(ctx, q.queue, q.inflight).Result()) != 0 {
		t.Fatal("lists should be empty")
	}
}

func TestOwnerChecks(t *testing.T) {
	q, rdb := newQueue(t, nil)
	must[[]bool](t)(q.AddMany(ctx, []Item{{"a", []byte("1")}, {"b", []byte("2")}}))
	a := *must[*Lease](t)(q.Lease(ctx, 30_000))
	stranger := Lease{ID: a.ID, Token: "not-the-token"}

	_, err := q.CompleteOwned(ctx, stranger)
	var rerr *Error
	if !errors.Is(err, ErrLeaseLost) || !errors.As(err, &rerr) || rerr.Code != CodeLeaseLost {
		t.Fatalf("complete by a stranger: want LEASE_LOST, got %v", err)
	}
	if _, err := q.Release(ctx, stranger); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("release by a stranger: want LEASE_LOST, got %v", err)
	}
	if _, err := q.Fail(ctx, stranger, "x"); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("fail by a stranger: want LEASE_LOST, got %v", err)
	}
	if tok := must[string](t)(rdb.Get(ctx, q.prefix+":lease:a").Result()); tok != a.Token {
		t.Fatal("a stranger changed the lease")
	}
	if got := must[[]Outcome](t)(q.CompleteManyOwned(ctx, []Lease{stranger, a})); !reflect.DeepEqual(got, []Outcome{NotHolder, Done}) {
		t.Fatalf("complete_many owned: %v", got)
	}
	// Release gives the item back behind the waiting ones; releasing a completed item is "gone".
	b := *must[*Lease](t)(q.Lease(ctx, 30_000))
	if !must[bool](t)(q.Release(ctx, b)) {
		t.Fatal("release by the holder should succeed")
	}
	b2 := *must[*Lease](t)(q.Lease(ctx, 30_000))
	must[int64](t)(rdb.Del(ctx, q.prefix+":item:b").Result()) // deleted behind the holder's back
	if must[bool](t)(q.Release(ctx, b2)) {
		t.Fatal("release of an item that no longer exists should report false")
	}
	if got := must[[]Outcome](t)(q.ReleaseMany(ctx, []Lease{b2})); !reflect.DeepEqual(got, []Outcome{Gone}) {
		t.Fatalf("release_many of an item that no longer exists: %v", got)
	}
}

func TestScriptErrorsMapToCodes(t *testing.T) {
	q, _ := newQueue(t, nil)
	// Bypass client validation to see the script's own RWQ_INVALID_ARGUMENT reply mapped.
	_, err := q.eval(ctx, "lease", q.both(), 0, "tok", 1, "0", "0")
	var rerr *Error
	if !errors.As(err, &rerr) || rerr.Code != CodeInvalidArgument || !strings.Contains(rerr.Message, "lease_ms") {
		t.Fatalf("want INVALID_ARGUMENT from the script, got %#v", err)
	}
	// A non-RWQ server error is a REDIS_ERROR that unwraps to the go-redis error.
	_, err = q.eval(ctx, "counts", []string{"x:queue"})
	if err == nil || !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("counts with wrong keys: %v", err)
	}
	err = translate(redis.ErrClosed)
	if !errors.Is(err, ErrRedis) || !errors.Is(err, redis.ErrClosed) {
		t.Fatalf("transport error: %v", err)
	}
	if err := checkVersion("# Server\r\nredis_version:6.0.16\r\n"); !errors.Is(err, ErrUnsupportedServer) {
		t.Fatalf("6.0 should be refused: %v", err)
	}
	if err := checkVersion("redis_version:6.2.0\r\n"); err != nil {
		t.Fatal(err)
	}
}

// A key of the layout holding another type is WRONG_TYPE from the script, before any write
// (SPEC RWQ-SCRIPT-007), not a REDIS_ERROR.
func TestWrongTypedKeyIsWrongType(t *testing.T) {
	q, rdb := newQueue(t, nil)
	must[bool](t)(q.Add(ctx, "a", []byte("x")))
	must[string](t)(rdb.Set(ctx, q.queue, "not a list", 0).Result())
	if _, err := q.Lease(ctx, 1000); !errors.Is(err, ErrWrongType) {
		t.Fatalf("lease with a string queue key: want WRONG_TYPE, got %v", err)
	}
	if n := must[int64](t)(rdb.Exists(ctx, q.inflight, q.prefix+":lease:a").Result()); n != 0 {
		t.Fatalf("the refused lease wrote %d keys", n)
	}
}

func TestNoScriptFallback(t *testing.T) {
	q, rdb := newQueue(t, nil)
	must[string](t)(rdb.ScriptFlush(ctx).Result())
	if !must[bool](t)(q.Add(ctx, "a", []byte("x"))) {
		t.Fatal("add after SCRIPT FLUSH")
	}
}

func TestBlockingLease(t *testing.T) {
	q, _ := newQueue(t, nil)
	start := time.Now()
	if l := must[*Lease](t)(q.LeaseBlocking(ctx, 1000, 300)); l != nil {
		t.Fatalf("empty queue leased %+v", l)
	}
	if d := time.Since(start); d < 250*time.Millisecond || d > 2*time.Second {
		t.Fatalf("timeout 300 ms took %v", d)
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		_, _ = q.Add(ctx, "late", []byte("x"))
	}()
	start = time.Now()
	l := must[*Lease](t)(q.LeaseBlocking(ctx, 5000, 0))
	if l == nil || l.ID != "late" || string(l.Data) != "x" {
		t.Fatalf("blocking lease got %+v", l)
	}
	if d := time.Since(start); d > 900*time.Millisecond {
		t.Fatalf("blocking lease took %v for an item added after 200 ms", d)
	}
	if !must[bool](t)(q.CompleteOwned(ctx, *l)) {
		t.Fatal("claimed lease should be held")
	}
	// A cancelled context ends the wait with a REDIS_ERROR that unwraps to the context error.
	cctx, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
	defer cancel()
	if _, err := q.LeaseBlocking(cctx, 1000, 0); !errors.Is(err, ErrRedis) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled wait: %v", err)
	}
}

func TestLightCleanRequeuesAbandonedAndDropsGhosts(t *testing.T) {
	q, rdb := newQueue(t, nil)
	must[bool](t)(q.Add(ctx, "held", []byte("y")))
	must[bool](t)(q.Add(ctx, "a", []byte("x")))
	must[*Lease](t)(q.Lease(ctx, 60_000))
	short := *must[*Lease](t)(q.Lease(ctx, 20))
	must[int64](t)(rdb.LPush(ctx, q.inflight, "ghost").Result())
	time.Sleep(60 * time.Millisecond)
	rep := must[CleanReport](t)(q.LightClean(ctx, 1))
	if !reflect.DeepEqual(rep.Requeued, []string{"a"}) || rep.Dropped != 1 {
		t.Fatalf("light clean: %+v", rep)
	}
	if must[bool](t)(q.Renew(ctx, short, 1000)) {
		t.Fatal("an expired lease must not be renewed")
	}
	again := must[*Lease](t)(q.Lease(ctx, 1000))
	if again == nil || again.ID != "a" || again.Token == short.Token {
		t.Fatalf("requeued item not leased again: %+v", again)
	}
	if c := must[Counts](t)(q.Counts(ctx)); c.Processing != 2 || c.Queued != 0 {
		t.Fatalf("counts %+v", c)
	}
}

func TestDeepCleanRequeuesOrphans(t *testing.T) {
	q, rdb := newQueue(t, nil)
	must[bool](t)(q.Add(ctx, "listed", []byte("x")))
	must[string](t)(rdb.Set(ctx, q.prefix+":item:orphan", "o", 0).Result())
	must[int64](t)(rdb.LPush(ctx, q.queue, "ghost").Result())
	rep := must[CleanReport](t)(q.DeepClean(ctx, DefaultDeepCleanChunk))
	if !reflect.DeepEqual(rep.Requeued, []string{"orphan"}) || rep.Dropped != 1 {
		t.Fatalf("deep clean: %+v", rep)
	}
	if ids := must[[]string](t)(rdb.LRange(ctx, q.queue, 0, -1).Result()); !reflect.DeepEqual(ids, []string{"orphan", "listed"}) {
		t.Fatalf("queue after deep clean: %v", ids)
	}
	if n := must[[]string](t)(rdb.Keys(ctx, q.prefix+":deep_clean:*").Result()); len(n) != 0 {
		t.Fatalf("run index left behind: %v", n)
	}
}

// An older client's item whose id is over 512 bytes is left alone, not sent to the requeue
// script (which would refuse the whole call and leave the other orphans out).
func TestDeepCleanSkipsOverlongIDs(t *testing.T) {
	q, rdb := newQueue(t, nil)
	must[string](t)(rdb.Set(ctx, q.prefix+":item:"+strings.Repeat("x", MaxIDBytes+1), "l", 0).Result())
	must[string](t)(rdb.Set(ctx, q.prefix+":item:orphan", "o", 0).Result())
	rep := must[CleanReport](t)(q.DeepClean(ctx, DefaultDeepCleanChunk))
	if !reflect.DeepEqual(rep.Requeued, []string{"orphan"}) {
		t.Fatalf("deep clean: %+v", rep)
	}
}

func TestLegacyLeaseKey(t *testing.T) {
	q, rdb := newQueue(t, &Options{LegacyLeaseKey: true})
	must[bool](t)(q.Add(ctx, "a", nil))
	l := must[*Lease](t)(q.Lease(ctx, 10_000))
	if tok := must[string](t)(rdb.Get(ctx, q.prefix+":leased_by_session:a").Result()); tok != l.Token {
		t.Fatal("legacy lease key not written")
	}
	must[bool](t)(q.Complete(ctx, "a"))
	if n := must[int64](t)(rdb.Exists(ctx, q.prefix+":leased_by_session:a").Result()); n != 0 {
		t.Fatal("complete left the legacy lease key")
	}
}

func TestEvictionPolicyWarning(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: standaloneAddr, MaxRetries: -1})
	defer rdb.Close()
	must[string](t)(rdb.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Result())
	defer rdb.ConfigSet(ctx, "maxmemory-policy", "noeviction")
	var warned atomic.Value
	q := must[*Queue](t)(New(rdb, "warn", &Options{Warn: func(m string) { warned.Store(m) }}))
	must[Counts](t)(q.Counts(ctx))
	if m, _ := warned.Load().(string); !strings.Contains(m, "allkeys-lru") {
		t.Fatalf("no eviction warning: %q", m)
	}
}

// A policy written by another client is read as the scripts read it; a malformed field once
// made RetryPolicy fail with REDIS_ERROR where Python read 0.
func TestRetryPolicyReadLikeTheScripts(t *testing.T) {
	q, rdb := newQueue(t, nil)
	rdb.HSet(ctx, q.prefix+":policy", "max_attempts", "abc", "backoff", "linear", "cap_ms", "2000000000000000",
		"jitter_pct", "0010", "dead_max_count", "\u0663", "dead_max_age_ms", "nan", "later_field", "9")
	want := RetryPolicy{Backoff: BackoffFixed, JitterPct: 10}
	if p := must[*RetryPolicy](t)(q.RetryPolicy(ctx)); p == nil || *p != want {
		t.Fatalf("policy read as %+v, want %+v", p, want)
	}
}

func TestRetryProfile(t *testing.T) {
	q, _ := newQueue(t, nil)
	if p := must[*RetryPolicy](t)(q.RetryPolicy(ctx)); p != nil {
		t.Fatalf("fresh queue has policy %+v", p)
	}
	policy := RetryPolicy{MaxAttempts: 2, Backoff: BackoffFixed, DeadMaxCount: 10}
	if err := q.SetRetryPolicy(ctx, &policy); err != nil {
		t.Fatal(err)
	}
	if p := must[*RetryPolicy](t)(q.RetryPolicy(ctx)); p == nil || *p != policy {
		t.Fatalf("policy read back %+v", p)
	}
	must[bool](t)(q.Add(ctx, "a", []byte("payload")))
	l := must[*Lease](t)(q.Lease(ctx, 10_000))
	if l.Attempt != 1 {
		t.Fatalf("first attempt %d", l.Attempt)
	}
	if r := must[FailResult](t)(q.Fail(ctx, *l, "boom")); r != (FailResult{FailRetry, 0}) {
		t.Fatalf("first fail %+v", r)
	}
	l = must[*Lease](t)(q.Lease(ctx, 10_000))
	if l.Attempt != 2 {
		t.Fatalf("second attempt %d", l.Attempt)
	}
	if r := must[FailResult](t)(q.Fail(ctx, *l, "boom again")); r.Outcome != FailDead {
		t.Fatalf("second fail %+v", r)
	}
	dead := must[[]DeadItem](t)(q.DeadItems(ctx, 0, 10))
	if len(dead) != 1 || dead[0].ID != "a" || dead[0].Reason != "boom again" || dead[0].Attempts != 2 || dead[0].Data != nil || dead[0].DeadAtMs == 0 {
		t.Fatalf("dead list %+v", dead)
	}
	d := must[*DeadItem](t)(q.DeadItem(ctx, "a"))
	if d == nil || string(d.Data) != "payload" {
		t.Fatalf("dead get %+v", d)
	}
	if d := must[*DeadItem](t)(q.DeadItem(ctx, "nope")); d != nil {
		t.Fatalf("dead get of a live id %+v", d)
	}
	if c := must[Counts](t)(q.Counts(ctx)); c != (Counts{Dead: 1}) {
		t.Fatalf("counts %+v", c)
	}
	if must[bool](t)(q.Add(ctx, "a", nil)) {
		t.Fatal("add of a dead id must report false")
	}
	if got := must[[]bool](t)(q.RequeueDead(ctx, []string{"a", "nope"})); !reflect.DeepEqual(got, []bool{true, false}) {
		t.Fatalf("requeue %v", got)
	}
	l = must[*Lease](t)(q.Lease(ctx, 10_000))
	if l.ID != "a" || l.Attempt != 1 || string(l.Data) != "payload" {
		t.Fatalf("requeued lease %+v", l)
	}
	// Backoff: a positive delay makes the item delayed.
	policy.BaseMs = 60_000
	must[struct{}](t)(struct{}{}, q.SetRetryPolicy(ctx, &policy))
	if r := must[FailResult](t)(q.Fail(ctx, *l, "")); r != (FailResult{FailRetry, 60_000}) {
		t.Fatalf("backoff fail %+v", r)
	}
	if c := must[Counts](t)(q.Counts(ctx)); c != (Counts{Delayed: 1}) {
		t.Fatalf("counts %+v", c)
	}
	// Purge, and trim by count after lease expiry dead-letters.
	must[bool](t)(q.Complete(ctx, "a")) // cancels the delayed item
	must[bool](t)(q.Add(ctx, "b", nil))
	policy = RetryPolicy{MaxAttempts: 1, Backoff: BackoffFixed}
	must[struct{}](t)(struct{}{}, q.SetRetryPolicy(ctx, &policy))
	must[*Lease](t)(q.Lease(ctx, 10))
	time.Sleep(40 * time.Millisecond)
	rep := must[CleanReport](t)(q.LightClean(ctx, DefaultLightCleanChunk))
	if !reflect.DeepEqual(rep.Dead, []string{"b"}) {
		t.Fatalf("light clean should dead-letter b: %+v", rep)
	}
	if got := must[[]bool](t)(q.PurgeDead(ctx, []string{"b", "b"})); !reflect.DeepEqual(got, []bool{true, false}) {
		t.Fatalf("purge %v", got)
	}
	if err := q.SetRetryPolicy(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if p := must[*RetryPolicy](t)(q.RetryPolicy(ctx)); p != nil {
		t.Fatalf("cleared policy still there: %+v", p)
	}
	if n := must[int64](t)(q.TrimDead(ctx)); n != 0 {
		t.Fatalf("trim without dead items removed %d", n)
	}
}

// TestRetriesSteeredFromCode: FailWith's dead, delay, fallback and detail (RWQ-RETRY-016..019)
// and ReleaseWith's refund (RWQ-RETRY-020).
func TestRetriesSteeredFromCode(t *testing.T) {
	q, rdb := newQueue(t, nil)
	policy := RetryPolicy{MaxAttempts: 3, Backoff: BackoffFixed, BaseMs: 5000, JitterPct: 100}
	must[struct{}](t)(struct{}{}, q.SetRetryPolicy(ctx, &policy))
	must[bool](t)(q.Add(ctx, "a", []byte("A")))
	l := must[*Lease](t)(q.Lease(ctx, 10_000))
	if !must[bool](t)(q.ReleaseWith(ctx, *l, ReleaseOptions{RefundAttempt: true})) {
		t.Fatal("refunded release")
	}
	if n := rdb.HExists(ctx, q.Prefix()+":attempts", "a").Val(); n {
		t.Fatal("a refunded first attempt leaves no count")
	}
	l = must[*Lease](t)(q.Lease(ctx, 10_000))
	if l.Attempt != 1 {
		t.Fatalf("attempt after a refund %d", l.Attempt)
	}
	later := int64(600_000)
	if r := must[FailResult](t)(q.FailWith(ctx, *l, "later", FailOptions{DelayMs: &later})); r != (FailResult{FailRetry, 600_000}) {
		t.Fatalf("fail with a delay %+v", r)
	}
	rdb.ZAdd(ctx, q.Prefix()+":delayed", redis.Z{Score: 0, Member: "a"})
	l = must[*Lease](t)(q.Lease(ctx, 10_000))
	if r := must[FailResult](t)(q.FailWith(ctx, *l, "bad", FailOptions{Dead: true, Detail: "trace"})); r.Outcome != FailDead {
		t.Fatalf("fail dead %+v", r)
	}
	d := must[*DeadItem](t)(q.DeadItem(ctx, "a"))
	if d == nil || d.Reason != "bad" || d.Detail != "trace" || d.Attempts != 2 {
		t.Fatalf("dead item %+v", d)
	}
	must[struct{}](t)(struct{}{}, q.SetRetryPolicy(ctx, nil))
	must[bool](t)(q.Add(ctx, "b", nil))
	l = must[*Lease](t)(q.Lease(ctx, 10_000))
	if r := must[FailResult](t)(q.FailWith(ctx, *l, "", FailOptions{FallbackDelayMs: 1000})); r != (FailResult{FailRetry, 1000}) {
		t.Fatalf("fallback without a policy %+v", r)
	}
}

func TestDelayProfile(t *testing.T) {
	q, _ := newQueue(t, nil)
	if !must[bool](t)(q.AddDelayed(ctx, "later", []byte("x"), 300)) {
		t.Fatal("delayed add")
	}
	if must[bool](t)(q.Add(ctx, "later", nil)) {
		t.Fatal("add of a delayed id must report false")
	}
	if l := must[*Lease](t)(q.Lease(ctx, 1000)); l != nil {
		t.Fatalf("leased before due: %+v", l)
	}
	start := time.Now()
	l := must[*Lease](t)(q.LeaseBlocking(ctx, 1000, 3000))
	if l == nil || l.ID != "later" {
		t.Fatalf("blocking lease of a delayed item: %+v", l)
	}
	if d := time.Since(start); d < 200*time.Millisecond || d > 1500*time.Millisecond {
		t.Fatalf("delayed item arrived after %v", d)
	}
	if !must[bool](t)(q.ReleaseDelayed(ctx, *l, 60_000)) {
		t.Fatal("delayed release")
	}
	if c := must[Counts](t)(q.Counts(ctx)); c != (Counts{Delayed: 1}) {
		t.Fatalf("counts %+v", c)
	}
	if !must[bool](t)(q.Complete(ctx, "later")) {
		t.Fatal("complete should cancel a delayed item")
	}
	got := must[[]bool](t)(q.AddManyDelayed(ctx, []Item{{"p", nil}, {"q", nil}}, 1))
	if !reflect.DeepEqual(got, []bool{true, true}) {
		t.Fatalf("add_many delayed %v", got)
	}
	time.Sleep(20 * time.Millisecond)
	if rep := must[CleanReport](t)(q.LightClean(ctx, 10)); rep.Promoted != 2 {
		t.Fatalf("light clean should promote 2: %+v", rep)
	}
	leases := must[[]Lease](t)(q.LeaseMany(ctx, 5, 1000))
	if out := must[[]Outcome](t)(q.ReleaseManyDelayed(ctx, leases, 50_000)); !reflect.DeepEqual(out, []Outcome{Done, Done}) {
		t.Fatalf("release_many delayed %v", out)
	}
}

func TestCluster(t *testing.T) {
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{clusterAddr}})
	defer rdb.Close()
	q := must[*Queue](t)(New(rdb, "{jobs}", nil))
	must[bool](t)(q.Add(ctx, "a", []byte("x")))
	l := must[*Lease](t)(q.LeaseBlocking(ctx, 10_000, 100))
	if l == nil || l.ID != "a" {
		t.Fatalf("cluster lease %+v", l)
	}
	go func() { time.Sleep(100 * time.Millisecond); _, _ = q.Add(ctx, "b", nil) }()
	if l := must[*Lease](t)(q.LeaseBlocking(ctx, 10_000, 2000)); l == nil || l.ID != "b" {
		t.Fatalf("cluster blocking lease %+v", l)
	}
	must[string](t)(rdb.Set(ctx, "{jobs}:item:orphan", "o", 0).Result())
	rep := must[CleanReport](t)(q.DeepClean(ctx, 10))
	if !reflect.DeepEqual(rep.Requeued, []string{"orphan"}) {
		t.Fatalf("cluster deep clean %+v", rep)
	}
	if c := must[Counts](t)(q.Counts(ctx)); c != (Counts{Queued: 1, Processing: 2}) {
		t.Fatalf("cluster counts %+v", c)
	}
}

// A first chunk whose entries are all removed must not end the clean early (cursor 0 vs done).
func TestLightCleanContinuesAfterAFullyRemovedChunk(t *testing.T) {
	q, rdb := newQueue(t, nil)
	for _, id := range []string{"a", "b", "c"} {
		must[bool](t)(q.Add(ctx, id, []byte(id)))
	}
	for i := 0; i < 3; i++ { // moved without a lease: abandoned
		if err := rdb.LMove(ctx, q.queue, q.inflight, "RIGHT", "LEFT").Err(); err != nil {
			t.Fatal(err)
		}
	}
	rep := must[CleanReport](t)(q.LightClean(ctx, 1))
	if !reflect.DeepEqual(rep.Requeued, []string{"a", "b", "c"}) {
		t.Fatalf("every abandoned entry must be requeued in one clean: %+v", rep)
	}
}

// Profile flat: leases go to <prefix>:in_flight, completes remove them, and a paced clean
// requeues every expired one, past its first chunk.
func TestFlatInFlight(t *testing.T) {
	q, rdb := newQueue(t, &Options{FlatInFlight: true})
	for _, id := range []string{"a", "b", "c"} {
		must[bool](t)(q.Add(ctx, id, []byte(id)))
	}
	l := must[*Lease](t)(q.Lease(ctx, 60_000))
	if n := must[int64](t)(rdb.LLen(ctx, q.inflight).Result()); n != 0 {
		t.Fatalf("a flat lease must not use the processing list: %d entries", n)
	}
	if _, err := rdb.ZScore(ctx, q.prefix+":in_flight", l.ID).Result(); err != nil {
		t.Fatalf("the flat lease is not in in_flight: %v", err)
	}
	must[[]Lease](t)(q.LeaseMany(ctx, 2, 1))
	if c := must[Counts](t)(q.Counts(ctx)); c.Processing != 3 {
		t.Fatalf("counts must count flat leases in flight: %+v", c)
	}
	must[bool](t)(q.Complete(ctx, l.ID))
	time.Sleep(5 * time.Millisecond)
	rep := must[CleanReport](t)(q.LightCleanPaced(ctx, 1, 60_000))
	if !reflect.DeepEqual(rep.Requeued, []string{"b", "c"}) {
		t.Fatalf("a paced pass must requeue every expired flat lease: %+v", rep)
	}
	if n := must[int64](t)(rdb.ZCard(ctx, q.prefix+":in_flight").Result()); n != 0 {
		t.Fatalf("in_flight keeps %d members", n)
	}
}
