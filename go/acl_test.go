package rwq

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The ACL roles of SPEC §13.1, read from SPEC.md (tests/test_acl.py checks that SPEC shows exactly
// what `rwq acl` prints): the Go port does each role's job on its own queue with nothing more
// than the role allows, and is refused the same calls on queue P:high.

var specRoleLine = regexp.MustCompile(`(?m)^ACL SETUSER jobs-(\w+) (.*)$`)

func specRoles(t *testing.T) map[string][]string {
	t.Helper()
	spec, err := os.ReadFile("../SPEC.md")
	if err != nil {
		t.Fatal(err)
	}
	roles := map[string][]string{}
	for _, m := range specRoleLine.FindAllStringSubmatch(string(spec), -1) {
		roles[m[1]] = strings.Fields(m[2])
	}
	if len(roles) != 6 {
		t.Fatalf("SPEC §13.1 lists %d roles, want 6: %v", len(roles), roles)
	}
	return roles
}

// roleClient creates the role's user for queue prefix (the SPEC line with jobs replaced) and logs in.
func roleClient(t *testing.T, admin *redis.Client, role, prefix string, rules []string) *redis.Client {
	t.Helper()
	user := prefix + "-" + role
	args := []any{"ACL", "SETUSER", user}
	for _, rule := range rules {
		args = append(args, strings.ReplaceAll(rule, "jobs:", prefix+":"))
	}
	if err := admin.Do(ctx, append(args, ">pw")...).Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Do(ctx, "ACL", "DELUSER", user) })
	c := redis.NewClient(&redis.Options{Addr: standaloneAddr, Username: user, Password: "pw", MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return c
}

func noPermission(err error) bool {
	for _, sign := range []string{"NOPERM", "no permissions", "can't run", "can't access"} {
		if err != nil && strings.Contains(err.Error(), sign) {
			return true
		}
	}
	return false
}

type roleOp struct {
	name  string
	setup func(q *Queue) Lease
	run   func(q *Queue, l Lease) error
}

func heldLease(t *testing.T, q *Queue) Lease {
	must[bool](t)(q.Add(ctx, "h", []byte("H")))
	l := must[*Lease](t)(q.Lease(ctx, 60_000))
	if l == nil {
		t.Fatal("nothing leased")
	}
	return *l
}

func TestRolesOfTheSpec(t *testing.T) {
	admin := redis.NewClient(&redis.Options{Addr: standaloneAddr, MaxRetries: -1})
	defer admin.Close()
	none := func(*Queue) Lease { return Lease{} }
	held := func(q *Queue) Lease { return heldLease(t, q) }
	dead := func(q *Queue) Lease {
		if err := q.SetRetryPolicy(ctx, &RetryPolicy{MaxAttempts: 1, Backoff: BackoffFixed}); err != nil {
			t.Fatal(err)
		}
		l := heldLease(t, q)
		must[FailResult](t)(q.Fail(ctx, l, "boom"))
		return l
	}
	policied := func(q *Queue) Lease {
		if err := q.SetRetryPolicy(ctx, &RetryPolicy{MaxAttempts: 1, Backoff: BackoffFixed}); err != nil {
			t.Fatal(err)
		}
		return heldLease(t, q)
	}
	scheduled := func(q *Queue) Lease { // a schedule whose slots of the last minute are due
		must[bool](t)(q.PutSchedule(ctx, "s", Every(1000), nil))
		must[int64](t)(q.rdb.HSet(ctx, q.prefix+":schedules:fired", "s", 0).Result())
		return Lease{}
	}
	paused := func(q *Queue) Lease {
		scheduled(q)
		must[bool](t)(q.PauseSchedule(ctx, "s"))
		return Lease{}
	}
	jobs := map[string][]roleOp{
		"producer": {
			{"Add", none, func(q *Queue, _ Lease) error { _, err := q.Add(ctx, "n", nil); return err }},
			{"AddManyDelayed", none, func(q *Queue, _ Lease) error {
				_, err := q.AddManyDelayed(ctx, []Item{{ID: "d", Data: []byte("D")}}, 60_000)
				return err
			}},
		},
		"worker": {
			{"Lease", held, func(q *Queue, _ Lease) error { _, err := q.Lease(ctx, 1000); return err }},
			{"LeaseBlocking", none, func(q *Queue, _ Lease) error { _, err := q.LeaseBlocking(ctx, 1000, 50); return err }},
			{"LeaseMany", held, func(q *Queue, _ Lease) error { _, err := q.LeaseMany(ctx, 5, 1000); return err }},
			{"Renew", held, func(q *Queue, l Lease) error { _, err := q.Renew(ctx, l, 1000); return err }},
			{"CompleteOwned", held, func(q *Queue, l Lease) error { _, err := q.CompleteOwned(ctx, l); return err }},
			{"CompleteOwnedAndLease", held, func(q *Queue, l Lease) error {
				_, _, err := q.CompleteOwnedAndLease(ctx, l, 1000)
				return err
			}},
			{"ReleaseDelayed", held, func(q *Queue, l Lease) error { _, err := q.ReleaseDelayed(ctx, l, 5); return err }},
			{"Fail to dead", policied, func(q *Queue, l Lease) error { _, err := q.Fail(ctx, l, "boom"); return err }},
		},
		"operator": {
			{"Counts", none, func(q *Queue, _ Lease) error { _, err := q.Counts(ctx); return err }},
			{"LightClean", held, func(q *Queue, _ Lease) error { _, err := q.LightClean(ctx, 100); return err }},
			{"DeepClean", held, func(q *Queue, _ Lease) error { _, err := q.DeepClean(ctx, 1000); return err }},
			{"DeadItems", dead, func(q *Queue, _ Lease) error { _, err := q.DeadItems(ctx, 0, 10); return err }},
			{"DeadItem", dead, func(q *Queue, l Lease) error { _, err := q.DeadItem(ctx, l.ID); return err }},
			{"RequeueDead", dead, func(q *Queue, l Lease) error { _, err := q.RequeueDead(ctx, []string{l.ID}); return err }},
			{"PurgeDead", dead, func(q *Queue, l Lease) error { _, err := q.PurgeDead(ctx, []string{l.ID}); return err }},
			{"TrimDead", dead, func(q *Queue, _ Lease) error { _, err := q.TrimDead(ctx); return err }},
			{"RetryPolicy", dead, func(q *Queue, _ Lease) error { _, err := q.RetryPolicy(ctx); return err }},
			{"PauseSchedule", scheduled, func(q *Queue, _ Lease) error { _, err := q.PauseSchedule(ctx, "s"); return err }},
			{"ResumeSchedule", paused, func(q *Queue, _ Lease) error { _, err := q.ResumeSchedule(ctx, "s"); return err }},
		},
		"observer": {
			{"Counts", none, func(q *Queue, _ Lease) error { _, err := q.Counts(ctx); return err }},
			{"Schedules", scheduled, func(q *Queue, _ Lease) error { _, err := q.Schedules(ctx); return err }},
		},
		"scheduler": {
			{"Scheduler.Tick", scheduled, func(q *Queue, _ Lease) error {
				tick, err := NewScheduler(q, nil).Tick(ctx)
				if err == nil && len(tick.Fired) == 0 {
					return fmt.Errorf("the tick fired nothing")
				}
				return err
			}},
			{"WorkerBeat", none, func(q *Queue, _ Lease) error {
				_, err := q.WorkerBeat(ctx, "sched-1", 30_000, NewScheduler(q, nil).record())
				return err
			}},
		},
		"admin": {
			{"SetRetryPolicy", none, func(q *Queue, _ Lease) error {
				p := DefaultRetryPolicy()
				return q.SetRetryPolicy(ctx, &p)
			}},
			{"RetryPolicy", none, func(q *Queue, _ Lease) error { _, err := q.RetryPolicy(ctx); return err }},
			{"clear the policy", dead, func(q *Queue, _ Lease) error { return q.SetRetryPolicy(ctx, nil) }},
			{"PutSchedule", none, func(q *Queue, _ Lease) error { _, err := q.PutSchedule(ctx, "s", Every(1000), nil); return err }},
			{"RemoveSchedule", scheduled, func(q *Queue, _ Lease) error { _, err := q.RemoveSchedule(ctx, "s"); return err }},
		},
	}
	for role, rules := range specRoles(t) {
		queueSeq++
		prefix := fmt.Sprintf("acl%d", queueSeq)
		client := roleClient(t, admin, role, prefix, rules)
		for _, op := range jobs[role] {
			for _, p := range []string{prefix, prefix + ":high"} {
				must[string](t)(admin.ScriptFlush(ctx).Result()) // the EVAL fallback runs as the role too
				for _, key := range must[[]string](t)(admin.Keys(ctx, prefix+":*").Result()) {
					admin.Del(ctx, key) // both queues start empty
				}
				setup := must[*Queue](t)(New(admin, p, nil))
				l := op.setup(setup)
				var warned string
				q := must[*Queue](t)(New(client, p, &Options{Warn: func(m string) { warned = m }}))
				err := op.run(q, l)
				switch {
				case p == prefix && err != nil:
					t.Errorf("%s %s on its queue %s: %v", role, op.name, p, err)
				case p != prefix && !noPermission(err):
					t.Errorf("%s %s on another queue %s: want NOPERM, got %v", role, op.name, p, err)
				case warned != "":
					t.Errorf("%s %s: unexpected warning %q", role, op.name, warned)
				}
			}
		}
	}
}

// A server that refuses INFO (an ACL without it, a renamed command) leaves the version and the
// eviction policy unknown: no error, no warning (RWQ-SERVER-003).
func TestServerCheckWithoutInfo(t *testing.T) {
	admin := redis.NewClient(&redis.Options{Addr: standaloneAddr, MaxRetries: -1})
	defer admin.Close()
	must[string](t)(admin.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Result())
	defer admin.ConfigSet(ctx, "maxmemory-policy", "noeviction")
	client := roleClient(t, admin, "noinfo", "noinfo", []string{"reset", "on", "~*", "+@all", "-info", "-config"})
	var warned string
	q := must[*Queue](t)(New(client, "noinfo", &Options{Warn: func(m string) { warned = m }}))
	if c := must[Counts](t)(q.Counts(ctx)); c.Queued != 0 {
		t.Fatalf("counts %+v", c)
	}
	if warned != "" {
		t.Fatalf("warned without INFO: %q", warned)
	}
}

// exactState is every key of queue prefix (plain and sharded forms) with its DUMP and whether it has
// a TTL: a refused call must leave it unchanged (RWQ-SEC-006).
func exactState(t *testing.T, admin *redis.Client, prefix string) map[string]string {
	t.Helper()
	state := map[string]string{}
	for _, pattern := range []string{prefix + ":*", "{" + prefix + "#*"} {
		for _, key := range must[[]string](t)(admin.Keys(ctx, pattern).Result()) {
			ttl := must[time.Duration](t)(admin.PTTL(ctx, key).Result()) > 0
			state[key] = fmt.Sprintf("%q ttl=%v", must[string](t)(admin.Dump(ctx, key).Result()), ttl)
		}
	}
	return state
}

// refusedUnchanged runs call, which the role's ACL must refuse, and checks that it wrote nothing.
func refusedUnchanged(t *testing.T, admin *redis.Client, prefix, name string, call func() error) error {
	t.Helper()
	before := exactState(t, admin, prefix)
	err := call()
	if !ACLRefused(err) {
		t.Errorf("%s: want an ACL refusal, got %v", name, err)
	}
	if after := exactState(t, admin, prefix); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("%s: refused after writing:\nbefore %v\nafter  %v", name, before, after)
	}
	return err
}

