package rwq

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Profile declared-keys (SPEC §20, RWQ-DECL-001..005).

func TestParseDeclared(t *testing.T) {
	got := parseDeclared("-- KEYS[1]  <P>:queue\n-- DECLARED <P>:in_flight <P>:dead:data   (profile declared-keys, SPEC §20: lease.lua's)\n-- ARGV[1] x\n")
	if !reflect.DeepEqual(got, []string{"in_flight", "dead:data"}) {
		t.Fatalf("parseDeclared: %q", got)
	}
	if declaredNames["ring"] != nil {
		t.Fatalf("ring declares all its keys in the core shape, got %q", declaredNames["ring"])
	}
	if !reflect.DeepEqual(declaredNames["shards"], []string{"shards"}) {
		t.Fatalf("shards: %q", declaredNames["shards"])
	}
	for name := range scripts {
		if name != "ring" && len(declaredNames[name]) == 0 {
			t.Errorf("script %s has no DECLARED line", name)
		}
	}
}

func TestDeclaredKeysShape(t *testing.T) {
	keys := declaredKeys("complete", []string{"{p}:queue", "{p}:processing"}, []any{"owner", "a", "t1", "b", "t2", "a", "t3"}, []string{"b", "c"})
	want := []string{"{p}:queue", "{p}:processing", "{p}:in_flight", "{p}:attempts", "{p}:delayed", "{p}:delayed:data",
		"{p}:stats", "{p}:stats:series",
		"{p}:item:a", "{p}:lease:a", "{p}:leased_by_session:a",
		"{p}:item:b", "{p}:lease:b", "{p}:leased_by_session:b",
		"{p}:item:c", "{p}:lease:c", "{p}:leased_by_session:c"}
	if !reflect.DeepEqual(keys, want) {
		t.Fatalf("declared keys\n got %q\nwant %q", keys, want)
	}
	for _, c := range []struct {
		script string
		args   []any
		ids    []string
	}{
		{"add", []any{int64(0), "a", []byte("x"), "b", []byte("y")}, []string{"a", "b"}},
		{"release", []any{"0", "a", "t"}, []string{"a"}},
		{"renew", []any{int64(1000), "0", "a", "t", "b", "t"}, []string{"a", "b"}},
		{"claim", []any{"a", int64(1000), "t", "0", "0"}, []string{"a"}},
		{"fail", []any{"a", "t", "why", int64(7)}, []string{"a"}},
		{"complete", []any{"any", "a", "b"}, []string{"a", "b"}},
		{"complete_and_lease", []any{int64(1000), "t", 1, "0", "0", "any", "a", "b"}, []string{"a", "b"}},
		{"complete_and_lease", []any{int64(1000), "t", 1, "0", "0", "owner", "a", "t", "b", "t"}, []string{"a", "b"}},
		{"dead", []any{"requeue", "a"}, []string{"a"}},
		{"dead", []any{"purge", "a"}, nil},
		{"deep_clean", []any{"requeue", "a", "b"}, []string{"a", "b"}},
		{"deep_clean", []any{"index", "queue", int64(0), 10}, nil},
		{"lease", []any{int64(1000), "t", 1, "0", "0"}, nil},
	} {
		if got := namedIDs(c.script, c.args); !reflect.DeepEqual(got, c.ids) {
			t.Errorf("namedIDs(%s, %v) = %q, want %q", c.script, c.args, got, c.ids)
		}
	}
	if k := windowKind("deep_clean", []any{"index", "processing", int64(0), 10}); k != "deep_clean:processing" {
		t.Errorf("window kind %q", k)
	}
	if k := windowKind("complete_and_lease", nil); k != "lease" {
		t.Errorf("window kind %q", k)
	}
}

