package rwq

import (
	"context"
	"fmt"
	"hash/crc32"
	"math/rand"
	"sort"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// MaxShards bounds the shards of a ShardedQueue.
const MaxShards = 1024

// ShardedQueue is one logical queue over N RWQ/1 queues {prefix#i}, for a queue that must
// outgrow one Redis node: a preview of profile sharded (SPEC §19, a draft; docs/design/sharded.md).
//
// Shard i is an ordinary Queue whose prefix is {prefix#i}, in the hash slot of prefix#i, so a
// Redis Cluster spreads the shards over its masters. An id always lands on shard
// crc32.ChecksumIEEE(id) % N, so Add stays idempotent; every client of the queue must use the
// same N, which the first operation records in shard 0 or checks against the one recorded there
// (ErrShardMismatch). Leases visit the shards in rotation, one step further on every call: with
// every shard non-empty, one consumer takes from each in turn. It is safe for concurrent use.
type ShardedQueue struct {
	prefix  string
	shards  []*Queue
	mu      sync.Mutex // guards next and counted
	next    int
	counted bool
}

// NewSharded returns queue prefix over shards (1..1024) queues; opts apply to every shard.
func NewSharded(rdb redis.UniversalClient, prefix string, shards int, opts *Options) (*ShardedQueue, error) {
	if err := checkRange("shards", int64(shards), 1, MaxShards); err != nil {
		return nil, err
	}
	if prefix == "" || strings.ContainsAny(prefix, "{}") {
		return nil, invalid("a sharded queue's prefix must be non-empty and hold no '{' or '}'")
	}
	if err := checkPrefix(prefix, false); err != nil {
		return nil, err
	}
	s := &ShardedQueue{prefix: prefix, next: rand.Intn(shards)}
	for i := 0; i < shards; i++ {
		q, err := New(rdb, fmt.Sprintf("{%s#%d}", prefix, i), opts)
		if err != nil {
			return nil, err
		}
		s.shards = append(s.shards, q)
	}
	return s, nil
}

// Shards returns the shards' queues, in shard order.
func (s *ShardedQueue) Shards() []*Queue { return s.shards }

// ShardOf returns the shard that holds id.
func (s *ShardedQueue) ShardOf(id string) int {
	return int(crc32.ChecksumIEEE([]byte(id)) % uint32(len(s.shards)))
}

// turn returns the shards in this call's order; the next call starts one further.
func (s *ShardedQueue) turn() []*Queue {
	s.mu.Lock()
	start := s.next
	s.next = (s.next + 1) % len(s.shards)
	s.mu.Unlock()
	order := make([]*Queue, len(s.shards))
	for i := range order {
		order[i] = s.shards[(start+i)%len(s.shards)]
	}
	return order
}

// ready records or checks the shard count once, before the first I/O of the first operation.
func (s *ShardedQueue) ready(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.counted {
		return nil
	}
	first := s.shards[0]
	reply, err := first.eval(ctx, "shards", first.one(), len(s.shards))
	if err != nil {
		return err
	}
	recorded, ok := reply.(int64)
	if !ok {
		return unexpected("shards", reply)
	}
	if recorded != int64(len(s.shards)) {
		return &Error{Code: CodeShardMismatch, Message: fmt.Sprintf(
			"queue %q has %d shards recorded in %s:shards, this client %d", s.prefix, recorded, first.prefix, len(s.shards))}
	}
	s.counted = true
	return nil
}

// Add adds an item to its shard; false if the id is already known.
func (s *ShardedQueue) Add(ctx context.Context, id string, data []byte) (bool, error) {
	if err := checkNewID(id); err != nil {
		return false, err
	}
	if err := s.ready(ctx); err != nil {
		return false, err
	}
	return s.shards[s.ShardOf(id)].Add(ctx, id, data)
}

// AddMany adds items, one batch per shard; one added-flag per item, in order.
func (s *ShardedQueue) AddMany(ctx context.Context, items []Item) ([]bool, error) {
	groups := map[int][]int{}
	for i, it := range items {
		if err := checkNewID(it.ID); err != nil {
			return nil, err
		}
		groups[s.ShardOf(it.ID)] = append(groups[s.ShardOf(it.ID)], i)
	}
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	added := make([]bool, len(items))
	for _, shard := range sortedShards(groups) {
		part := make([]Item, 0, len(groups[shard]))
		for _, i := range groups[shard] {
			part = append(part, items[i])
		}
		flags, err := s.shards[shard].AddMany(ctx, part)
		if err != nil {
			return nil, err
		}
		for k, i := range groups[shard] {
			added[i] = flags[k]
		}
	}
	return added, nil
}

// Lease leases one ready item from the shards in rotation, without waiting; nil when none.
func (s *ShardedQueue) Lease(ctx context.Context, leaseMs int64) (*Lease, error) {
	if err := checkDuration("lease_ms", leaseMs, 1); err != nil {
		return nil, err
	}
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	_, l, err := s.sweep(ctx, leaseMs)
	return l, err
}

func (s *ShardedQueue) sweep(ctx context.Context, leaseMs int64) ([]*Queue, *Lease, error) {
	order := s.turn()
	for _, q := range order {
		l, err := q.Lease(ctx, leaseMs)
		if err != nil || l != nil {
			return order, l, err
		}
	}
	return order, nil, nil
}

// LeaseBlocking leases one ready item, waiting up to timeoutMs (0: no limit, until ctx is done):
// after each empty sweep of the shards it waits on the first of them for at most a second.
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
	for waited := int64(0); ; {
		order, l, err := s.sweep(ctx, leaseMs)
		if err != nil || l != nil {
			return l, err
		}
		if timeoutMs > 0 && waited >= timeoutMs {
			return nil, nil
		}
		step := int64(maxBlockStepMs)
		if timeoutMs > 0 && timeoutMs-waited < step {
			step = timeoutMs - waited
		}
		if l, err := order[0].LeaseBlocking(ctx, leaseMs, step); err != nil || l != nil {
			return l, err
		}
		waited += step
	}
}

