package rwq

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const testShards = 4

func newSharded(t *testing.T, shards int) (*ShardedQueue, *redis.Client, string) {
	t.Helper()
	return newShardedWith(t, shards, nil)
}

func newShardedWith(t *testing.T, shards int, opts *Options) (*ShardedQueue, *redis.Client, string) {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: standaloneAddr, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	queueSeq++
	name := fmt.Sprintf("sh%d-%s", queueSeq, t.Name())
	return must[*ShardedQueue](t)(NewSharded(rdb, name, shards, opts)), rdb, name
}

// idsOn returns n ids that the routing rule, computed here on its own, puts on shard.
func idsOn(shard, n int, tag string) []string {
	var ids []string
	for k := 0; len(ids) < n; k++ {
		id := fmt.Sprintf("%s%d", tag, k)
		if int(crc32.ChecksumIEEE([]byte(id))%testShards) == shard {
			ids = append(ids, id)
		}
	}
	return ids
}

// commands records the commands a client sends, as their arguments joined by spaces.
type commands struct {
	mu  sync.Mutex
	log []string
}

func (c *commands) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *commands) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (c *commands) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		parts := make([]string, len(cmd.Args()))
		for i, a := range cmd.Args() {
			parts[i] = fmt.Sprint(a)
		}
		c.mu.Lock()
		c.log = append(c.log, strings.Join(parts, " "))
		c.mu.Unlock()
		return next(ctx, cmd)
	}
}

// take returns the commands recorded since the last take.
func (c *commands) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.log
	c.log = nil
	return out
}

// scriptRuns counts the runs of a canonical script among cmds (EVALSHA, or EVAL after NOSCRIPT).
func scriptRuns(cmds []string, name string) int {
	n := 0
	for _, c := range cmds {
		if strings.HasPrefix(strings.ToLower(c), "evalsha "+scripts[name].Hash()+" ") {
			n++
		}
	}
	return n
}

func lowerNames(cmds []string) []string {
	out := make([]string, len(cmds))
	for i, c := range cmds {
		out[i], _, _ = strings.Cut(strings.ToLower(c), " ")
	}
	return out
}

// RWQ-SHARD-001/002: each id on shard CRC-32 mod N, whichever way it is added; add idempotent.
func TestShardedRouting(t *testing.T) {
	s, rdb, name := newSharded(t, testShards)
	if s.Prefix() != name || s.Bell() != "{"+name+"#bell}" || len(s.Shards()) != testShards {
		t.Fatalf("prefix %q bell %q shards %d", s.Prefix(), s.Bell(), len(s.Shards()))
	}
	for i, q := range s.Shards() {
		if want := fmt.Sprintf("{%s#%d}", name, i); q.Prefix() != want {
			t.Fatalf("shard %d prefix %q, want %q", i, q.Prefix(), want)
		}
	}
	var all, delayed []string
	for shard := 0; shard < testShards; shard++ {
		var items []Item
		for _, id := range idsOn(shard, 3, fmt.Sprintf("s%d-", shard)) {
			items = append(items, Item{ID: id, Data: []byte(id)})
		}
		all = append(all, items[0].ID, items[2].ID)
		delayed = append(delayed, items[1].ID)
		if !must[bool](t)(s.Add(ctx, items[0].ID, items[0].Data)) {
			t.Fatal("Add: false")
		}
		if !must[bool](t)(s.AddDelayed(ctx, items[1].ID, items[1].Data, 60_000)) {
			t.Fatal("AddDelayed: false")
		}
		if got := must[[]bool](t)(s.AddMany(ctx, items)); fmt.Sprint(got) != "[false false true]" {
			t.Fatalf("AddMany must answer in input order: %v", got)
		}
	}
	for _, id := range all {
		shard := int(crc32.ChecksumIEEE([]byte(id)) % testShards)
		if s.ShardOf(id) != shard {
			t.Fatalf("ShardOf(%q) = %d, want %d", id, s.ShardOf(id), shard)
		}
		for other := 0; other < testShards; other++ {
			key := fmt.Sprintf("{%s#%d}:item:%s", name, other, id)
			if n := must[int64](t)(rdb.Exists(ctx, key).Result()); (n == 1) != (other == shard) {
				t.Fatalf("%s: key on shard %d exists=%d, its shard is %d", id, other, n, shard)
			}
		}
	}
	for _, id := range delayed {
		for other := 0; other < testShards; other++ {
			err := rdb.ZScore(ctx, fmt.Sprintf("{%s#%d}:delayed", name, other), id).Err()
			if (err == nil) != (other == s.ShardOf(id)) {
				t.Fatalf("delayed %s: on shard %d: %v, its shard is %d", id, other, err, s.ShardOf(id))
			}
		}
	}
	if got := must[string](t)(rdb.Get(ctx, "{"+name+"#0}:shards").Result()); got != "4" {
		t.Fatalf("the shard count recorded is %q", got)
	}
	if added := must[bool](t)(s.Add(ctx, idsOn(2, 1, "s2-")[0], []byte("again"))); added {
		t.Fatal("a known id was added again on its shard")
	}
	if c := must[Counts](t)(s.Counts(ctx)); c != (Counts{Queued: 2 * testShards, Delayed: testShards}) {
		t.Fatalf("counts must sum the shards: %+v", c)
	}
}