// scenario runs every operation on q and logs the results a caller sees (tokens left out).
func scenario(t *testing.T, q *Queue) []string {
	t.Helper()
	var out []string
	log := func(what string, v ...any) { out = append(out, what+": "+fmt.Sprint(v...)) }
	policy := RetryPolicy{MaxAttempts: 2, Backoff: BackoffFixed, DeadMaxCount: 100, DeadMaxAgeMs: 3_600_000}
	if err := q.SetRetryPolicy(ctx, &policy); err != nil {
		t.Fatal(err)
	}
	log("policy", must[*RetryPolicy](t)(q.RetryPolicy(ctx)))
	items := make([]Item, 12)
	for i := range items {
		items[i] = Item{fmt.Sprintf("id-%02d", i), []byte(fmt.Sprint("payload ", i))}
	}
	log("add_many", must[[]bool](t)(q.AddMany(ctx, append(items, items[0]))))
	log("add", must[bool](t)(q.Add(ctx, "id-00", nil)))
	log("add_delayed", must[bool](t)(q.AddDelayed(ctx, "later", []byte("l"), 60_000)))
	one := must[*Lease](t)(q.Lease(ctx, 30_000))
	log("lease", one)
	many := must[[]Lease](t)(q.LeaseMany(ctx, 4, 30_000))
	log("lease_many", many)
	log("renew", must[bool](t)(q.Renew(ctx, *one, 60_000)))
	log("renew_many", must[[]bool](t)(q.RenewMany(ctx, many, 60_000)))
	log("complete_owned", must[bool](t)(q.CompleteOwned(ctx, *one)))
	log("complete_many", must[[]Outcome](t)(q.CompleteMany(ctx, []string{many[0].ID, "nope", many[0].ID})))
	outcomes, next, err := q.CompleteOwnedAndLeaseMany(ctx, many[1:2], 3, 30_000)
	if err != nil {
		t.Fatal(err)
	}
	log("complete_owned_and_lease_many", outcomes, next)
	o, l, err := q.CompleteAndLease(ctx, many[2].ID, 30_000)
	if err != nil {
		t.Fatal(err)
	}
	log("complete_and_lease", o, l)
	log("release", must[bool](t)(q.Release(ctx, many[3])))
	log("release_many", must[[]Outcome](t)(q.ReleaseMany(ctx, next)))
	log("release_delayed", must[bool](t)(q.ReleaseDelayed(ctx, *l, 60_000)))
	log("counts", must[Counts](t)(q.Counts(ctx)))

	// Retry: a failed item is retried; with max_attempts 1, the next one is dead-lettered.
	f := must[*Lease](t)(q.Lease(ctx, 30_000))
	log("fail", f, must[FailResult](t)(q.Fail(ctx, *f, "boom")))
	policy.MaxAttempts = 1
	if err := q.SetRetryPolicy(ctx, &policy); err != nil {
		t.Fatal(err)
	}
	f = must[*Lease](t)(q.Lease(ctx, 30_000))
	log("fail to dead", f, must[FailResult](t)(q.Fail(ctx, *f, "boom again")))
	dead := must[[]DeadItem](t)(q.DeadItems(ctx, 0, 10))
	for i := range dead {
		dead[i].DeadAtMs = 0
	}
	log("dead", dead)
	log("requeue_dead", must[[]bool](t)(q.RequeueDead(ctx, []string{f.ID, "nope"})))
	policy.MaxAttempts = 10
	if err := q.SetRetryPolicy(ctx, &policy); err != nil {
		t.Fatal(err)
	}
	log("counts", must[Counts](t)(q.Counts(ctx)))

	// Light clean: an expired lease is requeued.
	short := must[[]Lease](t)(q.LeaseMany(ctx, 3, 20))
	log("short leases", short)
	time.Sleep(60 * time.Millisecond)
	log("light_clean", must[CleanReport](t)(q.LightClean(ctx, 2)))
	log("light_clean paced", must[CleanReport](t)(q.LightCleanPaced(ctx, 5, 60_000)))

	// Deep clean: an orphan item key and a ghost id.
	rdb := q.rdb
	must[string](t)(rdb.Set(ctx, q.prefix+":item:orphan", "o", 0).Result())
	must[int64](t)(rdb.LPush(ctx, q.queue, "ghost").Result())
	log("deep_clean", must[CleanReport](t)(q.DeepClean(ctx, 3)))
	log("counts", must[Counts](t)(q.Counts(ctx)))

	// Everything ready leased in one LeaseMany, then completed.
	all := must[[]Lease](t)(q.LeaseMany(ctx, 1000, 30_000))
	log("lease_many all", all)
	ids := make([]string, len(all))
	for i, l := range all {
		ids[i] = l.ID
	}
	log("complete_many all", must[[]Outcome](t)(q.CompleteMany(ctx, ids)))

	// A blocking lease: first times out, then gets an item added while it waits.
	log("lease_blocking timeout", must[*Lease](t)(q.LeaseBlocking(ctx, 1000, 200)))
	go func() {
		time.Sleep(150 * time.Millisecond)
		_, _ = q.Add(ctx, "late", []byte("x"))
	}()
	b := must[*Lease](t)(q.LeaseBlocking(ctx, 5000, 3000))
	log("lease_blocking", b)
	log("complete_owned", must[bool](t)(q.CompleteOwned(ctx, *b)))
	log("counts", must[Counts](t)(q.Counts(ctx)))
	return out
}

