// Package rwq is a client of RWQ/1, the at-least-once work queue protocol stored in Redis
// (SPEC.md at the repository root). Every operation that writes is one call of a canonical Lua
// script, embedded from the repository's lua/ directory; this package validates arguments,
// calls the scripts (EVALSHA, then EVAL on NOSCRIPT) and parses their replies.
//
// Durations are integer milliseconds, measured by the Redis server's clock. Every error is an
// *Error carrying an RWQ/1 code; test it with errors.Is(err, rwq.ErrLeaseLost) and friends.
package rwq

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// maxBlockStepMs bounds each BLMOVE of a blocking lease (SPEC RWQ-LEASE-012).
const maxBlockStepMs = 1000

// Options tune a Queue; the zero value is the default.
type Options struct {
	// LegacyLeaseKey also writes <prefix>:leased_by_session:<id> on lease, claim and renew, for
	// fleets that still run redis-work-queue 0.1.x workers or cleaners (SPEC RWQ-COMPAT-004).
	LegacyLeaseKey bool
	// FlatInFlight keeps this client's leased ids in the sorted set <prefix>:in_flight, scored
	// with their lease deadline, rather than in the processing list (profile flat, SPEC §18):
	// completes, releases and cleans then cost the same however many items are in flight.
	// redis-work-queue 0.1.x cleaners do not see those leases; SPEC §18 lists what a mixed fleet
	// loses.
	FlatInFlight bool
	// Warn receives warnings about server settings (an eviction policy other than noeviction);
	// nil logs them with the standard logger.
	Warn func(msg string)
	// Ack, when set, makes adds and completes wait for replicas (profile ack, SPEC §17).
	Ack *Ack
	// DeclaredKeys makes every script call pass every key its script touches in KEYS (profile
	// declared-keys, SPEC §20), for servers, proxies and managed offerings that route or
	// authorise script calls by their declared keys (Dragonfly refuses undeclared keys by
	// default). It changes no result, and queues with and without it may share a queue; a call
	// that finds ids in the queue's lists (a lease, a clean) may cost one more round trip when
	// its window of ids is stale. On Redis 7 a declared key needs read and write permission, so
	// ACL roles need read-write patterns for every key they declare (RWQ-DECL-005).
	DeclaredKeys bool
}

// Ack is profile ack's setting: after each script call of an add or a complete, WAIT on the same
// connection until Replicas replicas have the write, at most TimeoutMs; fewer is ErrNotReplicated.
type Ack struct {
	Replicas  int   // 0..1000; 0 does not wait
	TimeoutMs int64 // 1..31536000000; WAIT takes 0 as forever, so 0 is refused
}

// Queue is one RWQ/1 queue, identified by its key prefix. It is safe for concurrent use.
//
// A blocking lease waits in BLMOVE steps of at most a second; a step shorter than a second
// (near its deadline or a delayed item's due time) must fit in the client's ReadTimeout, as it
// does with the go-redis default of 3 s.
type Queue struct {
	rdb             redis.UniversalClient
	cluster         *redis.ClusterClient
	prefix          string
	queue, inflight string
	legacy, flat    string
	warn            func(string)
	ack             *Ack
	declared        bool
	windows         windows // profile declared-keys: the last window per kind of finding call

	mu      sync.Mutex
	checked bool
}

// Item is an id and its payload, for AddMany.
type Item struct {
	ID   string
	Data []byte
}

// Lease is a leased item. Token proves ownership (treat it as a secret, SPEC RWQ-SEC-003);
// Attempt is 1 for an item's first lease under a retry policy, 2 for the next..., and 0 when
// the queue has no retry policy.
type Lease struct {
	ID      string `json:"id"`
	Data    []byte `json:"data"`
	Token   string `json:"token"`
	Attempt int64  `json:"attempt"`
}

// String describes a lease without its token: a log line or an error must not leak it.
func (l Lease) String() string {
	return fmt.Sprintf("Lease{ID: %q, Data: %d bytes, Attempt: %d}", l.ID, len(l.Data), l.Attempt)
}

// GoString is %#v's form, the token redacted.
func (l Lease) GoString() string {
	return fmt.Sprintf("rwq.Lease{ID:%q, Data:%q, Token:\"<redacted>\", Attempt:%d}", l.ID, l.Data, l.Attempt)
}

