package rwq

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// MaxShards bounds the shards of a ShardedQueue (SPEC RWQ-SHARD-001).
const MaxShards = 1024

// MaxBellTokens is the most tokens one ring pushes, and the bell holds (lua/ring.lua).
const MaxBellTokens = 16

// ShardedQueue is one logical queue over N RWQ/1 queues {prefix#i}, for a queue that must
// outgrow one Redis node: profile sharded (SPEC §19, RWQ-SHARD-001..008; docs/design/sharded.md).
//
// Shard i is an ordinary Queue whose prefix is {prefix#i}, in the hash slot of prefix#i, so a
// Redis Cluster spreads the shards over its masters. An id always lands on shard
// crc32.ChecksumIEEE(id) % N, so Add stays idempotent; every client of the queue must use the
// same N, which the first operation records in shard 0 or checks against the one recorded there
// (ErrShardMismatch). Leases visit the shards in rotation, one step further on every call: with
// every shard non-empty, one consumer takes from each in turn.
//
// Adds, releases and requeues that make items ready at once ring the queue's doorbell, the list
// {prefix#bell}; a blocking lease that found every shard empty waits there with BLPOP, in steps
// of at most a second, then visits the shards again. It never blocks on a shard's keys.
//
// Every argument is checked before any I/O. An operation that spans shards (a batch, Counts, a
// clean) runs one call per shard and is not atomic across them: the first failure is returned,
// the other shards' calls done before it stay done. It is safe for concurrent use.
type ShardedQueue struct {
	rdb    redis.UniversalClient
	prefix string
	bell   string
	shards []*Queue

	mu   sync.Mutex // guards next
	next int        // the rotation index r: the shard the next visit starts at

	countMu sync.Mutex // guards counted (held during the shards script call)
	counted bool
}

// NewSharded returns queue prefix over shards (1..1024) queues; opts apply to every shard. The
// prefix must hold no '{' or '}' (each shard has its own hash tag). NewSharded does no I/O.
func NewSharded(rdb redis.UniversalClient, prefix string, shards int, opts *Options) (*ShardedQueue, error) {
	if err := checkPrefix(prefix, false); err != nil {
		return nil, err
	}
	if strings.ContainsAny(prefix, "{}") {
		return nil, invalid("a sharded queue's prefix must hold no '{' or '}': each shard has a hash tag: " + quote(prefix))
	}
	if err := checkRange("shards", int64(shards), 1, MaxShards); err != nil {
		return nil, err
	}
	s := &ShardedQueue{rdb: rdb, prefix: prefix, bell: "{" + prefix + "#bell}", next: rand.Intn(shards)}
	for i := 0; i < shards; i++ {
		q, err := openQueue(rdb, fmt.Sprintf("{%s#%d}", prefix, i), opts)
		if err != nil {
			return nil, err
		}
		s.shards = append(s.shards, q)
	}
	return s, nil
}

// Prefix is the logical queue's name P (its shards are {P#0}...{P#N-1}).
func (s *ShardedQueue) Prefix() string { return s.prefix }

// Bell is the key of the queue's doorbell, {P#bell}.
func (s *ShardedQueue) Bell() string { return s.bell }

// Shards returns the shards' queues, in shard order.
func (s *ShardedQueue) Shards() []*Queue { return s.shards }

// ShardOf returns the shard that holds id: CRC-32 (IEEE) of its bytes modulo N (RWQ-SHARD-002).
func (s *ShardedQueue) ShardOf(id string) int {
	return int(crc32.ChecksumIEEE([]byte(id)) % uint32(len(s.shards)))
}

// turn returns the shards' indexes in this call's order; the next call starts one further
// (RWQ-SHARD-004).
func (s *ShardedQueue) turn() []int {
	s.mu.Lock()
	start := s.next
	s.next = (s.next + 1) % len(s.shards)
	s.mu.Unlock()
	order := make([]int, len(s.shards))
	for i := range order {
		order[i] = (start + i) % len(s.shards)
	}
	return order
}