// RWQ-SHARD-004: with every shard non-empty, N consecutive leases take one item from each shard,
// whatever shard the rotation starts at; LeaseMany starts one shard further each call.
func TestShardedRotationBound(t *testing.T) {
	for start := 0; start < testShards; start++ {
		s, _, _ := newSharded(t, testShards)
		for shard := 0; shard < testShards; shard++ {
			var items []Item
			for _, id := range idsOn(shard, 5, fmt.Sprintf("r%d-", shard)) {
				items = append(items, Item{ID: id})
			}
			must[[]bool](t)(s.AddMany(ctx, items))
		}
		s.next = start
		for round := 0; round < 3; round++ {
			var seen []int
			for i := 0; i < testShards; i++ {
				l := must[*Lease](t)(s.Lease(ctx, 30_000))
				seen = append(seen, s.ShardOf(l.ID))
			}
			want := []int{}
			for i := 0; i < testShards; i++ {
				want = append(want, (start+i)%testShards)
			}
			if fmt.Sprint(seen) != fmt.Sprint(want) {
				t.Fatalf("start %d round %d: leases came from shards %v, want %v", start, round, seen, want)
			}
		}
		// 2 items left per shard: LeaseMany(3) takes 2 from shard next and 1 from the one after.
		s.next = start
		got := must[[]Lease](t)(s.LeaseMany(ctx, 3, 30_000))
		if len(got) != 3 || s.ShardOf(got[0].ID) != start || s.ShardOf(got[1].ID) != start ||
			s.ShardOf(got[2].ID) != (start+1)%testShards {
			t.Fatalf("LeaseMany from start %d: %v", start, got)
		}
		if s.next != (start+1)%testShards {
			t.Fatalf("LeaseMany must advance the rotation by one: %d", s.next)
		}
		rest := must[[]Lease](t)(s.LeaseMany(ctx, 100, 30_000))
		if len(rest) != testShards*2-3 {
			t.Fatalf("LeaseMany took %d of %d", len(rest), testShards*2-3)
		}
		if none := must[*Lease](t)(s.Lease(ctx, 30_000)); none != nil {
			t.Fatalf("an empty sharded queue leased %v", none)
		}
	}
}

// RWQ-SHARD-002: renew, complete, release and fail go to the item's shard; batches answer in
// input order.
func TestShardedSettle(t *testing.T) {
	s, rdb, name := newSharded(t, testShards)
	var items []Item
	for shard := testShards - 1; shard >= 0; shard-- {
		for _, id := range idsOn(shard, 2, fmt.Sprintf("t%d-", shard)) {
			items = append(items, Item{ID: id, Data: []byte("D" + id)})
		}
	}
	must[[]bool](t)(s.AddMany(ctx, items))
	leases := must[[]Lease](t)(s.LeaseMany(ctx, 100, 30_000))
	if len(leases) != len(items) {
		t.Fatalf("leased %d of %d", len(leases), len(items))
	}
	byID := map[string]Lease{}
	for _, l := range leases {
		byID[l.ID] = l
		if string(l.Data) != "D"+l.ID {
			t.Fatalf("payload of %s: %q", l.ID, l.Data)
		}
	}
	ordered := make([]Lease, len(items))
	for i, it := range items {
		ordered[i] = byID[it.ID]
	}
	stale := ordered[0]
	stale.Token = "not-the-token"

	if !must[bool](t)(s.Renew(ctx, ordered[0], 60_000)) {
		t.Fatal("Renew: false")
	}
	if got := must[[]bool](t)(s.RenewMany(ctx, []Lease{ordered[3], stale, ordered[5]}, 60_000)); fmt.Sprint(got) != "[true false true]" {
		t.Fatalf("RenewMany: %v", got)
	}
	pttl := must[time.Duration](t)(rdb.PTTL(ctx, fmt.Sprintf("{%s#%d}:lease:%s", name, s.ShardOf(ordered[3].ID), ordered[3].ID)).Result())
	if pttl < 50*time.Second {
		t.Fatalf("RenewMany did not reach the lease on its shard: PTTL %v", pttl)
	}

	// Completes: by id, owned, batches in input order.
	if !must[bool](t)(s.Complete(ctx, ordered[0].ID)) || must[bool](t)(s.Complete(ctx, ordered[0].ID)) {
		t.Fatal("Complete: true for the first completer only")
	}
	if _, err := s.CompleteOwned(ctx, Lease{ID: ordered[1].ID, Token: "x"}); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("CompleteOwned with another token: %v", err)
	}
	if !must[bool](t)(s.CompleteOwned(ctx, ordered[1])) {
		t.Fatal("CompleteOwned: false")
	}
	got := must[[]Outcome](t)(s.CompleteMany(ctx, []string{ordered[2].ID, ordered[0].ID}))
	if fmt.Sprint(got) != "[done gone]" {
		t.Fatalf("CompleteMany: %v", got)
	}
	bad := ordered[4]
	bad.Token = "x"
	got = must[[]Outcome](t)(s.CompleteManyOwned(ctx, []Lease{ordered[3], bad, ordered[1]}))
	if fmt.Sprint(got) != "[done lease_lost lease_lost]" {
		t.Fatalf("CompleteManyOwned: %v", got)
	}

	// Releases and fail.
	if !must[bool](t)(s.Release(ctx, ordered[4])) {
		t.Fatal("Release: false")
	}
	if _, err := s.Release(ctx, ordered[4]); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("a second Release: %v", err)
	}
	if !must[bool](t)(s.ReleaseDelayed(ctx, ordered[5], 60_000)) {
		t.Fatal("ReleaseDelayed: false")
	}
	got = must[[]Outcome](t)(s.ReleaseMany(ctx, []Lease{ordered[7], ordered[5], ordered[0]}))
	if fmt.Sprint(got) != "[done gone gone]" { // a delayed item is not live: gone, as completed
		t.Fatalf("ReleaseMany: %v", got)
	}
	r := must[FailResult](t)(s.Fail(ctx, ordered[6], "boom"))
	if r.Outcome != FailRetry || r.DelayMs != 0 {
		t.Fatalf("Fail without a policy: %+v", r)
	}
	if c := must[Counts](t)(s.Counts(ctx)); c != (Counts{Queued: 3, Delayed: 1}) {
		t.Fatalf("counts after settling: %+v", c)
	}
	l := must[[]Lease](t)(s.LeaseMany(ctx, 10, 30_000))
	got = must[[]Outcome](t)(s.ReleaseManyDelayed(ctx, l, 60_000))
	if fmt.Sprint(got) != "[done done done]" {
		t.Fatalf("ReleaseManyDelayed: %v", got)
	}
	if c := must[Counts](t)(s.Counts(ctx)); c != (Counts{Delayed: 4}) {
		t.Fatalf("counts after delayed releases: %+v", c)
	}
}

