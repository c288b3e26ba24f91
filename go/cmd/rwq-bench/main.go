// Command rwq-bench measures the Go client against raw go-redis on one Redis, in one run, and
// prints the figures as JSON on stdout: the Go section of `make bench` (bench/golang.py runs it).
//
// Each measurement mirrors bench/peers/raw.py and the Python rwq peer: enqueue one at a time
// (Add vs LPUSH), enqueue in batches (AddMany vs a pipeline of LPUSH), drain with one consumer
// (Lease once, then CompleteAndLease per item, vs LMOVE + LREM), drain with concurrent consumers
// (the same loops in goroutines sharing one client), and the blocked consumer's wake-up
// (LeaseBlocking vs BLMOVE). The two peers take turns on slices of the items, all their keys in
// Redis at once, so that load from other processes hits both alike; a throughput figure is the
// median of its turns' rates, the samples are whole-round rates.
//
//	rwq-bench -url redis://127.0.0.1:6379/0 -n 20000 -repeats 2
//
// It flushes the database it is given: point it at a Redis of its own.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	rwq "github.com/rwq-protocol/rwq/go"
)

const (
	leaseMs     = 60_000
	rawQueue    = "graw:queue"
	rawInFlight = "graw:processing"
	prefix      = "rwqg" // four characters, as the Python peers' prefixes
	rawPeer     = "go-redis"
	rwqPeer     = "rwq-go"
)

var ctx = context.Background()

// result is one peer's figure, as bench/core.py's PeerResult.
type result struct {
	Value   float64            `json:"value"`
	Samples []float64          `json:"samples"`
	N       int                `json:"n"`
	How     string             `json:"how"`
	Detail  map[string]float64 `json:"detail,omitempty"`
}

// measurement is one row: both peers' figures.
type measurement struct {
	ID      string            `json:"id"`
	Title   string            `json:"title"`
	Unit    string            `json:"unit"`
	Better  string            `json:"better"`
	Results map[string]result `json:"results"`
	Notes   []string          `json:"notes"`
}

// peer is one side of the comparison: the same operations, rwq's or raw go-redis's.
type peer struct {
	name      string
	how       map[string]string
	enqueue   func(ids []string, data []byte) error
	batch     func(ids []string, data []byte, size int) error
	fill      func(ids []string, data []byte) error
	drain     func(limit int) (int, error) // until limit items (0: until empty)
	wait      func() error                 // block until an item arrives, then settle it
	wakeAdd   func(id string, data []byte) error
	consumers int // blocked clients its wait makes in Redis
}

type bench struct {
	url     string
	n       int
	repeats int
	batch   int
	workers int
	wakes   int
	admin   *redis.Client
	data    []byte
}

func main() {
	b := &bench{}
	flag.StringVar(&b.url, "url", "redis://127.0.0.1:6379/0", "the Redis to measure on (its database is flushed)")
	flag.IntVar(&b.n, "n", 20_000, "items per throughput measurement")
	flag.IntVar(&b.repeats, "repeats", 2, "rounds per measurement")
	flag.IntVar(&b.batch, "batch", 100, "items per batched call")
	flag.IntVar(&b.workers, "workers", 4, "consumers of the concurrent drain (goroutines)")
	flag.IntVar(&b.wakes, "wake-samples", 300, "samples of the wake-up measurement")
	only := flag.String("only", "", "comma-separated measurement id prefixes (enqueue,drain,wake)")
	flag.Parse()
	if err := b.run(*only); err != nil {
		fmt.Fprintln(os.Stderr, "rwq-bench:", err)
		os.Exit(1)
	}
}