// ready records or checks the shard count once, before the first I/O of the first operation
// (RWQ-SHARD-003): a mismatch is reported by this and every later operation.
func (s *ShardedQueue) ready(ctx context.Context) error {
	s.countMu.Lock()
	defer s.countMu.Unlock()
	if s.counted {
		return nil
	}
	first := s.shards[0]
	reply, err := first.eval(ctx, "shards", first.one(), len(s.shards))
	if err != nil {
		if ACLRefused(err) {
			return &Error{Code: CodeRedisError, Err: err, Message: fmt.Sprintf(
				"this user may not record the shard count of sharded queue %q, and none is recorded in %s:shards "+
					"(only the admin role records it, RWQ-SHARD-009): run `rwq shards --prefix %s --shards %d` as the admin first (%v)",
				s.prefix, first.prefix, s.prefix, len(s.shards), err)}
		}
		return err
	}
	recorded, ok := reply.(int64)
	if !ok {
		return unexpected("shards", reply)
	}
	if recorded != int64(len(s.shards)) {
		return &Error{Code: CodeShardMismatch, Message: fmt.Sprintf(
			"queue %q has %d shards recorded in %s:shards, this client %d: they would route ids to different shards",
			s.prefix, recorded, first.prefix, len(s.shards))}
	}
	s.counted = true
	return nil
}

// ring wakes up to ready consumers waiting on the doorbell, once per call, when the call made
// ready (≥ 1) items ready at once (RWQ-SHARD-006). The ring is a hint: the write it follows took
// effect, so a failure is only reported to Options.Warn (a lost token costs a waiting consumer at
// most one step of a second).
func (s *ShardedQueue) ring(ctx context.Context, ready int) {
	if ready < 1 {
		return
	}
	node, err := s.bellNode(ctx)
	if err == nil {
		_, rerr := scripts["ring"].Run(ctx, node, []string{s.bell}, min(ready, MaxBellTokens)).Result()
		if rerr = nodeFailed(ctx, s.shards[0].cluster, rerr); rerr != nil {
			err = translate(rerr)
		}
	}
	if err != nil {
		s.shards[0].warn(fmt.Sprintf("rwq: the doorbell of %q was not rung: %v", s.prefix, err))
	}
}

// bellNode is where the doorbell's commands go: on a cluster, the master of the bell's slot,
// directly (as Queue.node does for a queue's commands).
func (s *ShardedQueue) bellNode(ctx context.Context) (conn, error) {
	cluster := s.shards[0].cluster
	if cluster == nil {
		return s.rdb, nil
	}
	n, err := cluster.MasterForKey(ctx, s.bell)
	if err != nil {
		return nil, translate(err)
	}
	return n, nil
}

// waitBell waits up to waitMs (1..1000) for a token on the doorbell (RWQ-SHARD-007).
func (s *ShardedQueue) waitBell(ctx context.Context, waitMs int64) error {
	node, err := s.bellNode(ctx)
	if err != nil {
		return err
	}
	err = blpopOn(ctx, node, s.bell, waitMs)
	if s.shards[0].cluster != nil && redirected(err) { // the slot moved and nothing was popped
		err = blpopOn(ctx, s.rdb, s.bell, waitMs)
	}
	if err = nodeFailed(ctx, s.shards[0].cluster, err); err != nil && !errors.Is(err, redis.Nil) {
		return translate(err)
	}
	return nil
}

func blpopOn(ctx context.Context, c conn, key string, waitMs int64) error {
	if waitMs%1000 == 0 { // whole seconds: go-redis extends its read timeout by the wait
		return c.BLPop(ctx, time.Duration(waitMs)*time.Millisecond, key).Err()
	}
	// BLPop would round a shorter wait up to a second; this one ("0.25") runs under ReadTimeout.
	return c.Do(ctx, "BLPOP", key, strconv.FormatFloat(float64(waitMs)/1000, 'f', -1, 64)).Err()
}

// groups are the positions of a batch's elements by shard, each shard's in input order; shards
// in the order of their first element (as the Python reference's plans send them).
type groups struct {
	order     []int
	positions map[int][]int
}

func (s *ShardedQueue) group(n int, id func(i int) string) groups {
	g := groups{positions: map[int][]int{}}
	for i := 0; i < n; i++ {
		shard := s.ShardOf(id(i))
		if _, seen := g.positions[shard]; !seen {
			g.order = append(g.order, shard)
		}
		g.positions[shard] = append(g.positions[shard], i)
	}
	return g
}

