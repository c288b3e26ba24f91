package rwq

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The tests run against real redis-server processes they start on free loopback ports: one
// standalone server, and one single-node cluster for the cluster tests.
var (
	standaloneAddr string
	clusterAddr    string
)

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: the rwq Go tests need redis-server (6.2 or newer) on PATH; "+
			"install it (Debian: apt-get install redis-server, or `make system-deps`)")
		return 1
	}
	dir, err := os.MkdirTemp("", "rwq-go-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	stopA, addr, err := startRedis(bin, dir, "standalone")
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: starting redis-server:", err)
		return 1
	}
	defer stopA()
	stopB, caddr, err := startRedis(bin, dir, "cluster", "--cluster-enabled", "yes",
		"--cluster-config-file", filepath.Join(dir, "nodes.conf"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: starting redis-server in cluster mode:", err)
		return 1
	}
	defer stopB()
	if err := makeSingleNodeCluster(caddr); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: setting up the one-node cluster:", err)
		return 1
	}
	standaloneAddr, clusterAddr = addr, caddr
	os.Setenv("REDIS_ADDR", addr) // the examples' server (example_test.go)
	return m.Run()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func startRedis(bin, dir, name string, extra ...string) (func(), string, error) {
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	args := append([]string{"--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", dir, "--logfile", filepath.Join(dir, name+".log")}, extra...)
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c.Ping(context.Background()).Err() == nil {
			return stop, addr, nil
		}
		if time.Now().After(deadline) {
			stop()
			log, _ := os.ReadFile(filepath.Join(dir, name+".log"))
			return nil, "", fmt.Errorf("redis-server did not answer on %s; log:\n%s", addr, log)
		}
	}
}

func makeSingleNodeCluster(addr string) error {
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	if err := c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 16383).Err(); err != nil {
		return err
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		info, err := c.ClusterInfo(ctx).Result()
		if err == nil && strings.Contains(info, "cluster_state:ok") {
			return nil
		}
	}
	return fmt.Errorf("cluster on %s never reached cluster_state:ok", addr)
}

var queueSeq int

// newQueue returns a queue with a fresh prefix on the standalone server, and the raw client.
func newQueue(t *testing.T, opts *Options) (*Queue, *redis.Client) {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: standaloneAddr, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	queueSeq++
	q, err := New(rdb, fmt.Sprintf("test%d-%s", queueSeq, t.Name()), opts)
	if err != nil {
		t.Fatal(err)
	}
	return q, rdb
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return v
	}
}