func (b *bench) run(only string) error {
	opts, err := redis.ParseURL(b.url)
	if err != nil {
		return err
	}
	b.admin = redis.NewClient(opts)
	defer b.admin.Close()
	b.data = []byte(strings.Repeat("0123456789abcdef", 7)[:100]) // bench/core.py's payload
	raw, rwqp, closeAll, err := b.peers()
	if err != nil {
		return err
	}
	defer closeAll()
	steps := []struct {
		id  string
		run func(peers []*peer) (measurement, error)
	}{
		{"enqueue_one", b.enqueueOne},
		{"enqueue_batch", b.enqueueBatch},
		{"drain_one", b.drainOne},
		{"drain_processes", b.drainConcurrent},
		{"wake_median", b.wake},
	}
	out := struct {
		Go           string        `json:"go"`
		GoRedis      string        `json:"go_redis"`
		Client       string        `json:"client"`
		GOMAXPROCS   int           `json:"gomaxprocs"`
		Peers        []string      `json:"peers"`
		Measurements []measurement `json:"measurements"`
	}{runtime.Version(), redis.Version(), rwq.Version, runtime.GOMAXPROCS(0), []string{rawPeer, rwqPeer}, nil}
	for _, step := range steps {
		if only != "" && !hasPrefix(step.id, strings.Split(only, ",")) {
			continue
		}
		started := time.Now()
		m, err := step.run([]*peer{raw, rwqp})
		if err != nil {
			return fmt.Errorf("%s: %w", step.id, err)
		}
		fmt.Fprintf(os.Stderr, "rwq-bench: %s took %.1f s\n", step.id, time.Since(started).Seconds())
		out.Measurements = append(out.Measurements, m)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	return enc.Encode(out)
}

func hasPrefix(id string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(id, p) {
			return true
		}
	}
	return false
}

// peers opens both peers, each on clients of its own.
func (b *bench) peers() (raw, client *peer, closeAll func(), err error) {
	rawOpts, err := redis.ParseURL(b.url)
	if err != nil {
		return nil, nil, nil, err
	}
	rwqOpts, err := rwq.ParseRedisURL(b.url) // MaxRetries -1, as rwq requires (RWQ-FAIL-004)
	if err != nil {
		return nil, nil, nil, err
	}
	r, waiterR := redis.NewClient(rawOpts), redis.NewClient(rawOpts)
	c, waiterC := redis.NewUniversalClient(rwqOpts), redis.NewUniversalClient(rwqOpts)
	closeAll = func() {
		for _, c := range []redis.UniversalClient{r, waiterR, c, waiterC} {
			c.Close()
		}
	}
	q, err := rwq.New(c, prefix, nil)
	if err != nil {
		closeAll()
		return nil, nil, nil, err
	}
	waiterQ, err := rwq.New(waiterC, prefix, nil)
	if err != nil {
		closeAll()
		return nil, nil, nil, err
	}
	if err := warmUp(r, waiterR, q, waiterQ); err != nil {
		closeAll()
		return nil, nil, nil, err
	}
	return newRawPeer(r, waiterR), newRWQPeer(q, waiterQ), closeAll, nil
}

// warmUp opens the connections and loads the scripts, so that no measurement pays for them.
func warmUp(r, waiterR *redis.Client, q, waiterQ *rwq.Queue) error {
	if err := r.Ping(ctx).Err(); err != nil {
		return err
	}
	if err := waiterR.Ping(ctx).Err(); err != nil {
		return err
	}
	if _, err := waiterQ.Counts(ctx); err != nil { // the one-time server check
		return err
	}
	if _, err := q.Add(ctx, "warm-up", []byte("x")); err != nil {
		return err
	}
	if _, err := q.AddMany(ctx, []rwq.Item{{ID: "warm-up-2", Data: []byte("x")}}); err != nil {
		return err
	}
	if _, _, err := q.CompleteAndLease(ctx, "warm-up", leaseMs); err != nil {
		return err
	}
	if _, err := q.Lease(ctx, leaseMs); err != nil {
		return err
	}
	_, err := q.Complete(ctx, "warm-up-2")
	return err
}