// perShard calls fn with each shard's part of items, in input order, and puts its results back
// in input order (RWQ-SHARD-002). An empty batch does no I/O.
func perShard[T, R any](ctx context.Context, s *ShardedQueue, items []T, id func(T) string,
	fn func(q *Queue, part []T) ([]R, error)) ([]R, error) {
	out := make([]R, len(items))
	if len(items) == 0 {
		return out, nil
	}
	g := s.group(len(items), func(i int) string { return id(items[i]) })
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	for _, shard := range g.order {
		positions := g.positions[shard]
		part := make([]T, len(positions))
		for k, i := range positions {
			part[k] = items[i]
		}
		got, err := fn(s.shards[shard], part)
		if err != nil {
			return nil, err
		}
		if len(got) != len(part) {
			return nil, redisFailure(fmt.Sprintf("shard %d answered %d results for %d items", shard, len(got), len(part)), nil)
		}
		for k, i := range positions {
			out[i] = got[k]
		}
	}
	return out, nil
}

func itemID(it Item) string   { return it.ID }
func leaseID(l Lease) string  { return l.ID }
func sameID(id string) string { return id }

// Add adds an item to its shard unless its id is known there; true when this call created it.
func (s *ShardedQueue) Add(ctx context.Context, id string, data []byte) (bool, error) {
	return firstBool(s.add(ctx, []Item{{id, data}}, 0))
}

// AddMany adds items, one batch per shard; one added-flag per item, in order.
func (s *ShardedQueue) AddMany(ctx context.Context, items []Item) ([]bool, error) {
	return s.add(ctx, items, 0)
}

// AddDelayed adds an item that becomes ready delayMs after now (profile delay; 0 is Add).
func (s *ShardedQueue) AddDelayed(ctx context.Context, id string, data []byte, delayMs int64) (bool, error) {
	return firstBool(s.add(ctx, []Item{{id, data}}, delayMs))
}

// AddManyDelayed is AddMany with a delay (profile delay).
func (s *ShardedQueue) AddManyDelayed(ctx context.Context, items []Item, delayMs int64) ([]bool, error) {
	return s.add(ctx, items, delayMs)
}

// add routes items to their shards, then rings the bell for the items it made ready at once.
func (s *ShardedQueue) add(ctx context.Context, items []Item, delayMs int64) ([]bool, error) {
	if err := checkDuration("delay_ms", delayMs, 0); err != nil {
		return nil, err
	}
	for _, it := range items {
		if err := checkNewID(it.ID); err != nil {
			return nil, err
		}
	}
	added, err := perShard(ctx, s, items, itemID, func(q *Queue, part []Item) ([]bool, error) {
		return q.AddManyDelayed(ctx, part, delayMs)
	})
	if err != nil {
		return nil, err
	}
	if delayMs == 0 {
		s.ring(ctx, countTrue(added))
	}
	return added, nil
}

func countTrue(flags []bool) int {
	n := 0
	for _, f := range flags {
		if f {
			n++
		}
	}
	return n
}

// visit leases one item from q without waiting: the lease (nil when none), the server's time
// and the ms until q's next delayed item is due (-1: none), from the lease script's reply.
func (q *Queue) visit(ctx context.Context, leaseMs int64) (*Lease, int64, int64, error) {
	leased, now, dueIn, err := q.leaseCalls(ctx, newToken(), leaseMs, 1)
	if err != nil || len(leased) == 0 {
		return nil, now, dueIn, err
	}
	return &leased[0], now, dueIn, nil
}

// sweep visits every shard in rotation and returns the first lease found; else the server's time
// at the last visit and the ms until the soonest delayed item is due (-1: none).
func (s *ShardedQueue) sweep(ctx context.Context, leaseMs int64) (*Lease, int64, int64, error) {
	var now int64
	due := int64(-1)
	for _, shard := range s.turn() {
		l, at, dueIn, err := s.shards[shard].visit(ctx, leaseMs)
		if err != nil || l != nil {
			return l, at, dueIn, err
		}
		now = at
		if dueIn >= 0 && (due < 0 || dueIn < due) {
			due = dueIn
		}
	}
	return nil, now, due, nil
}