// RWQ-DECL-001..004: a declared queue does every operation with the results of a plain one.
func TestDeclaredKeysSameResults(t *testing.T) {
	plain, _ := newQueue(t, nil)
	declared, _ := newQueue(t, &Options{DeclaredKeys: true})
	want := scenario(t, plain)
	got := scenario(t, declared)
	if !reflect.DeepEqual(got, want) {
		for i := 0; i < min(len(got), len(want)); i++ {
			if got[i] != want[i] {
				t.Errorf("step %d:\n declared %s\n    plain %s", i, got[i], want[i])
			}
		}
		t.Fatalf("declared run differs (%d vs %d steps)", len(got), len(want))
	}
}

// RWQ-DECL-001: every command a script runs in a declared call touches only that call's KEYS;
// a plain queue's calls do not (so the check can fail).
func TestDeclaredKeysCoverEveryCommand(t *testing.T) {
	for _, declared := range []bool{true, false} {
		t.Run(fmt.Sprint("declared=", declared), func(t *testing.T) {
			q, rdb := newQueue(t, &Options{DeclaredKeys: declared})
			trace := monitor(t, rdb, func() { scenario(t, q) })
			calls, bad := checkTrace(t, rdb, trace, q.prefix)
			if calls < 30 {
				t.Fatalf("only %d script calls of the queue traced", calls)
			}
			if declared && len(bad) > 0 {
				t.Fatalf("%d of %d script calls touched undeclared keys, first: %s", len(bad), calls, bad[0])
			}
			if !declared && len(bad) == 0 {
				t.Fatal("a plain queue's scripts touched only their KEYS: the check sees nothing")
			}
		})
	}
}

