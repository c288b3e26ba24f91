package rwq

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A queue through Redis Sentinel: a master and one sentinel the test starts, reached with
// go-redis's failover client, made directly and through ParseRedisURL + NewUniversalClient.
func TestSentinelClients(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal("redis-server is required")
	}
	dir := t.TempDir()
	stopMaster, master, err := startRedis(bin, dir, "sentinel-master")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopMaster)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	host, masterPort, _ := strings.Cut(master, ":")
	conf := filepath.Join(dir, "sentinel.conf")
	text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nlogfile %s\nsentinel monitor rwqmaster %s %s 1\n",
		port, dir, filepath.Join(dir, "sentinel.log"), host, masterPort)
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, conf, "--sentinel")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sentinel := fmt.Sprintf("127.0.0.1:%d", port)
	probe := redis.NewSentinelClient(&redis.Options{Addr: sentinel})
	defer probe.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if addr, err := probe.GetMasterAddrByName(ctx, "rwqmaster").Result(); err == nil && len(addr) == 2 {
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "sentinel.log"))
			t.Fatalf("the sentinel did not answer within 10 s; log:\n%s", log)
		}
	}

	direct := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "rwqmaster", SentinelAddrs: []string{sentinel}, MaxRetries: -1})
	t.Cleanup(func() { direct.Close() })
	opts, err := ParseRedisURL("redis://" + sentinel)
	if err != nil {
		t.Fatal(err)
	}
	opts.MasterName = "rwqmaster"
	universal := redis.NewUniversalClient(opts)
	t.Cleanup(func() { universal.Close() })

	for name, rdb := range map[string]redis.UniversalClient{"failover": direct, "universal": universal} {
		q := must[*Queue](t)(New(rdb, "sentinel-"+name, nil))
		addItems(t, q, "a", "b", "c")
		l := must[*Lease](t)(q.LeaseBlocking(ctx, 10_000, 1_000))
		if l == nil || l.ID != "a" || !must[bool](t)(q.CompleteOwned(ctx, *l)) {
			t.Fatalf("%s: lease %v", name, l)
		}
		// The items are on the master the sentinel names.
		raw := redis.NewClient(&redis.Options{Addr: master})
		n, err := raw.LLen(ctx, "sentinel-"+name+":queue").Result()
		raw.Close()
		if err != nil || n != 2 {
			t.Fatalf("%s: %d items queued on the master (%v), want 2", name, n, err)
		}
		log, _ := quietLog()
		w := must[*Worker](t)(NewWorker(q, func(context.Context, *Job) error { return nil }, &WorkerOptions{Burst: true, Logger: log}))
		burst(t, w)
		if s := w.Stats(); s.Completed != 2 {
			t.Fatalf("%s: worker stats %+v", name, s)
		}
	}
}