// Lease leases one ready item from the shards in rotation, without waiting; nil when none.
func (s *ShardedQueue) Lease(ctx context.Context, leaseMs int64) (*Lease, error) {
	if err := checkDuration("lease_ms", leaseMs, 1); err != nil {
		return nil, err
	}
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	l, _, _, err := s.sweep(ctx, leaseMs)
	return l, err
}

// LeaseBlocking leases one ready item, waiting up to timeoutMs (0: no limit, until ctx is done)
// for one (RWQ-SHARD-007): it visits every shard in rotation and, when none had an item, waits on
// the doorbell with BLPOP for at most a second and the time left (and the time until a delayed
// item is due), then visits again. The timeout is measured on the server's clock, from the lease
// replies (RWQ-TIME-001), as Queue.LeaseBlocking measures it. Each BLPOP shorter than a second
// must fit in the client's ReadTimeout (the go-redis default of 3 s does).
func (s *ShardedQueue) LeaseBlocking(ctx context.Context, leaseMs, timeoutMs int64) (*Lease, error) {
	if err := checkDuration("lease_ms", leaseMs, 1); err != nil {
		return nil, err
	}
	if err := checkDuration("timeout_ms", timeoutMs, 0); err != nil {
		return nil, err
	}
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	deadline := int64(-1)
	for {
		if err := ctx.Err(); err != nil {
			return nil, redisFailure(err.Error(), err)
		}
		l, now, due, err := s.sweep(ctx, leaseMs)
		if err != nil || l != nil {
			return l, err
		}
		if deadline < 0 && timeoutMs > 0 {
			deadline = now + timeoutMs
		}
		wait := int64(maxBlockStepMs)
		if deadline >= 0 {
			if now >= deadline {
				return nil, nil
			}
			wait = min(wait, deadline-now)
		}
		if due >= 0 {
			wait = max(min(wait, due), 1)
		}
		if err := s.waitBell(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// LeaseMany leases up to count (1..1000) ready items, taking what it still needs from each
// shard in rotation, without waiting; each shard's leases share that shard's token.
func (s *ShardedQueue) LeaseMany(ctx context.Context, count int, leaseMs int64) ([]Lease, error) {
	if err := checkDuration("lease_ms", leaseMs, 1); err != nil {
		return nil, err
	}
	if err := checkBatch("count", count); err != nil {
		return nil, err
	}
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	return s.leaseMany(ctx, count, leaseMs)
}

func (s *ShardedQueue) leaseMany(ctx context.Context, count int, leaseMs int64) ([]Lease, error) {
	leased := []Lease{}
	for _, shard := range s.turn() {
		got, err := s.shards[shard].LeaseMany(ctx, count-len(leased), leaseMs)
		if err != nil {
			return nil, err
		}
		if leased = append(leased, got...); len(leased) == count {
			break
		}
	}
	return leased, nil
}

// Renew extends a held lease on its shard; false if it was lost.
func (s *ShardedQueue) Renew(ctx context.Context, l Lease, leaseMs int64) (bool, error) {
	return firstBool(s.RenewMany(ctx, []Lease{l}, leaseMs))
}

// RenewMany renews leases, one call per shard; false where the lease was lost, in order.
func (s *ShardedQueue) RenewMany(ctx context.Context, leases []Lease, leaseMs int64) ([]bool, error) {
	if err := checkDuration("lease_ms", leaseMs, 1); err != nil {
		return nil, err
	}
	if err := checkLeases(leases); err != nil {
		return nil, err
	}
	return perShard(ctx, s, leases, leaseID, func(q *Queue, part []Lease) ([]bool, error) {
		return q.RenewMany(ctx, part, leaseMs)
	})
}

// Complete completes an item by id on its shard, whoever holds it: true for its first completer.
func (s *ShardedQueue) Complete(ctx context.Context, id string) (bool, error) {
	return owned(s.CompleteMany(ctx, []string{id}))(id)
}

// CompleteMany completes items by id, one call per shard; Done or Gone per id, in order.
func (s *ShardedQueue) CompleteMany(ctx context.Context, ids []string) ([]Outcome, error) {
	for _, id := range ids {
		if err := checkID(id); err != nil {
			return nil, err
		}
	}
	return perShard(ctx, s, ids, sameID, func(q *Queue, part []string) ([]Outcome, error) {
		return q.CompleteMany(ctx, part)
	})
}

// CompleteOwned completes an item only while l is still held: true for the first completer,
// false when the item was gone, ErrLeaseLost when the lease is not held.
func (s *ShardedQueue) CompleteOwned(ctx context.Context, l Lease) (bool, error) {
	return owned(s.CompleteManyOwned(ctx, []Lease{l}))(l.ID)
}

// CompleteManyOwned is CompleteOwned for many leases, one call per shard: Done, Gone or
// NotHolder per lease, in order.
func (s *ShardedQueue) CompleteManyOwned(ctx context.Context, leases []Lease) ([]Outcome, error) {
	if err := checkLeases(leases); err != nil {
		return nil, err
	}
	return perShard(ctx, s, leases, leaseID, func(q *Queue, part []Lease) ([]Outcome, error) {
		return q.CompleteManyOwned(ctx, part)
	})
}

// CompleteAndLease completes an item by id, then leases the next ready item keeping the
// rotation (see CompleteAndLeaseMany).
func (s *ShardedQueue) CompleteAndLease(ctx context.Context, id string, leaseMs int64) (Outcome, *Lease, error) {
	return single(s.CompleteAndLeaseMany(ctx, []string{id}, 1, leaseMs))
}

// CompleteOwnedAndLease is CompleteAndLease with an owner check (as CompleteOwned).
func (s *ShardedQueue) CompleteOwnedAndLease(ctx context.Context, l Lease, leaseMs int64) (Outcome, *Lease, error) {
	return single(s.CompleteOwnedAndLeaseMany(ctx, []Lease{l}, 1, leaseMs))
}

// CompleteAndLeaseMany completes 1..1000 items by id and leases up to count (1..1000) ready
// items (RWQ-SHARD-005), visiting the shards in rotation (which advances once): on the shard next
// in the rotation, one composite script call completes that shard's items and leases (a lease if
// it holds none of them); then the other shards' items are completed, one call per shard, and what
// is still lacking is leased from the other shards in rotation order. The first call leases, so a
// caller that may not lease writes nothing (RWQ-SEC-006), and no shard is starved. An error of a
// later call comes back alone, though the calls before it took effect.
func (s *ShardedQueue) CompleteAndLeaseMany(ctx context.Context, ids []string, count int, leaseMs int64) ([]Outcome, []Lease, error) {
	for _, id := range ids {
		if err := checkID(id); err != nil {
			return nil, nil, err
		}
	}
	return completeAndLease(ctx, s, ids, sameID, count, leaseMs,
		func(q *Queue, part []string) ([]Outcome, []Lease, error) {
			return q.CompleteAndLeaseMany(ctx, part, count, leaseMs)
		},
		func(q *Queue, part []string) ([]Outcome, error) { return q.CompleteMany(ctx, part) })
}

// CompleteOwnedAndLeaseMany is CompleteAndLeaseMany with owner checks (as CompleteManyOwned).
func (s *ShardedQueue) CompleteOwnedAndLeaseMany(ctx context.Context, leases []Lease, count int, leaseMs int64) ([]Outcome, []Lease, error) {
	if err := checkLeases(leases); err != nil {
		return nil, nil, err
	}
	return completeAndLease(ctx, s, leases, leaseID, count, leaseMs,
		func(q *Queue, part []Lease) ([]Outcome, []Lease, error) {
			return q.CompleteOwnedAndLeaseMany(ctx, part, count, leaseMs)
		},
		func(q *Queue, part []Lease) ([]Outcome, error) { return q.CompleteManyOwned(ctx, part) })
}

func completeAndLease[T any](ctx context.Context, s *ShardedQueue, items []T, id func(T) string, count int, leaseMs int64,
	composite func(q *Queue, part []T) ([]Outcome, []Lease, error), complete func(q *Queue, part []T) ([]Outcome, error)) ([]Outcome, []Lease, error) {
	if err := checkBatch("items", len(items)); err != nil {
		return nil, nil, err
	}
	if err := checkBatch("count", count); err != nil {
		return nil, nil, err
	}
	if err := checkDuration("lease_ms", leaseMs, 1); err != nil {
		return nil, nil, err
	}
	if err := s.ready(ctx); err != nil {
		return nil, nil, err
	}
	order := s.turn()
	var mine, others []int
	for i, it := range items {
		if s.ShardOf(id(it)) == order[0] {
			mine = append(mine, i)
		} else {
			others = append(others, i)
		}
	}
	pick := func(positions []int) []T {
		part := make([]T, len(positions))
		for k, i := range positions {
			part[k] = items[i]
		}
		return part
	}
	outcomes := make([]Outcome, len(items))
	place := func(positions []int, got []Outcome) error {
		if len(got) != len(positions) {
			return redisFailure(fmt.Sprintf("answered %d results for %d items", len(got), len(positions)), nil)
		}
		for k, i := range positions {
			outcomes[i] = got[k]
		}
		return nil
	}
	var leases []Lease
	var err error
	if len(mine) > 0 {
		var got []Outcome
		if got, leases, err = composite(s.shards[order[0]], pick(mine)); err == nil {
			err = place(mine, got)
		}
	} else {
		leases, err = s.shards[order[0]].LeaseMany(ctx, count, leaseMs)
	}
	if err != nil {
		return nil, nil, err
	}
	if len(others) > 0 {
		got, err := perShard(ctx, s, pick(others), id, complete)
		if err != nil {
			return nil, nil, err
		}
		if err := place(others, got); err != nil {
			return nil, nil, err
		}
	}
	// What the first shard lacked comes from the others, in rotation order (RWQ-SHARD-005).
	for _, shard := range order[1:] {
		if len(leases) >= count {
			break
		}
		got, err := s.shards[shard].LeaseMany(ctx, count-len(leases), leaseMs)
		if err != nil {
			return nil, nil, err
		}
		leases = append(leases, got...)
	}
	return outcomes, leases, nil
}

// Release gives a held item back to its shard's queue at once: true when released, false when
// the item was gone, ErrLeaseLost when the caller does not hold the lease.
func (s *ShardedQueue) Release(ctx context.Context, l Lease) (bool, error) {
	return s.ReleaseDelayed(ctx, l, 0)
}

// ReleaseMany releases held items, one call per shard; one outcome per lease, in order.
func (s *ShardedQueue) ReleaseMany(ctx context.Context, leases []Lease) ([]Outcome, error) {
	return s.ReleaseManyDelayed(ctx, leases, 0)
}

// ReleaseDelayed is Release, the item becoming ready again delayMs after now (profile delay).
func (s *ShardedQueue) ReleaseDelayed(ctx context.Context, l Lease, delayMs int64) (bool, error) {
	return owned(s.ReleaseManyDelayed(ctx, []Lease{l}, delayMs))(l.ID)
}

// ReleaseManyDelayed is ReleaseMany with a delay (profile delay).
func (s *ShardedQueue) ReleaseManyDelayed(ctx context.Context, leases []Lease, delayMs int64) ([]Outcome, error) {
	return s.ReleaseManyWith(ctx, leases, ReleaseOptions{DelayMs: delayMs})
}

// ReleaseWith is Release with options.
func (s *ShardedQueue) ReleaseWith(ctx context.Context, l Lease, opts ReleaseOptions) (bool, error) {
	return owned(s.ReleaseManyWith(ctx, []Lease{l}, opts))(l.ID)
}

// ReleaseManyWith is ReleaseMany with options, one call per shard. Without a delay it rings the
// bell for the items it released.
func (s *ShardedQueue) ReleaseManyWith(ctx context.Context, leases []Lease, opts ReleaseOptions) ([]Outcome, error) {
	if _, err := opts.head(); err != nil {
		return nil, err
	}
	if err := checkLeases(leases); err != nil {
		return nil, err
	}
	out, err := perShard(ctx, s, leases, leaseID, func(q *Queue, part []Lease) ([]Outcome, error) {
		return q.ReleaseManyWith(ctx, part, opts)
	})
	if err != nil {
		return nil, err
	}
	if opts.DelayMs == 0 {
		done := 0
		for _, o := range out {
			if o == Done {
				done++
			}
		}
		s.ring(ctx, done)
	}
	return out, nil
}

// Fail records a failed attempt on the item's shard (retry with backoff, or dead-letter).
func (s *ShardedQueue) Fail(ctx context.Context, l Lease, reason string) (FailResult, error) {
	return s.FailWith(ctx, l, reason, FailOptions{})
}

// FailWith is Fail with options, on the item's shard.
func (s *ShardedQueue) FailWith(ctx context.Context, l Lease, reason string, opts FailOptions) (FailResult, error) {
	if err := checkLease(l); err != nil {
		return FailResult{}, err
	}
	if _, err := opts.args(reason); err != nil {
		return FailResult{}, err
	}
	if err := s.ready(ctx); err != nil {
		return FailResult{}, err
	}
	return s.shards[s.ShardOf(l.ID)].FailWith(ctx, l, reason, opts)
}

// Counts returns the sum of the shards' counts (each read at its own instant).
func (s *ShardedQueue) Counts(ctx context.Context) (Counts, error) {
	if err := s.ready(ctx); err != nil {
		return Counts{}, err
	}
	var total Counts
	for _, q := range s.shards {
		c, err := q.Counts(ctx)
		if err != nil {
			return Counts{}, err
		}
		total.Queued += c.Queued
		total.Processing += c.Processing
		total.Delayed += c.Delayed
		total.Dead += c.Dead
	}
	return total, nil
}

// LightClean light-cleans every shard, chunk (1..1000) entries per call; one merged report.
func (s *ShardedQueue) LightClean(ctx context.Context, chunk int) (CleanReport, error) {
	return s.LightCleanPaced(ctx, chunk, 0)
}

// LightCleanPaced light-cleans every shard, each paced on its own (paceMs 0: not paced).
func (s *ShardedQueue) LightCleanPaced(ctx context.Context, chunk int, paceMs int64) (CleanReport, error) {
	if err := checkBatch("chunk", chunk); err != nil {
		return CleanReport{}, err
	}
	if err := checkDuration("pace_ms", paceMs, 0); err != nil {
		return CleanReport{}, err
	}
	return s.clean(ctx, func(q *Queue) (CleanReport, error) { return q.LightCleanPaced(ctx, chunk, paceMs) })
}

// DeepClean deep-cleans every shard (each SCANs its own node); one merged report.
func (s *ShardedQueue) DeepClean(ctx context.Context, chunk int) (CleanReport, error) {
	if err := checkBatch("chunk", chunk); err != nil {
		return CleanReport{}, err
	}
	return s.clean(ctx, func(q *Queue) (CleanReport, error) { return q.DeepClean(ctx, chunk) })
}

func (s *ShardedQueue) clean(ctx context.Context, fn func(q *Queue) (CleanReport, error)) (CleanReport, error) {
	if err := s.ready(ctx); err != nil {
		return CleanReport{}, err
	}
	all := CleanReport{Requeued: []string{}, Dead: []string{}}
	for _, q := range s.shards {
		r, err := fn(q)
		if err != nil {
			return CleanReport{}, err
		}
		all.Requeued = append(all.Requeued, r.Requeued...)
		all.Dead = append(all.Dead, r.Dead...)
		all.Dropped += r.Dropped
		all.Promoted += r.Promoted
	}
	return all, nil
}

// SetRetryPolicy stores the retry policy on every shard, replacing any previous one; nil removes
// it from every shard.
func (s *ShardedQueue) SetRetryPolicy(ctx context.Context, p *RetryPolicy) error {
	if p != nil {
		if _, err := p.args(); err != nil {
			return err
		}
	}
	if err := s.ready(ctx); err != nil {
		return err
	}
	for _, q := range s.shards {
		if err := q.SetRetryPolicy(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// SetRetryPolicyIfAbsent stores p on shard 0 if it has no policy; every other shard then gets
// shard 0's policy, whichever client stored it (RWQ-SHARD-008), so clients racing with different
// defaults, and a set cut short, leave one policy on every shard. A shard that holds it already
// is only read (a worker may read the policy, not write it). True when shard 0 stored p.
func (s *ShardedQueue) SetRetryPolicyIfAbsent(ctx context.Context, p *RetryPolicy) (bool, error) {
	if p == nil {
		return false, invalid("SetRetryPolicyIfAbsent needs a policy")
	}
	if _, err := p.args(); err != nil {
		return false, err
	}
	if err := s.ready(ctx); err != nil {
		return false, err
	}
	stored, err := s.shards[0].SetRetryPolicyIfAbsent(ctx, p)
	if err != nil {
		return false, err
	}
	decided := p
	if !stored {
		if decided, err = s.shards[0].RetryPolicy(ctx); err != nil {
			return false, err
		}
	}
	for _, q := range s.shards[1:] {
		current, err := q.RetryPolicy(ctx)
		if err != nil {
			return false, err
		}
		if samePolicy(current, decided) {
			continue
		}
		if err := q.SetRetryPolicy(ctx, decided); err != nil {
			return false, err
		}
	}
	return stored, nil
}

func samePolicy(a, b *RetryPolicy) bool {
	return a == b || (a != nil && b != nil && *a == *b)
}

// RetryPolicy reads the retry policy as shard 0 holds it (setting it sets every shard's); nil
// when it has none.
func (s *ShardedQueue) RetryPolicy(ctx context.Context) (*RetryPolicy, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	return s.shards[0].RetryPolicy(ctx)
}

// DeadItems lists the dead-lettered items of every shard, newest first, without payloads, from
// offset (0..100000000), at most count (1..1000): each shard lists its newest offset+count (in
// pages of at most 1000), then the lists are merged by dead-letter time (RWQ-SHARD-008).
func (s *ShardedQueue) DeadItems(ctx context.Context, offset, count int) ([]DeadItem, error) {
	if err := checkRange("offset", int64(offset), 0, 100_000_000); err != nil {
		return nil, err
	}
	if err := checkBatch("count", count); err != nil {
		return nil, err
	}
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	var every []DeadItem
	for _, q := range s.shards {
		var items []DeadItem
		for len(items) < offset+count {
			size := min(offset+count-len(items), MaxBatch)
			page, err := q.DeadItems(ctx, len(items), size)
			if err != nil {
				return nil, err
			}
			items = append(items, page...)
			if len(page) < size {
				break
			}
		}
		every = append(every, items...)
	}
	sort.SliceStable(every, func(i, j int) bool { return every[i].DeadAtMs > every[j].DeadAtMs })
	if offset >= len(every) {
		return []DeadItem{}, nil
	}
	return every[offset:min(offset+count, len(every))], nil
}

// DeadItem reads one dead-lettered item with its payload from its shard; nil when not dead.
func (s *ShardedQueue) DeadItem(ctx context.Context, id string) (*DeadItem, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	return s.shards[s.ShardOf(id)].DeadItem(ctx, id)
}

// RequeueDead makes dead items ready again, each on its shard, one call per shard; false where
// the id is not dead or is live again. It rings the bell for the items it made ready.
func (s *ShardedQueue) RequeueDead(ctx context.Context, ids []string) ([]bool, error) {
	done, err := s.deadAction(ctx, ids, (*Queue).RequeueDead)
	if err == nil {
		s.ring(ctx, countTrue(done))
	}
	return done, err
}

// PurgeDead deletes dead items for good, each on its shard; false where the id is not dead.
func (s *ShardedQueue) PurgeDead(ctx context.Context, ids []string) ([]bool, error) {
	return s.deadAction(ctx, ids, (*Queue).PurgeDead)
}

func (s *ShardedQueue) deadAction(ctx context.Context, ids []string,
	action func(q *Queue, ctx context.Context, ids []string) ([]bool, error)) ([]bool, error) {
	for _, id := range ids {
		if err := checkID(id); err != nil {
			return nil, err
		}
	}
	return perShard(ctx, s, ids, sameID, func(q *Queue, part []string) ([]bool, error) {
		return action(q, ctx, part)
	})
}

// TrimDead applies the dead-letter retention on every shard; how many dead items it removed.
func (s *ShardedQueue) TrimDead(ctx context.Context) (int64, error) {
	if err := s.ready(ctx); err != nil {
		return 0, err
	}
	var total int64
	for _, q := range s.shards {
		n, err := q.TrimDead(ctx)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}