// RWQ-SHARD-005: the composite script only when every item is on the shard next in turn.
func TestShardedCompleteAndLease(t *testing.T) {
	s, rdb, _ := newSharded(t, testShards)
	rec := &commands{}
	rdb.AddHook(rec)
	for shard := 0; shard < testShards; shard++ {
		var items []Item
		for _, id := range idsOn(shard, 5, fmt.Sprintf("c%d-", shard)) {
			items = append(items, Item{ID: id})
		}
		must[[]bool](t)(s.AddMany(ctx, items))
	}
	s.next = 1
	held := must[[]Lease](t)(s.LeaseMany(ctx, 3, 30_000)) // from shard 1; next is 2
	if s.ShardOf(held[0].ID) != 1 || s.next != 2 {
		t.Fatalf("setup: %v, next %d", held, s.next)
	}
	rec.take()

	// Not on the next shard: complete, then lease in rotation from shard 2.
	out, next, err := s.CompleteAndLease(ctx, held[0].ID, 30_000)
	if err != nil || out != Done || next == nil || s.ShardOf(next.ID) != 2 {
		t.Fatalf("slow path: %v %v %v", out, next, err)
	}
	cmds := rec.take()
	if scriptRuns(cmds, "complete_and_lease") != 0 || scriptRuns(cmds, "complete") != 1 || scriptRuns(cmds, "lease") != 1 {
		t.Fatalf("slow path must complete then lease: %v", cmds)
	}
	if s.next != 3 {
		t.Fatalf("the slow path's lease advances the rotation: next %d", s.next)
	}

	// On the next shard: one composite call, and the rotation advances.
	s.next = 1
	outs, leased, err := s.CompleteOwnedAndLeaseMany(ctx, held[1:], 2, 30_000)
	if err != nil || fmt.Sprint(outs) != "[done done]" || len(leased) != 2 {
		t.Fatalf("fast path: %v %v %v", outs, leased, err)
	}
	for _, l := range leased {
		if s.ShardOf(l.ID) != 1 {
			t.Fatalf("the fast path leases from the item's shard: %v", l)
		}
	}
	cmds = rec.take()
	if scriptRuns(cmds, "complete_and_lease") != 1 || scriptRuns(cmds, "complete") != 0 || scriptRuns(cmds, "lease") != 0 {
		t.Fatalf("fast path must be one composite call: %v", cmds)
	}
	if s.next != 2 {
		t.Fatalf("the fast path advances the rotation: next %d", s.next)
	}

	// Items on two shards: never the composite script; owner checks reported, not raised.
	s.next = 3
	lost := leased[1]
	lost.Token = "x"
	outs, leased2, err := s.CompleteOwnedAndLeaseMany(ctx, []Lease{leased[0], lost, *next}, 5, 30_000)
	if err != nil || fmt.Sprint(outs) != "[done lease_lost done]" || len(leased2) != 5 {
		t.Fatalf("two shards: %v %v %v", outs, leased2, err)
	}
	if s.ShardOf(leased2[0].ID) != 3 {
		t.Fatalf("the lease part starts at the next shard in turn: %v", leased2)
	}
	if cmds = rec.take(); scriptRuns(cmds, "complete_and_lease") != 0 {
		t.Fatalf("items on two shards used the composite script: %v", cmds)
	}
	o, none, err := s.CompleteOwnedAndLease(ctx, leased[1], 30_000)
	if err != nil || o != Done {
		t.Fatalf("CompleteOwnedAndLease: %v %v %v", o, none, err)
	}
	outs, _, err = s.CompleteAndLeaseMany(ctx, []string{leased[1].ID, "unknown"}, 1, 30_000)
	if err != nil || fmt.Sprint(outs) != "[gone gone]" {
		t.Fatalf("CompleteAndLeaseMany: %v %v", outs, err)
	}
}