// A call outside the caller's role writes nothing (RWQ-SEC-006): the operator's lease, which
// would promote a due delayed item, and its complete-and-lease, which would complete first; and a
// sharded client whose role may only read the shard count, on a queue with none recorded
// (RWQ-SHARD-009).
func TestRefusedCallsWriteNothing(t *testing.T) {
	admin := redis.NewClient(&redis.Options{Addr: standaloneAddr, MaxRetries: -1})
	defer admin.Close()
	roles := specRoles(t)
	queueSeq++
	prefix := fmt.Sprintf("refused%d", queueSeq)
	operator := must[*Queue](t)(New(roleClient(t, admin, "operator", prefix, roles["operator"]), prefix, nil))
	setup := must[*Queue](t)(New(admin, prefix, nil))
	must[bool](t)(setup.AddDelayed(ctx, "d", []byte("D"), 1))
	time.Sleep(5 * time.Millisecond)
	refusedUnchanged(t, admin, prefix, "operator Lease with a due item", func() error {
		_, err := operator.Lease(ctx, 60_000)
		return err
	})
	l := heldLease(t, setup)
	must[bool](t)(setup.Add(ctx, "r", []byte("R")))
	refusedUnchanged(t, admin, prefix, "operator CompleteOwnedAndLease", func() error {
		_, _, err := operator.CompleteOwnedAndLease(ctx, l, 60_000)
		return err
	})

	// Sharded, 2 shards: the roles' patterns for every shard, the count read-only but for the admin.
	queueSeq++
	sharded := fmt.Sprintf("refused%d", queueSeq)
	shardRules := func(role string) []string {
		rules := []string{}
		for _, rule := range roles[role] {
			rules = append(rules, strings.ReplaceAll(rule, "jobs:", "{"+sharded+"#[0-1]}:"))
		}
		count := "%R~{" + sharded + "#0}:shards"
		if role == "admin" {
			count = "~{" + sharded + "#0}:shards"
		}
		return append(rules, count, "~{"+sharded+"#bell}", "+get", "+set", "+type", "+blpop", "+lpush", "+ltrim", "+pexpire", "+llen")
	}
	for _, role := range []string{"producer", "worker", "operator"} {
		c := redis.NewClient(&redis.Options{Addr: standaloneAddr, Username: sharded + "-" + role, Password: "pw", MaxRetries: -1})
		args := []any{"ACL", "SETUSER", sharded + "-" + role}
		for _, rule := range shardRules(role) {
			args = append(args, rule)
		}
		if err := admin.Do(ctx, append(args, ">pw")...).Err(); err != nil {
			t.Fatal(err)
		}
		s := must[*ShardedQueue](t)(NewSharded(c, sharded, 2, nil))
		err := refusedUnchanged(t, admin, sharded, role+" first use, no count recorded", func() error {
			_, err := s.Add(ctx, "a", []byte("A"))
			return err
		})
		if err == nil || !strings.Contains(err.Error(), "rwq shards --prefix "+sharded+" --shards 2") {
			t.Errorf("%s: the refusal should name the admin's command: %v", role, err)
		}
		c.Close()
		admin.Do(ctx, "ACL", "DELUSER", sharded+"-"+role)
	}
}