// Format makes every verb (%v, %+v, %s, %q...) print String, and %#v GoString, so that fmt never
// prints the fields, token included.
func (l Lease) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = io.WriteString(f, l.GoString())
		return
	}
	_, _ = io.WriteString(f, l.String())
}

// Outcome is the per-item result of CompleteMany and ReleaseMany.
type Outcome int

// Outcomes, as the scripts report them.
const (
	Done      Outcome = 1  // completed or released by this call
	Gone      Outcome = 0  // the item no longer exists (already completed)
	NotHolder Outcome = -1 // owner-checked and the caller does not hold the lease; untouched
)

// MarshalText gives the outcome's name (String), so that outcomes encode as JSON strings.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

func (o Outcome) String() string {
	switch o {
	case Done:
		return "done"
	case Gone:
		return "gone"
	case NotHolder:
		return "lease_lost"
	}
	return "outcome(" + strconv.Itoa(int(o)) + ")"
}

// Counts are the ready, in-flight, delayed and dead counts, read at one instant.
type Counts struct {
	Queued     int64 `json:"queued"`
	Processing int64 `json:"processing"`
	Delayed    int64 `json:"delayed"`
	Dead       int64 `json:"dead"`
}

// CleanReport is what a clean did.
type CleanReport struct {
	Requeued []string `json:"requeued"` // ids put back at the left of <prefix>:queue
	Dropped  int64    `json:"dropped"`  // ghost entries removed
	Dead     []string `json:"dead"`     // ids dead-lettered (light clean, profile retry)
	Promoted int64    `json:"promoted"` // due delayed items moved to the queue (light clean, profile delay)
}

// New returns the queue with the given prefix on rdb: a *redis.Client (standalone, Sentinel
// failover) or a *redis.ClusterClient, on which the prefix must contain a hash tag ("{jobs}").
// opts may be nil. New does no I/O; the server is checked on the first operation.
//
// Create rdb with MaxRetries: -1 (New refuses a client that retries). go-redis retries a command
// whose connection failed, so a script whose reply was lost would run again and its second answer
// be reported (a Complete saying false to the call that completed the item); without retries that
// is a REDIS_ERROR (RWQ-FAIL-004).
//
// A prefix of the form {P#i}, i in 0..1023, is shard i of sharded queue P: New refuses it
// (RWQ-KEYS-010); NewSharded opens the shards.
func New(rdb redis.UniversalClient, prefix string, opts *Options) (*Queue, error) {
	if err := checkShardForm(prefix); err != nil {
		return nil, err
	}
	return openQueue(rdb, prefix, opts)
}

// openQueue is New without the shard-form check: the way a ShardedQueue opens its shards.
func openQueue(rdb redis.UniversalClient, prefix string, opts *Options) (*Queue, error) {
	if rdb == nil {
		return nil, invalid("a Redis client is required")
	}
	if retries(rdb) > 0 {
		return nil, invalid("create the Redis client with MaxRetries: -1: it re-sends a command whose " +
			"connection failed, so a script whose reply was lost would run twice (RWQ-FAIL-004)")
	}
	if _, ring := rdb.(*redis.Ring); ring {
		return nil, invalid("redis.Ring is not supported: it would spread one queue over shards")
	}
	cluster, _ := rdb.(*redis.ClusterClient)
	if err := checkPrefix(prefix, cluster != nil); err != nil {
		return nil, err
	}
	if opts == nil {
		opts = &Options{}
	}
	q := &Queue{rdb: rdb, cluster: cluster, prefix: prefix, queue: prefix + ":queue",
		inflight: prefix + ":processing", legacy: "0", flat: "0", warn: opts.Warn, declared: opts.DeclaredKeys}
	if opts.LegacyLeaseKey {
		q.legacy = "1"
	}
	if opts.FlatInFlight {
		q.flat = "1"
	}
	if a := opts.Ack; a != nil {
		if a.Replicas < 0 || a.Replicas > maxAckReplicas {
			return nil, invalid(fmt.Sprintf("Ack.Replicas must be in 0..%d", maxAckReplicas))
		}
		if err := checkDuration("Ack.TimeoutMs", a.TimeoutMs, 1); err != nil {
			return nil, err
		}
		if a.Replicas > 0 {
			q.ack = &Ack{Replicas: a.Replicas, TimeoutMs: a.TimeoutMs}
		}
	}
	if q.warn == nil {
		q.warn = func(msg string) { log.Print(msg) }
	}
	return q, nil
}