// RWQ-DECL-004: LeaseMany on a fresh handle (cold window) and on a stale window still returns
// every ready item up to count, in order, under one token; so does CompleteAndLeaseMany.
func TestDeclaredLeaseManyColdWindow(t *testing.T) {
	q, rdb := newQueue(t, &Options{DeclaredKeys: true})
	items := make([]Item, 300)
	for i := range items {
		items[i] = Item{fmt.Sprintf("i%03d", i), []byte("x")}
	}
	must[[]bool](t)(q.AddMany(ctx, items))
	got := must[[]Lease](t)(q.LeaseMany(ctx, 100, 30_000))
	if len(got) != 100 || got[0].ID != "i000" || got[99].ID != "i099" || got[0].Token != got[99].Token {
		t.Fatalf("cold lease_many leased %d: %v", len(got), got)
	}
	// Another handle takes more than the window's slack: this handle's window is stale.
	other, err := New(rdb, q.prefix, nil)
	if err != nil {
		t.Fatal(err)
	}
	must[[]Lease](t)(other.LeaseMany(ctx, 150, 30_000))
	got = must[[]Lease](t)(q.LeaseMany(ctx, 1000, 30_000))
	if len(got) != 50 || got[0].ID != "i250" || got[49].ID != "i299" {
		t.Fatalf("stale-window lease_many leased %d: %v", len(got), got)
	}

	// complete_and_lease on a fresh handle: its lease part stops at once, the client goes on.
	must[[]bool](t)(q.AddMany(ctx, []Item{{"n1", nil}, {"n2", nil}, {"n3", nil}}))
	fresh, err := New(rdb, q.prefix, &Options{DeclaredKeys: true})
	if err != nil {
		t.Fatal(err)
	}
	outcomes, next, err := fresh.CompleteAndLeaseMany(ctx, []string{"i000", "i001"}, 5, 30_000)
	if err != nil || !reflect.DeepEqual(outcomes, []Outcome{Done, Done}) || len(next) != 3 ||
		next[0].ID != "n1" || next[2].ID != "n3" || next[0].Token != next[2].Token {
		t.Fatalf("cold complete_and_lease: %v %v %v", outcomes, next, err)
	}

	// A cold light clean still walks every entry.
	cleaner, err := New(rdb, q.prefix, &Options{DeclaredKeys: true})
	if err != nil {
		t.Fatal(err)
	}
	n := must[int64](t)(rdb.LLen(ctx, q.inflight).Result())
	must[bool](t)(rdb.PExpire(ctx, q.prefix+":lease:i100", time.Millisecond).Result())
	must[int64](t)(rdb.Del(ctx, q.prefix+":lease:i200", q.prefix+":item:i201", q.prefix+":lease:i201").Result())
	time.Sleep(5 * time.Millisecond)
	rep := must[CleanReport](t)(cleaner.LightClean(ctx, 7))
	if !reflect.DeepEqual(rep.Requeued, []string{"i100", "i200"}) && !reflect.DeepEqual(rep.Requeued, []string{"i200", "i100"}) || rep.Dropped != 1 {
		t.Fatalf("cold light clean over %d entries: %+v", n, rep)
	}
}