// RWQ-SHARD-008: cleans cover every shard, the policy is set on every shard, the dead set of
// every shard is listed newest first.
func TestShardedCleanPolicyAndDeadItems(t *testing.T) {
	s, rdb, name := newSharded(t, testShards)
	for shard := 0; shard < testShards; shard++ {
		must[bool](t)(s.Add(ctx, idsOn(shard, 1, "x")[0], nil))
	}
	must[[]Lease](t)(s.LeaseMany(ctx, 100, 1))
	time.Sleep(5 * time.Millisecond)
	r := must[CleanReport](t)(s.LightClean(ctx, 1))
	if len(r.Requeued) != testShards {
		t.Fatalf("a light clean must cover every shard: %+v", r)
	}
	r = must[CleanReport](t)(s.LightCleanPaced(ctx, 100, 60_000))
	if len(r.Requeued) != 0 {
		t.Fatalf("nothing left to requeue: %+v", r)
	}
	// Orphans: items in neither list, one per shard.
	for shard := 0; shard < testShards; shard++ {
		must[int64](t)(rdb.Del(ctx, fmt.Sprintf("{%s#%d}:queue", name, shard)).Result())
	}
	r = must[CleanReport](t)(s.DeepClean(ctx, 10))
	if len(r.Requeued) != testShards {
		t.Fatalf("a deep clean must cover every shard: %+v", r)
	}

	if must[*RetryPolicy](t)(s.RetryPolicy(ctx)) != nil {
		t.Fatal("a new queue has no policy")
	}
	policy := RetryPolicy{MaxAttempts: 1, Backoff: BackoffFixed, BaseMs: 10}
	// A set cut short left shard 2 with another policy: shard 0 decides, and shard 2 follows.
	must[int64](t)(rdb.HSet(ctx, "{"+name+"#2}:policy", "max_attempts", 9, "backoff", "fixed").Result())
	if !must[bool](t)(s.SetRetryPolicyIfAbsent(ctx, &policy)) {
		t.Fatal("SetRetryPolicyIfAbsent is true when shard 0 stored the policy")
	}
	other := RetryPolicy{MaxAttempts: 7, Backoff: BackoffFixed, BaseMs: 10}
	if must[bool](t)(s.SetRetryPolicyIfAbsent(ctx, &other)) {
		t.Fatal("SetRetryPolicyIfAbsent is false when shard 0 has a policy")
	}
	for shard := 0; shard < testShards; shard++ {
		if got := must[string](t)(rdb.HGet(ctx, fmt.Sprintf("{%s#%d}:policy", name, shard), "max_attempts").Result()); got != "1" {
			t.Fatalf("shard %d max_attempts %q after SetRetryPolicyIfAbsent", shard, got)
		}
	}
	if err := s.SetRetryPolicy(ctx, &policy); err != nil {
		t.Fatal(err)
	}
	for shard := 0; shard < testShards; shard++ {
		if got := must[string](t)(rdb.HGet(ctx, fmt.Sprintf("{%s#%d}:policy", name, shard), "max_attempts").Result()); got != "1" {
			t.Fatalf("shard %d max_attempts %q", shard, got)
		}
	}
	if p := must[*RetryPolicy](t)(s.RetryPolicy(ctx)); p == nil || *p != policy {
		t.Fatalf("RetryPolicy: %+v", p)
	}

	// Dead-letter every item, one at a time, so their dead times differ.
	var order []string
	for i := 0; i < testShards; i++ {
		l := must[*Lease](t)(s.Lease(ctx, 30_000))
		time.Sleep(3 * time.Millisecond)
		if f := must[FailResult](t)(s.Fail(ctx, *l, "r"+l.ID)); f.Outcome != FailDead {
			t.Fatalf("Fail with max_attempts 1: %+v", f)
		}
		order = append([]string{l.ID}, order...) // newest first
	}
	dead := must[[]DeadItem](t)(s.DeadItems(ctx, 0, 100))
	var ids []string
	for _, d := range dead {
		ids = append(ids, d.ID)
		if d.Reason != "r"+d.ID || d.Attempts != 1 {
			t.Fatalf("dead item %+v", d)
		}
	}
	if fmt.Sprint(ids) != fmt.Sprint(order) {
		t.Fatalf("dead items must be merged newest first: %v, want %v", ids, order)
	}
	page := must[[]DeadItem](t)(s.DeadItems(ctx, 1, 2))
	if len(page) != 2 || page[0].ID != order[1] || page[1].ID != order[2] {
		t.Fatalf("DeadItems(1, 2): %v, want %v", page, order[1:3])
	}
	if past := must[[]DeadItem](t)(s.DeadItems(ctx, 10, 5)); len(past) != 0 {
		t.Fatalf("DeadItems past the end: %v", past)
	}
	if d := must[*DeadItem](t)(s.DeadItem(ctx, order[0])); d == nil || d.ID != order[0] {
		t.Fatalf("DeadItem: %+v", d)
	}
	if d := must[*DeadItem](t)(s.DeadItem(ctx, "never")); d != nil {
		t.Fatalf("DeadItem of an unknown id: %+v", d)
	}
	must[int64](t)(rdb.Del(ctx, "{"+name+"#bell}").Result())
	if got := must[[]bool](t)(s.RequeueDead(ctx, []string{order[0], "never", order[1]})); fmt.Sprint(got) != "[true false true]" {
		t.Fatalf("RequeueDead: %v", got)
	}
	if n := must[int64](t)(rdb.LLen(ctx, "{"+name+"#bell}").Result()); n != 2 {
		t.Fatalf("a requeue rings the bell once per item made ready: %d tokens", n)
	}
	if got := must[[]bool](t)(s.PurgeDead(ctx, []string{order[2], order[0]})); fmt.Sprint(got) != "[true false]" {
		t.Fatalf("PurgeDead: %v", got)
	}
	if c := must[Counts](t)(s.Counts(ctx)); c != (Counts{Queued: 2, Dead: 1}) {
		t.Fatalf("counts: %+v", c)
	}
	if n := must[int64](t)(s.TrimDead(ctx)); n != 0 {
		t.Fatalf("TrimDead removed %d", n)
	}
	if err := s.SetRetryPolicy(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if p := must[*RetryPolicy](t)(s.RetryPolicy(ctx)); p != nil {
		t.Fatalf("a cleared policy: %+v", p)
	}
}

// RWQ-SHARD-006: the ring after adds and releases that made items ready at once; at most 16
// tokens, a TTL of at most a second; nothing after delayed ones; a failed ring is only a warning.
func TestShardedRing(t *testing.T) {
	var warned []string
	s, rdb, name := newShardedWith(t, testShards, &Options{Warn: func(m string) { warned = append(warned, m) }})
	rec := &commands{}
	rdb.AddHook(rec)
	bell := "{" + name + "#bell}"
	tokens := func() int64 { return must[int64](t)(rdb.LLen(ctx, bell).Result()) }

	must[bool](t)(s.AddDelayed(ctx, "d1", nil, 60_000))
	must[[]bool](t)(s.AddManyDelayed(ctx, []Item{{ID: "d2"}, {ID: "d3"}}, 60_000))
	if n := tokens(); n != 0 {
		t.Fatalf("delayed adds rang: %d tokens", n)
	}
	rec.take()
	must[bool](t)(s.Add(ctx, "a", nil))
	cmds := rec.take()
	if scriptRuns(cmds, "ring") != 1 || tokens() != 1 {
		t.Fatalf("an add rings once: %v", cmds)
	}
	ring := cmds[len(cmds)-1]
	if !strings.Contains(ring, " 1 "+bell+" 1") {
		t.Fatalf("the ring's keys and tokens: %q", ring)
	}
	must[bool](t)(s.Add(ctx, "a", nil))
	if cmds = rec.take(); scriptRuns(cmds, "ring") != 0 {
		t.Fatalf("an add that added nothing rang: %v", cmds)
	}
	var many []Item
	for i := 0; i < 40; i++ {
		many = append(many, Item{ID: fmt.Sprintf("m%d", i)})
	}
	many = append(many, Item{ID: "a"})
	must[[]bool](t)(s.AddMany(ctx, many))
	cmds = rec.take()
	if scriptRuns(cmds, "ring") != 1 || !strings.HasSuffix(cmds[len(cmds)-1], " "+bell+" 16") {
		t.Fatalf("an AddMany of 40 new items rings once with 16 tokens: %v", cmds[len(cmds)-1])
	}
	if n := tokens(); n != MaxBellTokens {
		t.Fatalf("the bell holds %d tokens, at most %d", n, MaxBellTokens)
	}
	if pttl := must[time.Duration](t)(rdb.PTTL(ctx, bell).Result()); pttl <= 0 || pttl > time.Second {
		t.Fatalf("the bell's PTTL is %v, want 0 < PTTL <= 1 s", pttl)
	}

	must[int64](t)(rdb.Del(ctx, bell).Result())
	leases := must[[]Lease](t)(s.LeaseMany(ctx, 5, 30_000))
	must[bool](t)(s.ReleaseDelayed(ctx, leases[0], 60_000))
	must[[]Outcome](t)(s.ReleaseManyDelayed(ctx, leases[1:2], 60_000))
	if n := tokens(); n != 0 {
		t.Fatalf("delayed releases rang: %d tokens", n)
	}
	must[bool](t)(s.Release(ctx, leases[2]))
	if n := tokens(); n != 1 {
		t.Fatalf("a release rings one token: %d", n)
	}
	stale := leases[3]
	stale.Token = "x"
	rec.take()
	must[[]Outcome](t)(s.ReleaseMany(ctx, []Lease{stale, leases[4], leases[2]}))
	if cmds = rec.take(); !strings.HasSuffix(cmds[len(cmds)-1], " "+bell+" 1") || tokens() != 2 {
		t.Fatalf("ReleaseMany rings for the items it released: %v", cmds)
	}

	// A bell of another type: the ring fails, the add still succeeds, a warning says so.
	must[int64](t)(rdb.Del(ctx, bell).Result())
	must[string](t)(rdb.Set(ctx, bell, "x", 0).Result())
	if !must[bool](t)(s.Add(ctx, "after-broken-bell", nil)) {
		t.Fatal("an add whose ring failed must still report its write")
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "WRONG_TYPE") || !strings.Contains(warned[0], "doorbell") {
		t.Fatalf("a failed ring is a warning: %q", warned)
	}
}

// RWQ-SHARD-007: a blocking lease waits on the bell, is woken by an add to any shard at once,
// never blocks on a shard's keys, and gives up after its timeout.
func TestShardedBlockingLeaseWokenByTheBell(t *testing.T) {
	s, rdb, name := newSharded(t, testShards)
	rec := &commands{}
	rdb.AddHook(rec)
	producer := must[*ShardedQueue](t)(NewSharded(rdb, name, testShards, nil))
	for shard := 0; shard < testShards; shard++ {
		type result struct {
			l   *Lease
			err error
			at  time.Time
		}
		got := make(chan result, 1)
		go func() {
			l, err := s.LeaseBlocking(ctx, 30_000, 10_000)
			got <- result{l, err, time.Now()}
		}()
		// Wait until the consumer is blocked on the bell.
		for deadline := time.Now().Add(5 * time.Second); ; {
			if blockedInBLPOP(t, rdb) == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the consumer never blocked on BLPOP")
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond)
		id := idsOn(shard, 1, fmt.Sprintf("late%d-", shard))[0]
		started := time.Now()
		must[bool](t)(producer.Add(ctx, id, []byte("L")))
		select {
		case r := <-got:
			if r.err != nil || r.l == nil || r.l.ID != id {
				t.Fatalf("shard %d: %v %v", shard, r.l, r.err)
			}
			if waited := r.at.Sub(started); waited > 500*time.Millisecond {
				t.Fatalf("shard %d: woke %v after the add, want < 500 ms (the bell)", shard, waited)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("the blocking lease never returned")
		}
	}
	for _, name := range lowerNames(rec.take()) {
		if name == "blmove" || name == "brpoplpush" {
			t.Fatalf("a sharded blocking lease blocked on a shard: %s", name)
		}
	}

	// The timeout: nothing comes, it returns nil after about timeoutMs, in BLPOP steps ≤ 1 s.
	started := time.Now()
	l := must[*Lease](t)(s.LeaseBlocking(ctx, 30_000, 1300))
	if waited := time.Since(started); l != nil || waited < 1200*time.Millisecond || waited > 3*time.Second {
		t.Fatalf("a timed-out blocking lease: %v after %v", l, waited)
	}
	var waits []string
	for _, c := range rec.take() {
		if strings.HasPrefix(strings.ToLower(c), "blpop ") {
			waits = append(waits, c)
		}
	}
	if len(waits) < 2 {
		t.Fatalf("want BLPOP steps of at most a second: %v", waits)
	}
	for _, w := range waits {
		f := strings.Fields(w)
		if len(f) != 3 || f[1] != "{"+name+"#bell}" {
			t.Fatalf("a wait must be BLPOP {P#bell} t: %q", w)
		}
		var secs float64
		if _, err := fmt.Sscan(f[2], &secs); err != nil {
			t.Fatalf("BLPOP timeout %q", f[2])
		}
		if secs > 1 {
			t.Fatalf("a BLPOP step longer than a second: %q", w)
		}
	}

	// A cancelled context ends a wait without a limit.
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := s.LeaseBlocking(cctx, 30_000, 0); err == nil {
		t.Fatal("a blocking lease without a limit must end with its context")
	}
}

// blockedInBLPOP counts the server's clients blocked in BLPOP now.
func blockedInBLPOP(t *testing.T, rdb *redis.Client) int {
	n := 0
	for _, line := range strings.Split(must[string](t)(rdb.ClientList(ctx).Result()), "\n") {
		if strings.Contains(line, " cmd=blpop") && strings.Contains(line, " flags=b ") {
			n++
		}
	}
	return n
}

// RWQ-SHARD-003 and RWQ-SHARD-001: another shard count is refused, before anything is written.
func TestShardedCountMismatch(t *testing.T) {
	s, rdb, name := newSharded(t, testShards)
	must[bool](t)(s.Add(ctx, "a", []byte("A")))
	other := must[*ShardedQueue](t)(NewSharded(rdb, name, testShards+1, nil))
	rec := &commands{}
	rdb.AddHook(rec)
	for i := 0; i < 2; i++ {
		if _, err := other.Add(ctx, "b", nil); !errors.Is(err, ErrShardMismatch) {
			t.Fatalf("another shard count must be refused: %v", err)
		}
	}
	if _, err := other.Counts(ctx); !errors.Is(err, ErrShardMismatch) {
		t.Fatalf("Counts: %v", err)
	}
	for _, c := range rec.take() {
		if !strings.Contains(c, scripts["shards"].Hash()) && !strings.HasPrefix(c, "info") {
			t.Fatalf("a refused client sent %q", c)
		}
	}
	if n := must[int64](t)(rdb.Exists(ctx, fmt.Sprintf("{%s#%d}:item:b", name, other.ShardOf("b"))).Result()); n != 0 {
		t.Fatal("the refused client wrote")
	}
	must[string](t)(rdb.Set(ctx, "{garbage#0}:shards", "three", 0).Result())
	g := must[*ShardedQueue](t)(NewSharded(rdb, "garbage", 3, nil))
	if _, err := g.Lease(ctx, 1000); !errors.Is(err, ErrShardMismatch) {
		t.Fatalf("a count that is not a number is a mismatch: %v", err)
	}
}

// Every bad argument of every method, and of NewSharded, is refused before any I/O.
func TestShardedBadArgumentsBeforeAnyIO(t *testing.T) {
	counter := &sent{}
	rdb := redis.NewClient(&redis.Options{Addr: standaloneAddr, MaxRetries: -1})
	defer rdb.Close()
	rdb.AddHook(counter)
	s := must[*ShardedQueue](t)(NewSharded(rdb, "sharded-bad-args", testShards, nil))
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	b := badArguments{rand.New(rand.NewSource(seed))}
	okLease := Lease{ID: "a", Token: "tok"}
	badPolicy := func() *RetryPolicy {
		p := DefaultRetryPolicy()
		switch b.r.Intn(3) {
		case 0:
			p.Backoff = "linear"
		case 1:
			p.MaxAttempts = -1
		default:
			p.JitterPct = 101
		}
		return &p
	}
	calls := map[string]func() error{
		"Add":                  func() error { _, err := s.Add(ctx, b.newID(), nil); return err },
		"AddMany":              func() error { _, err := s.AddMany(ctx, batchWith(b, Item{ID: "a"}, Item{ID: b.newID()})); return err },
		"AddDelayed":           func() error { _, err := s.AddDelayed(ctx, "a", nil, b.delay()); return err },
		"AddManyDelayed":       func() error { _, err := s.AddManyDelayed(ctx, []Item{{ID: "a"}}, b.delay()); return err },
		"Lease":                func() error { _, err := s.Lease(ctx, b.ms()); return err },
		"LeaseBlocking":        func() error { _, err := s.LeaseBlocking(ctx, b.ms(), 100); return err },
		"LeaseBlockingTimeout": func() error { _, err := s.LeaseBlocking(ctx, 1000, -1-b.r.Int63n(10)); return err },
		"LeaseMany":            func() error { _, err := s.LeaseMany(ctx, b.count(), 1000); return err },
		"LeaseManyMs":          func() error { _, err := s.LeaseMany(ctx, 1, b.ms()); return err },
		"Renew":                func() error { _, err := s.Renew(ctx, b.lease(), 1000); return err },
		"RenewMs":              func() error { _, err := s.Renew(ctx, okLease, b.ms()); return err },
		"RenewMany":            func() error { _, err := s.RenewMany(ctx, batchWith(b, okLease, b.lease()), 1000); return err },
		"Complete":             func() error { _, err := s.Complete(ctx, b.id()); return err },
		"CompleteMany":         func() error { _, err := s.CompleteMany(ctx, batchWith(b, "a", b.id())); return err },
		"CompleteOwned":        func() error { _, err := s.CompleteOwned(ctx, b.lease()); return err },
		"CompleteManyOwned":    func() error { _, err := s.CompleteManyOwned(ctx, batchWith(b, okLease, b.lease())); return err },
		"CompleteAndLease":     func() error { _, _, err := s.CompleteAndLease(ctx, b.id(), 1000); return err },
		"CompleteAndLeaseMs":   func() error { _, _, err := s.CompleteAndLease(ctx, "a", b.ms()); return err },
		"CompleteOwnedAndLease": func() error {
			_, _, err := s.CompleteOwnedAndLease(ctx, b.lease(), 1000)
			return err
		},
		"CompleteAndLeaseMany": func() error {
			_, _, err := s.CompleteAndLeaseMany(ctx, []string{"a"}, b.count(), 1000)
			return err
		},
		"CompleteAndLeaseManyItems": func() error {
			_, _, err := s.CompleteAndLeaseMany(ctx, make([]string, []int{0, MaxBatch + 1}[b.r.Intn(2)]), 1, 1000)
			return err
		},
		"CompleteOwnedAndLeaseMany": func() error {
			_, _, err := s.CompleteOwnedAndLeaseMany(ctx, []Lease{okLease, b.lease()}, 1, 1000)
			return err
		},
		"Release":                   func() error { _, err := s.Release(ctx, b.lease()); return err },
		"ReleaseMany":               func() error { _, err := s.ReleaseMany(ctx, batchWith(b, okLease, b.lease())); return err },
		"ReleaseDelayed":            func() error { _, err := s.ReleaseDelayed(ctx, okLease, b.delay()); return err },
		"ReleaseManyDelayed":        func() error { _, err := s.ReleaseManyDelayed(ctx, []Lease{okLease}, b.delay()); return err },
		"LightClean":                func() error { _, err := s.LightClean(ctx, b.count()); return err },
		"LightCleanPaced":           func() error { _, err := s.LightCleanPaced(ctx, 100, b.delay()); return err },
		"DeepClean":                 func() error { _, err := s.DeepClean(ctx, b.count()); return err },
		"SetRetryPolicy":            func() error { return s.SetRetryPolicy(ctx, badPolicy()) },
		"SetRetryPolicyIfAbsent":    func() error { _, err := s.SetRetryPolicyIfAbsent(ctx, badPolicy()); return err },
		"SetRetryPolicyIfAbsentNil": func() error { _, err := s.SetRetryPolicyIfAbsent(ctx, nil); return err },
		"Fail":                      func() error { _, err := s.Fail(ctx, b.lease(), ""); return err },
		"FailReason":                func() error { _, err := s.Fail(ctx, okLease, strings.Repeat("r", 1025+b.r.Intn(10))); return err },
		"FailWithFallback": func() error {
			_, err := s.FailWith(ctx, okLease, "", FailOptions{FallbackDelayMs: b.delay()})
			return err
		},
		"FailWithDetail": func() error {
			_, err := s.FailWith(ctx, okLease, "", FailOptions{Detail: strings.Repeat("d", MaxDetailBytes+1)})
			return err
		},
		"ReleaseManyWith": func() error {
			_, err := s.ReleaseManyWith(ctx, []Lease{okLease}, ReleaseOptions{DelayMs: b.delay(), RefundAttempt: true})
			return err
		},
		"DeadItems":      func() error { _, err := s.DeadItems(ctx, -1-b.r.Intn(10), 10); return err },
		"DeadItemsCount": func() error { _, err := s.DeadItems(ctx, 0, b.count()); return err },
		"DeadItem":       func() error { _, err := s.DeadItem(ctx, b.id()); return err },
		"RequeueDead":    func() error { _, err := s.RequeueDead(ctx, batchWith(b, "a", b.id())); return err },
		"PurgeDead":      func() error { _, err := s.PurgeDead(ctx, batchWith(b, "a", b.id())); return err },
		"NewShardedCount": func() error {
			_, err := NewSharded(rdb, "jobs", []int{0, -1, MaxShards + 1, MaxShards + 1 + b.r.Intn(100)}[b.r.Intn(4)], nil)
			return err
		},
		"NewShardedPrefix": func() error {
			prefix := []string{"", "{jobs}", "a{b}", "jo}bs", "jobs*", "a:item", "x[1]"}[b.r.Intn(7)]
			_, err := NewSharded(rdb, prefix, 2, nil)
			return err
		},
		"NewShardedNoClient": func() error { _, err := NewSharded(nil, "jobs", 2, nil); return err },
	}
	tried := 0
	for round := 0; round < 20; round++ {
		for name, call := range calls {
			before := counter.n.Load()
			err := call()
			tried++
			if !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("%s: got %v, want ErrInvalidArgument", name, err)
			}
			if counter.n.Load() != before {
				t.Errorf("%s: an invalid call sent %d commands", name, counter.n.Load()-before)
			}
		}
	}
	// Empty batches send nothing either (nothing to do), and succeed.
	if got, err := s.AddMany(ctx, nil); err != nil || len(got) != 0 {
		t.Fatalf("AddMany(nil): %v %v", got, err)
	}
	if got, err := s.CompleteMany(ctx, []string{}); err != nil || len(got) != 0 {
		t.Fatalf("CompleteMany([]): %v %v", got, err)
	}
	if counter.n.Load() != 0 {
		t.Fatalf("bad or empty calls sent %d commands", counter.n.Load())
	}
	t.Logf("bad calls tried %d", tried)
	if _, err := s.Counts(ctx); err != nil {
		t.Fatal(err)
	}
	if counter.n.Load() == 0 {
		t.Fatal("a valid call sent nothing: the hook does not count")
	}
}

// On Redis Cluster the shards and the bell route by their own slots, through the slot's node.
func TestShardedOnCluster(t *testing.T) {
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{clusterAddr}, MaxRetries: -1})
	defer rdb.Close()
	var through int64
	rdb.AddHook(scriptCounter{&through})
	queueSeq++
	s := must[*ShardedQueue](t)(NewSharded(rdb, fmt.Sprintf("csh%d", queueSeq), 3, nil))
	got := make(chan *Lease, 1)
	go func() {
		l, err := s.LeaseBlocking(ctx, 10_000, 5000)
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	time.Sleep(200 * time.Millisecond)
	started := time.Now()
	must[[]bool](t)(s.AddMany(ctx, []Item{{ID: "a"}, {ID: "b"}, {ID: "c"}}))
	l := <-got
	if l == nil || time.Since(started) > 500*time.Millisecond {
		t.Fatalf("cluster blocking lease: %v after %v", l, time.Since(started))
	}
	rest := must[[]Lease](t)(s.LeaseMany(ctx, 10, 10_000))
	ids := []string{l.ID}
	for _, r := range rest {
		ids = append(ids, r.ID)
	}
	sort.Strings(ids)
	if !slices.Equal(ids, []string{"a", "b", "c"}) {
		t.Fatalf("cluster leases: %v", ids)
	}
	if through != 0 {
		t.Fatalf("%d script calls went through the retrying cluster client", through)
	}
}