// Prefix is the queue's key prefix.
func (q *Queue) Prefix() string { return q.prefix }

// conn is a client of one server (or the cluster client): a *redis.Client or a redis.UniversalClient.
type conn interface {
	redis.Cmdable
	Do(ctx context.Context, args ...any) *redis.Cmd
}

// retries is how often rdb re-sends a command whose connection failed (go-redis's default is 3;
// MaxRetries: -1 makes it 0). A cluster's node clients, which run the queue's commands, inherit it.
func retries(rdb redis.UniversalClient) int {
	switch c := rdb.(type) {
	case *redis.Client:
		return c.Options().MaxRetries
	case *redis.ClusterClient:
		return c.Options().MaxRetries
	}
	return 0
}

// node is where commands about the queue go: on a cluster, the master of its slot, directly.
// A ClusterClient retries a command whose connection failed whatever its MaxRetries, so a script or
// BLMOVE whose reply was lost would run twice and its second answer be reported (RWQ-FAIL-004);
// the node's own client honours MaxRetries: -1.
func (q *Queue) node(ctx context.Context) (conn, error) {
	if q.cluster == nil {
		return q.rdb, nil
	}
	n, err := q.cluster.MasterForKey(ctx, q.queue)
	if err != nil {
		return nil, translate(err)
	}
	return n, nil
}

// nodeFailed is called with the error of every command sent to a cluster node directly (see node),
// and returns it unchanged. That path bypasses the cluster client's own, and go-redis reloads its
// slot map only when one older than 10 s is used: after a master died and its replica took over,
// the queue would keep calling the dead node until then. So a failure without a reply (refused or
// lost connection, network timeout) reloads the map in the background, for the next call to find
// the new master; the failed call is still reported (it may or may not have run). A reply of the
// server (redis.Nil included), an RWQ/1 error or the caller's context ending reloads nothing.
func nodeFailed(ctx context.Context, cluster *redis.ClusterClient, err error) error {
	if cluster == nil || err == nil || ctx.Err() != nil {
		return err
	}
	var reply redis.Error
	var rwqErr *Error
	if errors.As(err, &reply) || errors.As(err, &rwqErr) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	cluster.ReloadState(ctx)
	return err
}

// check refuses servers older than 6.2 and warns about an eviction policy (SPEC §11), once.
func (q *Queue) check(ctx context.Context) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.checked {
		return nil
	}
	n, err := q.node(ctx)
	if err != nil {
		return err
	}
	// INFO, never CONFIG (no ACL role of SPEC §13 gets it); a server that refuses INFO leaves
	// the version and the policy unknown, and the operation goes on.
	info, err := n.Info(ctx, "server").Result()
	err = nodeFailed(ctx, q.cluster, err)
	if refused(err) {
		q.checked = true
		return nil
	}
	if err != nil {
		return translate(err)
	}
	if err := checkVersion(info); err != nil {
		return err
	}
	memory, err := n.Info(ctx, "memory").Result()
	err = nodeFailed(ctx, q.cluster, err)
	if err != nil && !refused(err) {
		return translate(err)
	}
	if p := infoField(memory, "maxmemory_policy"); p != "" && p != "noeviction" {
		q.warn("rwq: Redis maxmemory-policy is " + p + ", not noeviction: an evicted lease or item means a duplicate run or a lost item")
	}
	q.checked = true
	return nil
}

// refused reports an error reply of the server (NOPERM, an unknown or renamed command), not a
// failed connection.
func refused(err error) bool {
	var rerr redis.Error
	return errors.As(err, &rerr) && !errors.Is(err, redis.Nil)
}

// infoField reads one field of an INFO reply ("" when absent).
func infoField(info, name string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v
		}
	}
	return ""
}

// checkVersion reads redis_version from an INFO reply and refuses anything older than 6.2.
func checkVersion(info string) error {
	version := infoField(info, "redis_version")
	var major, minor int
	if _, err := fmt.Sscanf(version, "%d.%d", &major, &minor); err != nil {
		return redisFailure("cannot read redis_version from INFO server: "+quote(version), err)
	}
	if major < 6 || major == 6 && minor < 2 {
		return &Error{Code: CodeUnsupportedServer, Message: "RWQ/1 needs Redis >= 6.2, the server is " + version}
	}
	return nil
}