// RWQ-SHARD with profile declared-keys: each shard declares its keys, shards declares {P#0}:shards.
func TestDeclaredSharded(t *testing.T) {
	s, rdb, _ := newShardedWith(t, 3, &Options{DeclaredKeys: true})
	trace := monitor(t, rdb, func() {
		items := make([]Item, 30)
		for i := range items {
			items[i] = Item{fmt.Sprint("s", i), []byte("x")}
		}
		must[[]bool](t)(s.AddMany(ctx, items))
		leased := must[[]Lease](t)(s.LeaseMany(ctx, 30, 30_000))
		if len(leased) != 30 {
			t.Errorf("sharded lease_many leased %d of 30", len(leased))
		}
		must[[]Outcome](t)(s.CompleteManyOwned(ctx, leased))
		if c := must[Counts](t)(s.Counts(ctx)); c != (Counts{}) {
			t.Errorf("counts %+v", c)
		}
	})
	shards := s.shards[0].prefix + ":shards"
	sawShards := false
	for _, line := range trace {
		if len(line.args) > 3 && strings.EqualFold(line.args[0], "evalsha") && line.args[1] == scripts["shards"].Hash() {
			sawShards = contains(line.args[3:], shards)
		}
	}
	if !sawShards {
		t.Fatalf("the shards call did not declare %s", shards)
	}
	for _, q := range s.shards {
		if calls, bad := checkTrace(t, rdb, trace, q.prefix); calls == 0 || len(bad) > 0 {
			t.Fatalf("shard %s: %d calls, undeclared: %v", q.prefix, calls, bad)
		}
	}
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// seen is one MONITOR line: the client ("lua" for a command a script ran) and the arguments.
type seen struct {
	client string
	args   []string
}

// monitor records with MONITOR the commands the server runs while fn runs.
func monitor(t *testing.T, rdb *redis.Client, fn func()) []seen {
	t.Helper()
	c, err := net.Dial("tcp", rdb.Options().Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	if _, err := c.Write([]byte("MONITOR\r\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := r.ReadString('\n'); err != nil || line != "+OK\r\n" {
		t.Fatalf("MONITOR: %q %v", line, err)
	}
	fn()
	marker := "rwq-monitor-end-" + newToken()
	must[string](t)(rdb.Echo(ctx, marker).Result())
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var out []seen
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the MONITOR trace: %v", err)
		}
		s, ok := parseMonitor(strings.TrimRight(line, "\r\n"))
		if !ok {
			continue
		}
		if len(s.args) == 2 && strings.EqualFold(s.args[0], "echo") && s.args[1] == marker {
			return out
		}
		out = append(out, s)
	}
}

// parseMonitor reads `+<time> [<db> <client>] "CMD" "arg" ...`, undoing Redis's escapes.
func parseMonitor(line string) (seen, bool) {
	open := strings.IndexByte(line, '[')
	end := strings.Index(line, "] ")
	if !strings.HasPrefix(line, "+") || open < 0 || end < open {
		return seen{}, false
	}
	_, client, _ := strings.Cut(line[open+1:end], " ")
	s := seen{client: client}
	rest := line[end+2:]
	for len(rest) > 0 {
		if rest[0] != '"' {
			return seen{}, false
		}
		var b strings.Builder
		i := 1
		for ; i < len(rest) && rest[i] != '"'; i++ {
			if rest[i] != '\\' || i+1 >= len(rest) {
				b.WriteByte(rest[i])
				continue
			}
			i++
			switch rest[i] {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 'x':
				if n, err := strconv.ParseUint(rest[i+1:min(i+3, len(rest))], 16, 8); err == nil {
					b.WriteByte(byte(n))
					i += 2
				}
			default:
				b.WriteByte(rest[i])
			}
		}
		s.args = append(s.args, b.String())
		rest = strings.TrimPrefix(rest[min(i+1, len(rest)):], " ")
	}
	return s, true
}

// checkTrace counts the script calls on the queue with prefix and lists those that ran a command
// touching a key not in the call's KEYS (keys as COMMAND GETKEYS gives them).
func checkTrace(t *testing.T, rdb *redis.Client, trace []seen, prefix string) (int, []string) {
	t.Helper()
	calls := 0
	var bad []string
	var keys map[string]bool // the KEYS of the script call being traced; nil outside one
	var call string
	for _, s := range trace {
		if len(s.args) == 0 {
			continue
		}
		if s.client != "lua" {
			keys = nil
			name := strings.ToLower(s.args[0])
			if (name == "evalsha" || name == "eval") && len(s.args) > 3 {
				n, _ := strconv.Atoi(s.args[2])
				if n > 0 && 3+n <= len(s.args) && strings.HasPrefix(s.args[3], prefix+":") {
					calls++
					keys = map[string]bool{}
					for _, k := range s.args[3 : 3+n] {
						keys[k] = true
					}
					call = strings.Join(s.args[3:min(len(s.args), 3+n+2)], " ")
				}
			}
			continue
		}
		if keys == nil {
			continue
		}
		args := make([]any, 0, 2+len(s.args))
		args = append(args, "COMMAND", "GETKEYS")
		for _, a := range s.args {
			args = append(args, a)
		}
		touched, err := rdb.Do(context.Background(), args...).StringSlice()
		if err != nil {
			continue // a command without keys (TIME...)
		}
		for _, k := range touched {
			if !keys[k] {
				bad = append(bad, fmt.Sprintf("%q touched %s (call: %s ...)", s.args, k, call))
				keys = nil // one per call
				break
			}
		}
	}
	return calls, bad
}
