package rwq

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Failover on a local Redis Cluster of 3 masters with a replica each: a master is SIGKILLed, its
// replica promoted, and a long-lived client must reach the new master soon after.
//
// The queue's commands go to the slot's node client directly (RWQ-FAIL-004), past the cluster
// client's own command path; go-redis reloads a slot map lazily, when one older than 10 s is used
// (clusterStateHolder.Get), so without a reload on a failed node call the client keeps calling
// the dead node until then.

const (
	failoverNodeTimeoutMs = 2000
	failoverRetryEvery    = 200 * time.Millisecond
	failoverRetryFor      = 20 * time.Second
	// failoverReachWithin bounds the time from the promotion being visible to the first success:
	// a reload after the first refused call takes well under a second; go-redis's own reload of
	// a map older than 10 s would take several seconds here.
	failoverReachWithin = 3 * time.Second
)

type failoverNode struct {
	port   int
	addr   string
	id     string
	cmd    *exec.Cmd
	client *redis.Client
	dead   bool
}

// failoverCluster is a local Redis Cluster whose masters[i] has replicas[i].
type failoverCluster struct {
	t        *testing.T
	dir      string
	masters  []*failoverNode
	replicas []*failoverNode
}

// busSafePort is a free loopback port whose cluster bus port (+10000) is a valid port and free too.
func busSafePort() (int, error) {
	for i := 0; i < 200; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		if port+10000 > 65535 {
			l.Close()
			continue
		}
		bus, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port+10000))
		l.Close()
		if err != nil {
			continue
		}
		bus.Close()
		return port, nil
	}
	return 0, errors.New("no free port with a free cluster bus port")
}

// startFailoverCluster starts masters masters with one replica each; every server is stopped in
// the test's cleanup, whatever happens.
func startFailoverCluster(t *testing.T, masters int) *failoverCluster {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no failover clusters")
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal("redis-server is not on PATH")
	}
	c := &failoverCluster{t: t, dir: t.TempDir()}
	t.Cleanup(c.stop)
	for i := 0; i < 2*masters; i++ {
		n, err := c.startNode(bin)
		if err != nil {
			t.Fatal(err)
		}
		if i < masters {
			c.masters = append(c.masters, n)
		} else {
			c.replicas = append(c.replicas, n)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	all := c.all()
	for _, n := range all {
		n.id, err = n.client.Do(ctx, "CLUSTER", "MYID").Text()
		if err != nil {
			t.Fatal("CLUSTER MYID:", err)
		}
	}
	for _, n := range all[1:] {
		if err := all[0].client.Do(ctx, "CLUSTER", "MEET", "127.0.0.1", n.port).Err(); err != nil {
			t.Fatal("CLUSTER MEET:", err)
		}
	}
	for i, m := range c.masters {
		low, high := i*16384/masters, (i+1)*16384/masters-1
		if err := m.client.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", low, high).Err(); err != nil {
			t.Fatal("CLUSTER ADDSLOTSRANGE:", err)
		}
	}
	for i, r := range c.replicas {
		master := c.masters[i]
		// REPLICATE needs the master in the new node's table, which the gossip fills.
		c.poll(ctx, "replica of "+master.addr, func() bool {
			return r.client.Do(ctx, "CLUSTER", "REPLICATE", master.id).Err() == nil
		})
	}
	// Settled: every node serves the whole slot range, each range with its master and one replica,
	// and every replica's link is up.
	c.poll(ctx, "the cluster to settle", func() bool {
		for _, n := range all {
			info, err := n.client.ClusterInfo(ctx).Result()
			if err != nil || !strings.Contains(info, "cluster_state:ok") {
				return false
			}
			slots, err := n.client.ClusterSlots(ctx).Result()
			if err != nil || len(slots) != masters {
				return false
			}
			for _, s := range slots {
				if len(s.Nodes) != 2 {
					return false
				}
			}
		}
		for _, r := range c.replicas {
			info, err := r.client.Info(ctx, "replication").Result()
			if err != nil || infoField(info, "master_link_status") != "up" {
				return false
			}
		}
		return true
	})
	return c
}