// eval runs a canonical script; a nil reply comes back as (nil, nil). keys and args are the
// script's core call shape (SPEC §6): with profile declared-keys, eval declares the call's keys
// and takes the window out of a finding script's reply, keeping it for the next call of its kind.
func (q *Queue) eval(ctx context.Context, name string, keys []string, args ...any) (any, error) {
	if !q.declared {
		return q.run(ctx, name, keys, args)
	}
	kind := windowKind(name, args)
	var window []string
	if kind != "" {
		window = q.windows.get(kind)
	}
	reply, err := q.run(ctx, name, declaredKeys(name, keys, args, window), args)
	if err != nil || kind == "" {
		return reply, err
	}
	reply, window, err = splitWindow(name, reply)
	if err != nil {
		return nil, err
	}
	q.windows.set(kind, window)
	return reply, nil
}

// run runs a canonical script with exactly keys and args.
func (q *Queue) run(ctx context.Context, name string, keys []string, args []any) (any, error) {
	if err := q.check(ctx); err != nil {
		return nil, err
	}
	node, err := q.node(ctx)
	if err != nil {
		return nil, err
	}
	if q.ack != nil && acknowledged[name] {
		return q.evalAcked(ctx, node, name, keys, args)
	}
	reply, err := scripts[name].Run(ctx, node, keys, args...).Result()
	if q.cluster != nil && redirected(err) {
		// The slot moved and the script did not run: the cluster client follows the redirection.
		reply, err = scripts[name].Run(ctx, q.rdb, keys, args...).Result()
	}
	err = nodeFailed(ctx, q.cluster, err)
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, translate(err)
	}
	return reply, nil
}

func (q *Queue) both() []string { return []string{q.queue, q.inflight} }
func (q *Queue) one() []string  { return []string{q.queue} }