// LeaseMany leases up to count ready items, from the shards in rotation.
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
	var leased []Lease
	for _, q := range s.turn() {
		got, err := q.LeaseMany(ctx, count-len(leased), leaseMs)
		if err != nil {
			return nil, err
		}
		if leased = append(leased, got...); len(leased) == count {
			break
		}
	}
	return leased, nil
}

// held checks a lease whole and returns its shard.
func (s *ShardedQueue) held(ctx context.Context, l Lease) (*Queue, error) {
	if err := checkLease(l); err != nil {
		return nil, err
	}
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	return s.shards[s.ShardOf(l.ID)], nil
}

// Renew extends a held lease; false if it was lost.
func (s *ShardedQueue) Renew(ctx context.Context, l Lease, leaseMs int64) (bool, error) {
	if err := checkDuration("lease_ms", leaseMs, 1); err != nil {
		return false, err
	}
	q, err := s.held(ctx, l)
	if err != nil {
		return false, err
	}
	return q.Renew(ctx, l, leaseMs)
}

// Complete completes an item on its shard: true for its first completer only.
func (s *ShardedQueue) Complete(ctx context.Context, id string) (bool, error) {
	if err := checkID(id); err != nil {
		return false, err
	}
	if err := s.ready(ctx); err != nil {
		return false, err
	}
	return s.shards[s.ShardOf(id)].Complete(ctx, id)
}

// CompleteOwned completes an item only while l is still held (ErrLeaseLost otherwise).
func (s *ShardedQueue) CompleteOwned(ctx context.Context, l Lease) (bool, error) {
	q, err := s.held(ctx, l)
	if err != nil {
		return false, err
	}
	return q.CompleteOwned(ctx, l)
}

// CompleteMany completes items, one call per shard; one outcome per id, in order.
func (s *ShardedQueue) CompleteMany(ctx context.Context, ids []string) ([]Outcome, error) {
	if err := checkBatch("ids", len(ids)); err != nil {
		return nil, err
	}
	groups := map[int][]int{}
	for i, id := range ids {
		if err := checkID(id); err != nil {
			return nil, err
		}
		groups[s.ShardOf(id)] = append(groups[s.ShardOf(id)], i)
	}
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	outcomes := make([]Outcome, len(ids))
	for _, shard := range sortedShards(groups) {
		part := make([]string, 0, len(groups[shard]))
		for _, i := range groups[shard] {
			part = append(part, ids[i])
		}
		got, err := s.shards[shard].CompleteMany(ctx, part)
		if err != nil {
			return nil, err
		}
		for k, i := range groups[shard] {
			outcomes[i] = got[k]
		}
	}
	return outcomes, nil
}

// Release gives a held item back to its shard's queue.
func (s *ShardedQueue) Release(ctx context.Context, l Lease) (bool, error) {
	q, err := s.held(ctx, l)
	if err != nil {
		return false, err
	}
	return q.Release(ctx, l)
}

// Fail records a failed attempt on the item's shard (retry with backoff, or dead-letter).
func (s *ShardedQueue) Fail(ctx context.Context, l Lease, reason string) (FailResult, error) {
	if len(reason) > 1024 {
		return FailResult{}, invalid("reason must be at most 1024 bytes")
	}
	q, err := s.held(ctx, l)
	if err != nil {
		return FailResult{}, err
	}
	return q.Fail(ctx, l, reason)
}

// Counts returns the sum of the shards' counts.
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

// LightCleanPaced light-cleans every shard (each paced on its own; paceMs 0: not paced).
func (s *ShardedQueue) LightCleanPaced(ctx context.Context, chunk int, paceMs int64) (CleanReport, error) {
	if err := checkBatch("chunk", chunk); err != nil {
		return CleanReport{}, err
	}
	if err := checkDuration("pace_ms", paceMs, 0); err != nil {
		return CleanReport{}, err
	}
	if err := s.ready(ctx); err != nil {
		return CleanReport{}, err
	}
	var all CleanReport
	for _, q := range s.shards {
		r, err := q.LightCleanPaced(ctx, chunk, paceMs)
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

func sortedShards(groups map[int][]int) []int {
	shards := make([]int, 0, len(groups))
	for shard := range groups {
		shards = append(shards, shard)
	}
	sort.Ints(shards)
	return shards
}