func (c *failoverCluster) startNode(bin string) (*failoverNode, error) {
	port, err := busSafePort()
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("node-%d", port)
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", c.dir, "--logfile", filepath.Join(c.dir, name+".log"),
		"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(c.dir, name+".conf"),
		"--cluster-node-timeout", fmt.Sprint(failoverNodeTimeoutMs),
		"--repl-diskless-sync-delay", "0", "--repl-ping-replica-period", "1")
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	n := &failoverNode{port: port, addr: fmt.Sprintf("127.0.0.1:%d", port), cmd: cmd}
	n.client = redis.NewClient(&redis.Options{Addr: n.addr, MaxRetries: -1})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if n.client.Ping(context.Background()).Err() == nil {
			return n, nil
		}
		if time.Now().After(deadline) {
			n.client.Close()
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			log, _ := os.ReadFile(filepath.Join(c.dir, name+".log"))
			return nil, fmt.Errorf("redis-server did not answer on %s; log:\n%s", n.addr, log)
		}
	}
}

func (c *failoverCluster) all() []*failoverNode {
	return append(append([]*failoverNode{}, c.masters...), c.replicas...)
}

// poll calls ok every 50 ms until it holds, failing the test when ctx ends first.
func (c *failoverCluster) poll(ctx context.Context, what string, ok func() bool) {
	c.t.Helper()
	for !ok() {
		select {
		case <-ctx.Done():
			c.t.Fatalf("timed out waiting for %s", what)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (c *failoverCluster) stop() {
	for _, n := range c.all() {
		if n == nil {
			continue
		}
		n.client.Close()
		if !n.dead {
			_ = n.cmd.Process.Kill()
			_ = n.cmd.Wait()
		}
	}
}

// client is a long-lived cluster client as the package asks for (MaxRetries: -1).
func (c *failoverCluster) client() *redis.ClusterClient {
	addrs := []string{}
	for _, n := range c.all() {
		addrs = append(addrs, n.addr)
	}
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, MaxRetries: -1, DialTimeout: time.Second})
	c.t.Cleanup(func() { rdb.Close() })
	return rdb
}

// masterOf is the index of the master serving key's slot.
func (c *failoverCluster) masterOf(key string) int {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	slot, err := c.masters[0].client.ClusterKeySlot(ctx, key).Result()
	if err != nil {
		c.t.Fatal("CLUSTER KEYSLOT:", err)
	}
	n := len(c.masters)
	return int(slot) * n / 16384
}

// waitReplicated waits until masters[i]'s replica has every write the master has.
func (c *failoverCluster) waitReplicated(i int) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c.poll(ctx, "the replica to catch up", func() bool {
		m, err := c.masters[i].client.Info(ctx, "replication").Result()
		if err != nil {
			return false
		}
		r, err := c.replicas[i].client.Info(ctx, "replication").Result()
		return err == nil && infoField(r, "slave_repl_offset") == infoField(m, "master_repl_offset")
	})
}

// kill SIGKILLs masters[i].
func (c *failoverCluster) kill(i int) {
	n := c.masters[i]
	_ = n.cmd.Process.Kill()
	_ = n.cmd.Wait()
	n.dead = true
}

// waitPromoted waits until another node's CLUSTER SLOTS gives masters[i]'s slots to its replica,
// and returns when it saw that.
func (c *failoverCluster) waitPromoted(i int) time.Time {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	witness := c.masters[(i+1)%len(c.masters)].client
	low := i * 16384 / len(c.masters)
	c.poll(ctx, "the replica's promotion", func() bool {
		slots, err := witness.ClusterSlots(ctx).Result()
		if err != nil {
			return false
		}
		for _, s := range slots {
			if int(s.Start) <= low && low <= int(s.End) && len(s.Nodes) > 0 {
				return s.Nodes[0].Addr == c.replicas[i].addr
			}
		}
		return false
	})
	return time.Now()
}

// retryUntil calls op every 200 ms, each call bounded, until it succeeds or 20 s have passed; it
// logs how long after promoted it succeeded, and fails the test when it never did or took longer
// than failoverReachWithin.
func retryUntil(t *testing.T, what string, promoted time.Time, op func(ctx context.Context) error) {
	t.Helper()
	var last error
	tries := 0
	for deadline := time.Now().Add(failoverRetryFor); time.Now().Before(deadline); time.Sleep(failoverRetryEvery) {
		tries++
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		last = op(ctx)
		cancel()
		if last == nil {
			took := time.Since(promoted)
			t.Logf("%s: succeeded %v after the promotion was visible (try %d)", what, took.Round(time.Millisecond), tries)
			if took > failoverReachWithin {
				t.Errorf("%s reached the promoted master %v after the promotion, more than %v: the client kept calling the dead master",
					what, took.Round(time.Millisecond), failoverReachWithin)
			}
			return
		}
	}
	t.Fatalf("%s never succeeded within %v of the promotion (%d tries): %v", what, failoverRetryFor, tries, last)
}