func newToken() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("rwq: no secure randomness: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// chunks calls fn for consecutive slices of at most size elements of items.
func chunks[T any](items []T, size int, fn func([]T) error) error {
	for start := 0; start < len(items); start += size {
		if err := fn(items[start:min(start+size, len(items))]); err != nil {
			return err
		}
	}
	return nil
}

// Add adds an item unless an item with that id exists (live, delayed or dead); true when this
// call created it.
func (q *Queue) Add(ctx context.Context, id string, data []byte) (bool, error) {
	return firstBool(q.add(ctx, []Item{{id, data}}, 0))
}

// AddMany adds items in one round trip per 1000; one added-flag per item, in order. A repeated
// id is added once, at its first occurrence.
func (q *Queue) AddMany(ctx context.Context, items []Item) ([]bool, error) {
	return q.add(ctx, items, 0)
}

// AddDelayed adds an item that becomes ready delayMs after now, on the server's clock (profile
// delay; 0 is Add).
func (q *Queue) AddDelayed(ctx context.Context, id string, data []byte, delayMs int64) (bool, error) {
	return firstBool(q.add(ctx, []Item{{id, data}}, delayMs))
}

// AddManyDelayed is AddMany with a delay (profile delay).
func (q *Queue) AddManyDelayed(ctx context.Context, items []Item, delayMs int64) ([]bool, error) {
	return q.add(ctx, items, delayMs)
}

func (q *Queue) add(ctx context.Context, items []Item, delayMs int64) ([]bool, error) {
	if err := checkDuration("delay_ms", delayMs, 0); err != nil {
		return nil, err
	}
	for _, it := range items {
		if err := checkNewID(it.ID); err != nil {
			return nil, err
		}
	}
	added := make([]bool, 0, len(items))
	err := chunks(items, MaxBatch, func(part []Item) error {
		args := make([]any, 0, 1+2*len(part))
		args = append(args, delayMs)
		for _, it := range part {
			args = append(args, it.ID, it.Data)
		}
		flags, err := q.ints(ctx, "add", q.one(), len(part), args...)
		for _, f := range flags {
			added = append(added, f == 1)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return added, nil
}

// Lease leases the oldest ready item for leaseMs without waiting; nil when none is ready.
func (q *Queue) Lease(ctx context.Context, leaseMs int64) (*Lease, error) {
	if err := checkDuration("lease_ms", leaseMs, 1); err != nil {
		return nil, err
	}
	return firstLease(q.lease(ctx, leaseMs, 1, false, 0))
}

// LeaseBlocking leases the oldest ready item, waiting up to timeoutMs on the server's clock for
// one (0: no limit, until ctx is done); nil when the timeout passed. Long-running consumers
// should use a finite timeout and loop (SPEC RWQ-LEASE-011).
func (q *Queue) LeaseBlocking(ctx context.Context, leaseMs, timeoutMs int64) (*Lease, error) {
	if err := checkDuration("lease_ms", leaseMs, 1); err != nil {
		return nil, err
	}
	if err := checkDuration("timeout_ms", timeoutMs, 0); err != nil {
		return nil, err
	}
	return firstLease(q.lease(ctx, leaseMs, 1, true, timeoutMs))
}

// LeaseMany leases up to count (1..1000) ready items under one token, without waiting.
func (q *Queue) LeaseMany(ctx context.Context, count int, leaseMs int64) ([]Lease, error) {
	if err := checkDuration("lease_ms", leaseMs, 1); err != nil {
		return nil, err
	}
	if err := checkBatch("count", count); err != nil {
		return nil, err
	}
	return q.lease(ctx, leaseMs, count, false, 0)
}

func (q *Queue) lease(ctx context.Context, leaseMs int64, count int, block bool, timeoutMs int64) ([]Lease, error) {
	return q.leaseLoop(ctx, newToken(), leaseMs, count, block, timeoutMs)
}

// leaseReply is a lease script's reply: [again, now_ms, due_in_ms, [id, payload, attempt], ...].
type leaseReply struct {
	again, now, dueIn int64
	leases            []Lease
}

// parseLease reads a lease reply (of the lease script, or the lease part of complete_and_lease)
// whose items were leased under token.
func parseLease(script string, reply any, token string) (leaseReply, error) {
	arr, ok := reply.([]any)
	if !ok || len(arr) < 3 {
		return leaseReply{}, unexpected(script, reply)
	}
	r := leaseReply{again: toInt(arr[0]), now: toInt(arr[1]), dueIn: toInt(arr[2])}
	if len(arr) > 3 {
		r.leases = make([]Lease, 0, len(arr)-3)
		for _, raw := range arr[3:] {
			e, ok := raw.([]any)
			if !ok || len(e) != 3 {
				return leaseReply{}, unexpected(script, reply)
			}
			r.leases = append(r.leases, Lease{ID: toStr(e[0]), Data: []byte(toStr(e[1])), Token: token, Attempt: toInt(e[2])})
		}
	}
	return r, nil
}

// leaseCalls runs non-blocking lease calls under token until count items are leased or a reply
// says again = 0 (SPEC RWQ-LEASE-007, RWQ-DECL-004), each call asking for what is still
// missing: the leases, and the server's time and the ms until the next delayed item is due (-1:
// none) of the last call.
func (q *Queue) leaseCalls(ctx context.Context, token string, leaseMs int64, count int) ([]Lease, int64, int64, error) {
	var leased []Lease
	for {
		reply, err := q.eval(ctx, "lease", q.both(), leaseMs, token, count-len(leased), q.legacy, q.flat)
		if err != nil {
			return nil, 0, 0, err
		}
		r, err := parseLease("lease", reply, token)
		if err != nil {
			return nil, 0, 0, err
		}
		leased = append(leased, r.leases...)
		if len(leased) >= count || r.again != 1 {
			return leased, r.now, r.dueIn, nil
		}
	}
}

// leaseLoop leases up to count items under token: non-blocking, what leaseCalls finds; blocking
// (count 1), it waits in BLMOVE steps until an item is leased or the wait ends.
func (q *Queue) leaseLoop(ctx context.Context, token string, leaseMs int64, count int, block bool, timeoutMs int64) ([]Lease, error) {
	deadline := int64(-1)
	for {
		leased, now, dueIn, err := q.leaseCalls(ctx, token, leaseMs, count)
		if err != nil {
			return nil, err
		}
		if len(leased) > 0 || !block {
			return leased, nil
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
		if dueIn >= 0 {
			wait = max(min(wait, dueIn), 1)
		}
		id, err := q.blmove(ctx, wait)
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return nil, translate(err)
		}
		claimed, err := q.eval(ctx, "claim", q.both(), id, leaseMs, token, q.legacy, q.flat)
		if err != nil {
			return nil, err
		}
		if c, ok := claimed.([]any); ok && len(c) == 3 && toInt(c[0]) == 1 {
			return []Lease{{ID: id, Data: []byte(toStr(c[1])), Token: token, Attempt: toInt(c[2])}}, nil
		}
	}
}

// blmove waits up to waitMs for a ready id and moves it to processing (SPEC RWQ-LEASE-008).
func (q *Queue) blmove(ctx context.Context, waitMs int64) (string, error) {
	node, err := q.node(ctx)
	if err != nil {
		return "", err
	}
	id, err := blmoveOn(ctx, node, q.queue, q.inflight, waitMs)
	if q.cluster != nil && redirected(err) { // the slot moved and nothing was moved
		id, err = blmoveOn(ctx, q.rdb, q.queue, q.inflight, waitMs)
	}
	return id, nodeFailed(ctx, q.cluster, err)
}

func blmoveOn(ctx context.Context, c conn, queue, inflight string, waitMs int64) (string, error) {
	if waitMs%1000 == 0 { // whole seconds: go-redis extends its read timeout by the wait
		return c.BLMove(ctx, queue, inflight, "RIGHT", "LEFT", time.Duration(waitMs)*time.Millisecond).Result()
	}
	// BLMove would round a shorter wait up to a second; this one runs under ReadTimeout.
	timeout := strconv.FormatFloat(float64(waitMs)/1000, 'f', 3, 64)
	return c.Do(ctx, "BLMOVE", queue, inflight, "RIGHT", "LEFT", timeout).Text()
}

// redirected reports a MOVED or ASK reply: the node does not serve the slot, the command did not run.
func redirected(err error) bool {
	var rerr redis.Error
	return errors.As(err, &rerr) && (strings.HasPrefix(rerr.Error(), "MOVED ") || strings.HasPrefix(rerr.Error(), "ASK "))
}

// Renew extends a held lease to leaseMs from now; false when the caller lost it (expired,
// taken over or completed) and must stop working on the item.
func (q *Queue) Renew(ctx context.Context, l Lease, leaseMs int64) (bool, error) {
	return firstBool(q.RenewMany(ctx, []Lease{l}, leaseMs))
}

// RenewMany renews many leases in one round trip per 1000; false where the lease was lost.
func (q *Queue) RenewMany(ctx context.Context, leases []Lease, leaseMs int64) ([]bool, error) {
	if err := checkDuration("lease_ms", leaseMs, 1); err != nil {
		return nil, err
	}
	if err := checkLeases(leases); err != nil {
		return nil, err
	}
	renewed := make([]bool, 0, len(leases))
	err := chunks(leases, MaxBatch, func(part []Lease) error {
		args := append([]any{leaseMs, q.legacy}, leasePairs(part)...)
		flags, err := q.ints(ctx, "renew", q.one(), len(part), args...)
		for _, f := range flags {
			renewed = append(renewed, f == 1)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return renewed, nil
}

func leasePairs(leases []Lease) []any {
	args := make([]any, 0, 2*len(leases))
	for _, l := range leases {
		args = append(args, l.ID, l.Token)
	}
	return args
}

// Complete completes an item by id, whoever holds it (a delayed item is cancelled): true for
// its first completer only.
func (q *Queue) Complete(ctx context.Context, id string) (bool, error) {
	return owned(q.CompleteMany(ctx, []string{id}))(id)
}

// CompleteMany completes items by id in one round trip per 1000: Done or Gone per id.
func (q *Queue) CompleteMany(ctx context.Context, ids []string) ([]Outcome, error) {
	for _, id := range ids {
		if err := checkID(id); err != nil {
			return nil, err
		}
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return q.outcomes(ctx, "complete", []any{"any"}, 1, args)
}

// CompleteOwned completes an item only while the caller holds its lease (require_lease): true
// for the first completer, false when the item was gone, ErrLeaseLost when the lease is not held.
func (q *Queue) CompleteOwned(ctx context.Context, l Lease) (bool, error) {
	return owned(q.CompleteManyOwned(ctx, []Lease{l}))(l.ID)
}

// CompleteManyOwned is CompleteOwned for many leases: Done, Gone or NotHolder per lease.
func (q *Queue) CompleteManyOwned(ctx context.Context, leases []Lease) ([]Outcome, error) {
	if err := checkLeases(leases); err != nil {
		return nil, err
	}
	return q.outcomes(ctx, "complete", []any{"owner"}, 2, leasePairs(leases))
}

// Release gives a held item back to the queue at once: true when released, false when the item
// was gone (completed meanwhile), ErrLeaseLost when the caller does not hold the lease.
func (q *Queue) Release(ctx context.Context, l Lease) (bool, error) {
	return q.ReleaseDelayed(ctx, l, 0)
}

// ReleaseMany releases many held items in one round trip per 1000.
func (q *Queue) ReleaseMany(ctx context.Context, leases []Lease) ([]Outcome, error) {
	return q.ReleaseManyDelayed(ctx, leases, 0)
}

// ReleaseDelayed is Release, the item becoming ready again delayMs after now (profile delay).
func (q *Queue) ReleaseDelayed(ctx context.Context, l Lease, delayMs int64) (bool, error) {
	return owned(q.ReleaseManyDelayed(ctx, []Lease{l}, delayMs))(l.ID)
}

// ReleaseManyDelayed is ReleaseMany with a delay (profile delay).
func (q *Queue) ReleaseManyDelayed(ctx context.Context, leases []Lease, delayMs int64) ([]Outcome, error) {
	return q.ReleaseManyWith(ctx, leases, ReleaseOptions{DelayMs: delayMs})
}

// ReleaseOptions are the options of a release: DelayMs (profile delay) makes the item ready
// again that long after now; RefundAttempt (profile retry) gives back the attempt the lease
// counted, so that an item given back unfinished, at shutdown say, does not use up its
// attempts (RWQ-RETRY-020).
type ReleaseOptions struct {
	DelayMs       int64
	RefundAttempt bool
}

// ReleaseWith is Release with options.
func (q *Queue) ReleaseWith(ctx context.Context, l Lease, opts ReleaseOptions) (bool, error) {
	return owned(q.ReleaseManyWith(ctx, []Lease{l}, opts))(l.ID)
}

// ReleaseManyWith is ReleaseMany with options.
func (q *Queue) ReleaseManyWith(ctx context.Context, leases []Lease, opts ReleaseOptions) ([]Outcome, error) {
	head, err := opts.head()
	if err != nil {
		return nil, err
	}
	if err := checkLeases(leases); err != nil {
		return nil, err
	}
	return q.outcomes(ctx, "release", head, 2, leasePairs(leases))
}

// head validates the options and returns the release script's first arguments.
func (o ReleaseOptions) head() ([]any, error) {
	if err := checkDuration("delay_ms", o.DelayMs, 0); err != nil {
		return nil, err
	}
	if o.RefundAttempt {
		return []any{"refund", o.DelayMs}, nil
	}
	return []any{o.DelayMs}, nil
}

// outcomes runs complete or release over args (step arguments per item, after head) in calls
// of 1000 items.
func (q *Queue) outcomes(ctx context.Context, script string, head []any, step int, args []any) ([]Outcome, error) {
	out := make([]Outcome, 0, len(args)/step)
	err := chunks(args, MaxBatch*step, func(part []any) error {
		codes, err := q.ints(ctx, script, q.both(), len(part)/step, append(append([]any{}, head...), part...)...)
		for _, c := range codes {
			out = append(out, Outcome(c))
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// owned turns the single outcome of an owner-checked call into (done, error).
func owned(outcomes []Outcome, err error) func(id string) (bool, error) {
	return func(id string) (bool, error) {
		if err != nil {
			return false, err
		}
		if len(outcomes) != 1 {
			return false, redisFailure("expected one outcome", nil)
		}
		if outcomes[0] == NotHolder {
			return false, leaseLost(id)
		}
		return outcomes[0] == Done, nil
	}
}

// Counts reads the ready, in-flight, delayed and dead counts at one instant.
func (q *Queue) Counts(ctx context.Context) (Counts, error) {
	n, err := q.ints(ctx, "counts", q.both(), 4)
	if err != nil {
		return Counts{}, err
	}
	return Counts{n[0], n[1], n[2], n[3]}, nil
}