// newRawPeer is raw go-redis, as bench/peers/raw.py does it with redis-py.
func newRawPeer(r, waiter *redis.Client) *peer {
	return &peer{
		name: rawPeer,
		how: map[string]string{
			"enqueue_one":     "LPUSH graw:queue <payload>, one command per item",
			"enqueue_batch":   "pipeline (no MULTI) of one LPUSH per item, one round trip per batch",
			"drain_one":       "LMOVE queue processing RIGHT LEFT, then LREM processing -1 <payload>: 2 round trips",
			"drain_processes": "each goroutine: LMOVE + LREM until the queue is empty",
			"wake_median":     "BLMOVE queue processing RIGHT LEFT 0 in the consumer, LPUSH in the producer",
		},
		enqueue: func(ids []string, data []byte) error {
			for range ids {
				if err := r.LPush(ctx, rawQueue, data).Err(); err != nil {
					return err
				}
			}
			return nil
		},
		batch: func(ids []string, data []byte, size int) error {
			for start := 0; start < len(ids); start += size {
				pipe := r.Pipeline()
				for range ids[start:min(start+size, len(ids))] {
					pipe.LPush(ctx, rawQueue, data)
				}
				if _, err := pipe.Exec(ctx); err != nil {
					return err
				}
			}
			return nil
		},
		fill: func(ids []string, data []byte) error {
			// Distinct values, so that an LREM has to find its own entry (as raw.py).
			values := make([]any, 0, 1000)
			for start := 0; start < len(ids); start += 1000 {
				values = values[:0]
				for _, id := range ids[start:min(start+1000, len(ids))] {
					values = append(values, id+string(data[32:]))
				}
				if err := r.LPush(ctx, rawQueue, values...).Err(); err != nil {
					return err
				}
			}
			return nil
		},
		drain: func(limit int) (int, error) {
			done := 0
			for limit == 0 || done < limit {
				value, err := r.LMove(ctx, rawQueue, rawInFlight, "RIGHT", "LEFT").Result()
				if errors.Is(err, redis.Nil) {
					return done, nil
				} else if err != nil {
					return done, err
				}
				if err := r.LRem(ctx, rawInFlight, -1, value).Err(); err != nil {
					return done, err
				}
				done++
			}
			return done, nil
		},
		wait: func() error {
			value, err := waiter.BLMove(ctx, rawQueue, rawInFlight, "RIGHT", "LEFT", 0).Result()
			if err != nil {
				return err
			}
			return waiter.LRem(ctx, rawInFlight, -1, value).Err()
		},
		wakeAdd:   func(id string, data []byte) error { return r.LPush(ctx, rawQueue, data).Err() },
		consumers: 1,
	}
}

// newRWQPeer is the Go client, draining as its Worker does: a lease, then one CompleteAndLease per
// item (the Python rwq peer's loop).
func newRWQPeer(q, waiter *rwq.Queue) *peer {
	return &peer{
		name: rwqPeer,
		how: map[string]string{
			"enqueue_one":     "Queue.Add(id, payload), one call each",
			"enqueue_batch":   "Queue.AddMany of <batch> items per call",
			"drain_one":       "Queue.Lease once, then CompleteAndLease (complete + lease the next) per item",
			"drain_processes": "each goroutine: Lease, then CompleteAndLease until the queue is empty (one shared client)",
			"wake_median":     "Queue.LeaseBlocking (BLMOVE, then claim) in the consumer, Queue.Add in the producer",
		},
		enqueue: func(ids []string, data []byte) error {
			for _, id := range ids {
				if _, err := q.Add(ctx, id, data); err != nil {
					return err
				}
			}
			return nil
		},
		batch: func(ids []string, data []byte, size int) error {
			items := make([]rwq.Item, 0, size)
			for start := 0; start < len(ids); start += size {
				items = items[:0]
				for _, id := range ids[start:min(start+size, len(ids))] {
					items = append(items, rwq.Item{ID: id, Data: data})
				}
				if _, err := q.AddMany(ctx, items); err != nil {
					return err
				}
			}
			return nil
		},
		fill: func(ids []string, data []byte) error {
			items := make([]rwq.Item, 0, 1000)
			for start := 0; start < len(ids); start += 1000 {
				items = items[:0]
				for _, id := range ids[start:min(start+1000, len(ids))] {
					items = append(items, rwq.Item{ID: id, Data: data})
				}
				if _, err := q.AddMany(ctx, items); err != nil {
					return err
				}
			}
			return nil
		},
		drain: func(limit int) (int, error) {
			held, err := q.Lease(ctx, leaseMs)
			done := 0
			for err == nil && held != nil {
				done++
				if limit != 0 && done >= limit { // the turn's last item: complete, lease nothing
					_, err = q.Complete(ctx, held.ID)
					break
				}
				_, held, err = q.CompleteAndLease(ctx, held.ID, leaseMs)
			}
			return done, err
		},
		wait: func() error {
			l, err := waiter.LeaseBlocking(ctx, leaseMs, 0)
			if err == nil && l == nil {
				err = errors.New("LeaseBlocking returned no item")
			}
			if err != nil {
				return err
			}
			_, err = waiter.Complete(ctx, l.ID)
			return err
		},
		wakeAdd: func(id string, data []byte) error {
			_, err := q.Add(ctx, id, data)
			return err
		},
		consumers: 1,
	}
}

