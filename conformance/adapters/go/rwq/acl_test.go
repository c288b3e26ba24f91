package rwq

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// The ACL roles of SPEC §13.1, read from SPEC.md (tests/test_acl.py checks that SPEC shows exactly
// what `rwq acl` prints): the Go port does each role's job on its own queue with nothing more
// than the role allows, and is refused the same calls on queue P:high.

var specRoleLine = regexp.MustCompile(`(?m)^ACL SETUSER jobs-(\w+) (.*)$`)

func specRoles(t *testing.T) map[string][]string {
	t.Helper()
	spec, err := os.ReadFile("../../../../SPEC.md")
	if err != nil {
		t.Fatal(err)
	}
	roles := map[string][]string{}
	for _, m := range specRoleLine.FindAllStringSubmatch(string(spec), -1) {
		roles[m[1]] = strings.Fields(m[2])
	}
	if len(roles) != 4 {
		t.Fatalf("SPEC §13.1 lists %d roles, want 4: %v", len(roles), roles)
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
		},
		"admin": {
			{"SetRetryPolicy", none, func(q *Queue, _ Lease) error {
				p := DefaultRetryPolicy()
				return q.SetRetryPolicy(ctx, &p)
			}},
			{"RetryPolicy", none, func(q *Queue, _ Lease) error { _, err := q.RetryPolicy(ctx); return err }},
			{"clear the policy", dead, func(q *Queue, _ Lease) error { return q.SetRetryPolicy(ctx, nil) }},
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