// failoverTag is a hash tag "{base-n}" whose slot the chosen master serves (ok decides).
func failoverTag(t *testing.T, base string, ok func(tag string) bool) string {
	t.Helper()
	for n := 0; n < 10000; n++ {
		if tag := fmt.Sprintf("%s-%d", base, n); ok(tag) {
			return tag
		}
	}
	t.Fatal("no hash tag found")
	return ""
}

func TestFailoverQueueReachesPromotedMaster(t *testing.T) {
	t.Parallel()
	for _, ack := range []bool{false, true} {
		ack := ack
		t.Run(fmt.Sprintf("ack=%v", ack), func(t *testing.T) {
			t.Parallel()
			c := startFailoverCluster(t, 3)
			victim := 0
			prefix := "{" + failoverTag(t, "fq", func(tag string) bool { return c.masterOf("{"+tag+"}") == victim }) + "}"
			rdb := c.client()
			var opts *Options
			if ack {
				opts = &Options{Ack: &Ack{Replicas: 1, TimeoutMs: 500}, Warn: func(string) {}}
			}
			q := must[*Queue](t)(New(rdb, prefix, opts))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var acked []string
			for i := 0; i < 200; i++ {
				id := fmt.Sprint("before-", i)
				if !must[bool](t)(q.Add(ctx, id, []byte("x"))) {
					t.Fatalf("add %s: false", id)
				}
				acked = append(acked, id)
			}
			if !ack {
				c.waitReplicated(victim)
				c.kill(victim)
			} else {
				// Adds race the kill: every add that returned without an error was acknowledged
				// by a replica, so it must survive the failover.
				done := make(chan struct{})
				go func() {
					defer close(done)
					for i := 0; ; i++ {
						id := fmt.Sprint("during-", i)
						actx, acancel := context.WithTimeout(context.Background(), 2*time.Second)
						_, err := q.Add(actx, id, []byte("x"))
						acancel()
						if err != nil {
							return
						}
						acked = append(acked, id)
					}
				}()
				time.Sleep(300 * time.Millisecond)
				c.kill(victim)
				<-done
			}
			promoted := c.waitPromoted(victim)
			retryUntil(t, "Counts", promoted, func(ctx context.Context) error {
				counts, err := q.Counts(ctx)
				if err != nil {
					return err
				}
				if counts.Queued < int64(len(acked)) {
					t.Fatalf("after the failover %d items are queued, %d adds were acknowledged", counts.Queued, len(acked))
				}
				return nil
			})
			keys := make([]string, len(acked))
			for i, id := range acked {
				keys[i] = prefix + ":item:" + id
			}
			ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel2()
			if n := must[int64](t)(rdb.Exists(ctx2, keys...).Result()); n != int64(len(acked)) {
				t.Fatalf("%d of %d acknowledged adds survived the failover", n, len(acked))
			}
			t.Logf("%d acknowledged adds survived the failover", len(acked))
			l := must[*Lease](t)(q.Lease(ctx2, 10_000))
			if l == nil {
				t.Fatal("no lease after the failover")
			}
			// The promoted master has no replica: an acknowledged add is done but not replicated.
			if _, err := q.Add(ctx2, "after", []byte("x")); err != nil && !(ack && errors.Is(err, ErrNotReplicated)) {
				t.Fatalf("add after the failover: %v", err)
			}
			// Without Ack every add was replicated before the kill; with it, an add that failed
			// may have taken effect too.
			n := must[Counts](t)(q.Counts(ctx2))
			if want := int64(len(acked)) + 1; n.Processing != 1 || n.Queued+n.Processing < want || !ack && n.Queued+n.Processing != want {
				t.Fatalf("counts after the failover: %+v, want %d items, 1 in flight", n, want)
			}
		})
	}
}