// ids are n fresh ids of 32 hex characters (bench/core.py's make_ids).
func ids(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%016x%016x", rand.Uint64(), rand.Uint64())
	}
	return out
}

func (b *bench) flush() error { return b.admin.FlushDB(ctx).Err() }

// throughput runs rounds in which the peers take turns of slice items; setup (untimed) runs
// once per round, turnSetup (untimed) before each turn, timed is the turn.
func (b *bench) throughput(m measurement, peers []*peer, slice int,
	setup func(p *peer, ids []string) error, turnSetup func(p *peer, ids []string) error,
	timed func(p *peer, ids []string) error) (measurement, error) {
	turns := map[string][]float64{}
	rounds := map[string][]float64{}
	for round := 0; round < b.repeats; round++ {
		if err := b.flush(); err != nil {
			return m, err
		}
		all := ids(b.n)
		for _, p := range peers {
			if setup != nil {
				if err := setup(p, all); err != nil {
					return m, fmt.Errorf("%s: %w", p.name, err)
				}
			}
		}
		seconds := map[string]float64{}
		for index, start := 0, 0; start < b.n; index, start = index+1, start+slice {
			turn := all[start:min(start+slice, b.n)]
			shift := (index + round) % len(peers)
			for _, p := range append(append([]*peer{}, peers[shift:]...), peers[:shift]...) {
				if turnSetup != nil {
					if err := turnSetup(p, turn); err != nil {
						return m, fmt.Errorf("%s: %w", p.name, err)
					}
				}
				runtime.GC()
				began := time.Now()
				if err := timed(p, turn); err != nil {
					return m, fmt.Errorf("%s: %w", p.name, err)
				}
				took := time.Since(began).Seconds()
				seconds[p.name] += took
				turns[p.name] = append(turns[p.name], float64(len(turn))/took)
			}
		}
		for name, s := range seconds {
			rounds[name] = append(rounds[name], float64(b.n)/s)
		}
	}
	m.Unit, m.Better, m.Results = "items/s", "higher", map[string]result{}
	for _, p := range peers {
		value := median(turns[p.name])
		m.Results[p.name] = result{value, rounds[p.name], b.n, p.how[m.ID],
			map[string]float64{"us_per_item": 1e6 / value, "turns": float64(len(turns[p.name]))}}
	}
	m.Notes = append(m.Notes, fmt.Sprintf("the peers take turns of %d items, all on one Redis, %d rounds; "+
		"the figure is the median of the turns' rates, samples are whole-round rates", slice, b.repeats))
	return m, nil
}

func (b *bench) enqueueOne(peers []*peer) (measurement, error) {
	m := measurement{ID: "enqueue_one", Title: "enqueue, 1 item per call"}
	return b.throughput(m, peers, 500, nil, nil, func(p *peer, ids []string) error { return p.enqueue(ids, b.data) })
}

func (b *bench) enqueueBatch(peers []*peer) (measurement, error) {
	m := measurement{ID: "enqueue_batch", Title: fmt.Sprintf("enqueue, %d items per call", b.batch)}
	return b.throughput(m, peers, 20*b.batch, nil, nil,
		func(p *peer, ids []string) error { return p.batch(ids, b.data, b.batch) })
}

func (b *bench) drainOne(peers []*peer) (measurement, error) {
	m := measurement{ID: "drain_one", Title: "drain, 1 consumer, lease + complete"}
	fill := func(p *peer, ids []string) error { return p.fill(ids, b.data) }
	return b.throughput(m, peers, 500, fill, nil, func(p *peer, ids []string) error {
		done, err := p.drain(len(ids))
		if err == nil && done != len(ids) {
			err = fmt.Errorf("drained %d items, expected %d", done, len(ids))
		}
		return err
	})
}