// One AddMany of k items rings k tokens: k consumers blocked on the bell all wake at once.
func TestShardedOneRingWakesManyConsumers(t *testing.T) {
	const consumers = 3
	s, rdb, name := newSharded(t, testShards)
	got := make(chan *Lease, consumers)
	for i := 0; i < consumers; i++ {
		c := must[*ShardedQueue](t)(NewSharded(rdb, name, testShards, nil))
		go func() {
			l, err := c.LeaseBlocking(ctx, 30_000, 10_000)
			if err != nil {
				t.Error(err)
			}
			got <- l
		}()
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		blocked := blockedInBLPOP(t, rdb)
		if blocked == consumers {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d consumers blocked on the bell", blocked, consumers)
		}
	}
	started := time.Now()
	must[[]bool](t)(s.AddMany(ctx, []Item{{ID: idsOn(0, 1, "w")[0]}, {ID: idsOn(1, 1, "w")[0]}, {ID: idsOn(3, 1, "w")[0]}}))
	for i := 0; i < consumers; i++ {
		select {
		case l := <-got:
			if l == nil {
				t.Fatal("a consumer timed out")
			}
		case <-time.After(15 * time.Second):
			t.Fatal("a consumer never returned")
		}
	}
	if waited := time.Since(started); waited > 500*time.Millisecond {
		t.Fatalf("the consumers woke %v after the add, want < 500 ms", waited)
	}
}

// RWQ-SHARD-005: the fast path leases what its shard lacks from the other shards, in rotation
// order, rather than returning less while they hold items.
func TestShardedCompleteAndLeaseTopsUpFromTheOtherShards(t *testing.T) {
	s, _, _ := newSharded(t, testShards)
	for shard := 0; shard < testShards; shard++ {
		must[[]bool](t)(s.AddMany(ctx, []Item{{ID: idsOn(shard, 1, fmt.Sprintf("t%d-", shard))[0]}}))
	}
	s.next = 1
	held := must[*Lease](t)(s.Lease(ctx, 30_000)) // shard 1's only item
	s.next = 1                                    // so that the fast path runs on shard 1, now empty
	outs, leased, err := s.CompleteOwnedAndLeaseMany(ctx, []Lease{*held}, 2, 30_000)
	if err != nil || fmt.Sprint(outs) != "[done]" || len(leased) != 2 {
		t.Fatalf("fast path on an empty shard: %v %v %v", outs, leased, err)
	}
	if s.ShardOf(leased[0].ID) != 2 || s.ShardOf(leased[1].ID) != 3%testShards {
		t.Fatalf("the top-up follows the rotation from the next shard: %v", leased)
	}
}