func TestFailoverShardedReachesPromotedMaster(t *testing.T) {
	t.Parallel()
	for _, ack := range []bool{false, true} {
		ack := ack
		t.Run(fmt.Sprintf("ack=%v", ack), func(t *testing.T) {
			t.Parallel()
			c := startFailoverCluster(t, 3)
			victim := 1
			const shards = 4
			// The bell and at least one shard on the victim.
			prefix := failoverTag(t, "fs", func(p string) bool {
				if c.masterOf("{"+p+"#bell}") != victim {
					return false
				}
				for i := 0; i < shards; i++ {
					if c.masterOf(fmt.Sprintf("{%s#%d}", p, i)) == victim {
						return true
					}
				}
				return false
			})
			rdb := c.client()
			var opts *Options
			if ack {
				opts = &Options{Ack: &Ack{Replicas: 1, TimeoutMs: 500}}
			}
			s := must[*ShardedQueue](t)(NewSharded(rdb, prefix, shards, opts))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			items := make([]Item, 100)
			for i := range items {
				items[i] = Item{ID: fmt.Sprint("item-", i), Data: []byte("x")}
			}
			for _, added := range must[[]bool](t)(s.AddMany(ctx, items)) {
				if !added {
					t.Fatal("an add returned false")
				}
			}
			if !ack {
				c.waitReplicated(victim)
			}
			c.kill(victim)
			promoted := c.waitPromoted(victim)
			retryUntil(t, "sharded Counts", promoted, func(ctx context.Context) error {
				counts, err := s.Counts(ctx)
				if err != nil {
					return err
				}
				if counts.Queued != int64(len(items)) {
					t.Fatalf("after the failover %d items are queued, want %d", counts.Queued, len(items))
				}
				return nil
			})
			ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel2()
			if leases := must[[]Lease](t)(s.LeaseMany(ctx2, 1000, 10_000)); len(leases) != len(items) {
				t.Fatalf("leased %d of %d items after the failover", len(leases), len(items))
			}
		})
	}
}

// A blocking lease on an empty sharded queue waits on the bell (BLPOP), here on the killed master
// while every shard is elsewhere.
func TestFailoverShardedBellReachesPromotedMaster(t *testing.T) {
	t.Parallel()
	c := startFailoverCluster(t, 3)
	victim := 2
	const shards = 2
	prefix := failoverTag(t, "fb", func(p string) bool {
		if c.masterOf("{"+p+"#bell}") != victim {
			return false
		}
		for i := 0; i < shards; i++ {
			if c.masterOf(fmt.Sprintf("{%s#%d}", p, i)) == victim {
				return false
			}
		}
		return true
	})
	rdb := c.client()
	s := must[*ShardedQueue](t)(NewSharded(rdb, prefix, shards, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if l := must[*Lease](t)(s.LeaseBlocking(ctx, 10_000, 200)); l != nil {
		t.Fatalf("lease on an empty queue: %v", l)
	}
	c.kill(victim)
	promoted := c.waitPromoted(victim)
	retryUntil(t, "sharded blocking lease", promoted, func(ctx context.Context) error {
		l, err := s.LeaseBlocking(ctx, 10_000, 200)
		if l != nil {
			t.Fatalf("lease on an empty queue: %v", l)
		}
		return err
	})
}

// Only a failure without a reply reloads the slot map: a reply of the server, an RWQ/1 error or
// the caller's context ending does not.
func TestNodeFailedReloadsOnlyOnNetworkErrors(t *testing.T) {
	var loads atomic.Int64
	rdb := redis.NewClusterClient(&redis.ClusterOptions{MaxRetries: -1,
		ClusterSlots: func(context.Context) ([]redis.ClusterSlot, error) {
			loads.Add(1)
			return []redis.ClusterSlot{{Start: 0, End: 16383, Nodes: []redis.ClusterNode{{Addr: clusterAddr}}}}, nil
		}})
	defer rdb.Close()
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	refusedErr := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	for _, c := range []struct {
		ctx context.Context
		err error
	}{
		{ctx, nil},
		{ctx, redis.Nil},
		{ctx, replyError("MOVED 3999 127.0.0.1:6381")},
		{ctx, replyError("CLUSTERDOWN The cluster is down")},
		{ctx, &Error{Code: CodeNotReplicated, Message: "0 of 1"}},
		{ctx, context.Canceled},
		{ctx, fmt.Errorf("wrapped: %w", context.DeadlineExceeded)},
		{cancelled, refusedErr},
	} {
		if got := nodeFailed(c.ctx, rdb, c.err); got != c.err {
			t.Fatalf("nodeFailed changed %v into %v", c.err, got)
		}
		if got := nodeFailed(c.ctx, nil, c.err); got != c.err {
			t.Fatalf("nodeFailed without a cluster changed %v into %v", c.err, got)
		}
	}
	time.Sleep(300 * time.Millisecond)
	if n := loads.Load(); n != 0 {
		t.Fatalf("%d reloads after replies and cancellations", n)
	}
	for _, err := range []error{refusedErr, io.EOF} {
		// go-redis takes no new reload for 200 ms after one: call until one is taken.
		before := loads.Load()
		for deadline := time.Now().Add(5 * time.Second); loads.Load() == before; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no reload after %v", err)
			}
			if got := nodeFailed(ctx, rdb, err); got != err {
				t.Fatalf("nodeFailed changed %v into %v", err, got)
			}
		}
	}
	time.Sleep(300 * time.Millisecond) // the last reload's goroutine ends before rdb closes
}