// drainConcurrent: each turn fills the peer's queue with the turn's items, then workers
// goroutines drain it until empty, from a common start to the last item completed.
func (b *bench) drainConcurrent(peers []*peer) (measurement, error) {
	m := measurement{ID: "drain_processes", Title: fmt.Sprintf("drain, %d concurrent consumers (goroutines)", b.workers)}
	fill := func(p *peer, ids []string) error { return p.fill(ids, b.data) }
	m, err := b.throughput(m, peers, max(b.n/8, 100), nil, fill, func(p *peer, ids []string) error {
		var wg sync.WaitGroup
		counts, errs := make([]int, b.workers), make([]error, b.workers)
		for w := 0; w < b.workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				counts[w], errs[w] = p.drain(0)
			}(w)
		}
		wg.Wait()
		total := 0
		for w, n := range counts {
			if errs[w] != nil {
				return errs[w]
			}
			total += n
		}
		if total != len(ids) {
			return fmt.Errorf("drained %d items, expected %d", total, len(ids))
		}
		return nil
	})
	m.Notes = append(m.Notes, "the turn's time runs from starting the goroutines to the last of them "+
		"finding the queue empty; the goroutines share one client (its connection pool)")
	return m, err
}

// wake: one consumer per peer blocked in its lease; for each sample the producer takes the
// peers in turn, waits until Redis reports both consumers blocked, sleeps 1-3 ms, stamps and
// adds one item; the consumer stamps when its lease returns.
func (b *bench) wake(peers []*peer) (measurement, error) {
	m := measurement{ID: "wake_median", Title: "blocked consumer wake-up, median", Unit: "ms", Better: "lower",
		Results: map[string]result{}}
	if err := b.flush(); err != nil {
		return m, err
	}
	arrived := map[string]chan time.Time{}
	failed := make(chan error, len(peers))
	for _, p := range peers {
		ch := make(chan time.Time, 1)
		arrived[p.name] = ch
		go func(p *peer) {
			for {
				err := p.wait()
				if err != nil {
					failed <- fmt.Errorf("%s: %w", p.name, err)
					return
				}
				ch <- time.Now()
			}
		}(p)
	}
	latencies := map[string][]float64{}
	blocked := 0
	for _, p := range peers {
		blocked += p.consumers
	}
	for i, id := range ids(b.wakes) {
		shift := i % len(peers)
		for _, p := range append(append([]*peer{}, peers[shift:]...), peers[:shift]...) {
			if err := b.waitBlocked(blocked); err != nil {
				return m, err
			}
			time.Sleep(time.Millisecond + time.Duration(rand.Int63n(int64(2*time.Millisecond))))
			sent := time.Now()
			if err := p.wakeAdd(id, b.data); err != nil {
				return m, fmt.Errorf("%s: %w", p.name, err)
			}
			select {
			case got := <-arrived[p.name]:
				latencies[p.name] = append(latencies[p.name], float64(got.Sub(sent).Microseconds())/1000)
			case err := <-failed:
				return m, err
			case <-time.After(30 * time.Second):
				return m, fmt.Errorf("%s: the consumer did not get the item", p.name)
			}
		}
	}
	// The consumers stay blocked until the process exits (b.run's clients close under them).
	for _, p := range peers {
		values := latencies[p.name]
		m.Results[p.name] = result{median(values), values, len(values), p.how[m.ID], map[string]float64{
			"p50_ms": median(values), "p90_ms": quantile(values, 0.90), "p99_ms": quantile(values, 0.99),
		}}
	}
	m.Notes = append(m.Notes, "one consumer goroutine per peer, each on a client of its own, blocked in its "+
		"lease; for each sample the producer waits until Redis reports every consumer blocked, sleeps "+
		"1-3 ms, stamps and adds one item; the consumer stamps when its lease returns")
	return m, nil
}

func (b *bench) waitBlocked(count int) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := b.admin.Info(ctx, "clients").Result()
		if err != nil {
			return err
		}
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, "blocked_clients:"); ok {
				if n, _ := strconv.Atoi(v); n >= count {
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return errors.New("a consumer never blocked")
		}
		time.Sleep(100 * time.Microsecond)
	}
}

func median(values []float64) float64 { return quantile(values, 0.5) }

// quantile is the q quantile (0..1), interpolated; median of an even count is the mean of the two.
func quantile(values []float64, q float64) float64 {
	if len(values) == 0 {
		return 0
	}
	s := append([]float64{}, values...)
	sort.Float64s(s)
	pos := q * float64(len(s)-1)
	lo := int(pos)
	if lo+1 >= len(s) {
		return s[lo]
	}
	return s[lo] + (s[lo+1]-s[lo])*(pos-float64(lo))
}
