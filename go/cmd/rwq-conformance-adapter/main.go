// Command rwq-conformance-adapter lets the conformance runner drive the Go client: protocol 1 of
// conformance/PROTOCOL.md, NDJSON requests on stdin, one reply each on stdout. It only maps JSON
// to rwq calls and back; all client logic lives in the rwq package.
package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"
	rwq "github.com/rwq-protocol/rwq/go"
)

var ctx = context.Background()

// jbytes is a bytes value: {"utf8": "..."} or {"base64": "..."} in requests, base64 in replies.
type jbytes []byte

func (b *jbytes) UnmarshalJSON(raw []byte) (err error) {
	var v struct{ UTF8, Base64 *string }
	if err = json.Unmarshal(raw, &v); err == nil && v.UTF8 != nil {
		*b = []byte(*v.UTF8)
	} else if err == nil && v.Base64 != nil {
		*b, err = base64.StdEncoding.Strict().DecodeString(*v.Base64)
	} else {
		err = fmt.Errorf(`not a bytes value ({"utf8": ...} or {"base64": ...}): %s`, raw)
	}
	return err
}

func (b jbytes) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]string{"base64": base64.StdEncoding.EncodeToString(b)})
}

// P is a request's args or a call's params (or a lease, an item in them), decoded as used.
type P = map[string]json.RawMessage

// get decodes member name of p, or gives def when p lacks it: absent params stay zero and the
// library judges them. A member that does not decode is a bad request.
func get[T any](p P, name string, def T) T {
	if raw, ok := p[name]; ok {
		if err := json.Unmarshal(raw, &def); err != nil {
			panic(badRequest(name + ": " + err.Error()))
		}
	}
	return def
}

func has(p P, name string) bool { _, ok := p[name]; return ok }

// num decodes a duration, a count, a chunk, an offset, an option or a policy (def when absent).
// A number that is not an integer (1.5, "5", true) cannot reach the library's int64, as a
// caller's compiler would refuse it: INVALID_ARGUMENT (PROTOCOL.md section 4), not BAD_REQUEST.
func num[T any](p P, name string, def T) T {
	if raw, ok := p[name]; ok && json.Unmarshal(raw, &def) != nil {
		panic(failure{"domain", "INVALID_ARGUMENT", name + " is not an integer (or holds one that is not)"})
	}
	return def
}
func ms(p P, name string) int64 { return num(p, name, int64(0)) }
func id(p P) string             { return string(get(p, "id", jbytes{})) }

// lease is a lease the runner passes back ({id, token}); target, a lease or an id (no token).
func lease(p P) rwq.Lease             { return rwq.Lease{ID: id(p), Token: get(p, "token", "")} }
func target(p P) rwq.Lease            { return lease(get(p, "lease", P{"id": p["id"]})) }
func leases(p P) []rwq.Lease          { return conv(get(p, "leases", []P{}), lease) }
func targets(p P) []rwq.Lease         { return conv(get(p, "items", []P{}), target) }
func ids(leases []rwq.Lease) []string { return conv(leases, func(l rwq.Lease) string { return l.ID }) }
func idList(p P) []string {
	return conv(get(p, "ids", []jbytes{}), func(b jbytes) string { return string(b) })
}

func conv[T, R any](in []T, f func(T) R) []R {
	out := make([]R, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

// enc gives a library result its JSON form: structs by their json tags, ids (fields "id", and
// string slices) and payloads as bytes values.
func enc(v reflect.Value) any {
	switch {
	case v.Kind() == reflect.Pointer && v.IsNil():
		return nil
	case v.Kind() == reflect.Pointer:
		return enc(v.Elem())
	case v.Kind() == reflect.String:
		return jbytes(v.String())
	case v.Type() == reflect.TypeOf([]byte{}):
		return jbytes(v.Bytes())
	case v.Kind() == reflect.Slice:
		out := make([]any, v.Len())
		for i := range out {
			out[i] = enc(v.Index(i))
		}
		return out
	case v.Kind() == reflect.Struct:
		out := map[string]any{}
		for i := 0; i < v.NumField(); i++ {
			name, omit, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
			switch f := v.Field(i); {
			case omit == "omitempty" && f.IsZero(): // dead_list's payloads
			case f.Kind() == reflect.String && name != "id":
				out[name] = f.Interface()
			default:
				out[name] = enc(f)
			}
		}
		return out
	}
	return v.Interface()
}

func res[T any](v T, err error) (any, error) { return enc(reflect.ValueOf(&v).Elem()), err }

func completeAndLease(out []rwq.Outcome, next []rwq.Lease, err error) (any, error) {
	return map[string]any{"outcomes": out, "leases": enc(reflect.ValueOf(next))}, err
}

type Q = rwq.WorkQueue

// methods maps each method of PROTOCOL.md to its library call.
var methods = map[string]func(q Q, p P) (any, error){
	"add": func(q Q, p P) (any, error) {
		return res(q.AddDelayed(ctx, id(p), get(p, "data", jbytes{}), ms(p, "delay_ms")))
	},
	"add_many": func(q Q, p P) (any, error) {
		item := func(it P) rwq.Item { return rwq.Item{ID: id(it), Data: get(it, "data", jbytes{})} }
		return res(q.AddManyDelayed(ctx, conv(get(p, "items", []P{}), item), ms(p, "delay_ms")))
	},
	"lease": func(q Q, p P) (any, error) {
		if get(p, "block", false) {
			return res(q.LeaseBlocking(ctx, ms(p, "lease_ms"), ms(p, "timeout_ms")))
		} else if ms(p, "timeout_ms") != 0 { // the Go API cannot express it (RWQ-LEASE-014)
			return nil, &rwq.Error{Code: rwq.CodeInvalidArgument, Message: "timeout_ms needs block"}
		}
		return res(q.Lease(ctx, ms(p, "lease_ms")))
	},
	"lease_many": func(q Q, p P) (any, error) { return res(q.LeaseMany(ctx, num(p, "count", 0), ms(p, "lease_ms"))) },
	"renew":      func(q Q, p P) (any, error) { return res(q.Renew(ctx, target(p), ms(p, "lease_ms"))) },
	"renew_many": func(q Q, p P) (any, error) { return res(q.RenewMany(ctx, leases(p), ms(p, "lease_ms"))) },
	"complete": func(q Q, p P) (any, error) {
		if get(p, "require_lease", false) {
			return res(q.CompleteOwned(ctx, target(p)))
		}
		return res(q.Complete(ctx, target(p).ID))
	},
	"complete_many": func(q Q, p P) (any, error) {
		if get(p, "require_lease", false) {
			return res(q.CompleteManyOwned(ctx, targets(p)))
		}
		return res(q.CompleteMany(ctx, ids(targets(p))))
	},
	"complete_and_lease": func(q Q, p P) (any, error) {
		if get(p, "require_lease", false) {
			return completeAndLease(q.CompleteOwnedAndLeaseMany(ctx, targets(p), num(p, "count", 1), ms(p, "lease_ms")))
		}
		return completeAndLease(q.CompleteAndLeaseMany(ctx, ids(targets(p)), num(p, "count", 1), ms(p, "lease_ms")))
	},
	"release":      func(q Q, p P) (any, error) { return res(q.ReleaseWith(ctx, target(p), release(p))) },
	"release_many": func(q Q, p P) (any, error) { return res(q.ReleaseManyWith(ctx, leases(p), release(p))) },
	"counts":       func(q Q, p P) (any, error) { return res(q.Counts(ctx)) },
	"light_clean": func(q Q, p P) (any, error) {
		return res(q.LightCleanPaced(ctx, num(p, "chunk", rwq.DefaultLightCleanChunk), ms(p, "pace_ms")))
	},
	"deep_clean": func(q Q, p P) (any, error) { return res(q.DeepClean(ctx, num(p, "chunk", rwq.DefaultDeepCleanChunk))) },
	"fail": func(q Q, p P) (any, error) {
		opts := rwq.FailOptions{Dead: get(p, "dead", false), DelayMs: num(p, "delay_ms", (*int64)(nil)),
			FallbackDelayMs: ms(p, "fallback_delay_ms"), Detail: get(p, "detail", "")}
		return res(q.FailWith(ctx, target(p), get(p, "reason", ""), opts))
	},
	"set_policy":           func(q Q, p P) (any, error) { return struct{}{}, q.SetRetryPolicy(ctx, policy(p)) },
	"set_policy_if_absent": func(q Q, p P) (any, error) { return res(q.SetRetryPolicyIfAbsent(ctx, policy(p))) },
	"get_policy":           func(q Q, p P) (any, error) { return res(q.RetryPolicy(ctx)) },
	"dead_list":            func(q Q, p P) (any, error) { return res(q.DeadItems(ctx, num(p, "offset", 0), num(p, "count", 100))) },
	"dead_get":             func(q Q, p P) (any, error) { return res(q.DeadItem(ctx, id(p))) },
	"dead_requeue":         func(q Q, p P) (any, error) { return res(q.RequeueDead(ctx, idList(p))) },
	"dead_purge":           func(q Q, p P) (any, error) { return res(q.PurgeDead(ctx, idList(p))) },
	"worker_beat": func(q Q, p P) (any, error) {
		b, err := q.WorkerBeat(ctx, get(p, "id", ""), ms(p, "ttl_ms"), record(p))
		return map[string]int64{"now_ms": b.NowMs, "removed": b.Removed}, err
	},
	"worker_leave": func(q Q, p P) (any, error) { return q.WorkerLeave(ctx, get(p, "id", "")) },
	"workers": func(q Q, p P) (any, error) {
		live, err := q.Workers(ctx, num(p, "offset", 0), num(p, "count", 100))
		out := make([]map[string]any, len(live))
		for i, w := range live { // ids are plain strings here, not bytes values
			out[i] = map[string]any{"id": w.ID, "record": w.Record, "deadline_ms": w.DeadlineMs}
		}
		return out, err
	},
	"stats_enable":  func(q Q, p P) (any, error) { return q.EnableStats(ctx) },
	"stats_disable": func(q Q, p P) (any, error) { return q.DisableStats(ctx) },
	"stats": func(q Q, p P) (any, error) {
		s, err := q.Stats(ctx)
		since := map[bool]any{true: s.SinceMs}[s.Enabled] // null while off
		return map[string]any{"enabled": s.Enabled, "since_ms": since, "now_ms": s.NowMs, "current": s.Current(), "windows": s.Windows()}, err
	},
	"schedule_put": func(q Q, p P) (any, error) { // a sharded queue refuses it (RWQ-SCHED-016)
		type putter interface {
			PutSchedule(context.Context, string, rwq.Schedule, []byte) (bool, error)
		}
		return q.(putter).PutSchedule(ctx, get(p, "name", ""), schedule(p), get(p, "data", jbytes{}))
	},
	"schedule_remove": func(q Q, p P) (any, error) { return plain(q).RemoveSchedule(ctx, get(p, "name", "")) },
	"schedule_pause":  func(q Q, p P) (any, error) { return plain(q).PauseSchedule(ctx, get(p, "name", "")) },
	"schedule_resume": func(q Q, p P) (any, error) { return plain(q).ResumeSchedule(ctx, get(p, "name", "")) },
	"schedule_list": func(q Q, p P) (any, error) {
		list, err := plain(q).Schedules(ctx)
		out := []map[string]any{}
		for _, s := range list.Schedules {
			var def any // the stored definition, or null when the library cannot read it
			if _, bad := s.Schedule(); bad == nil {
				def = json.RawMessage(s.Definition)
			}
			out = append(out, map[string]any{"name": s.Name, "schedule": def, "data": jbytes(s.Data),
				"last_fired_ms": s.LastFiredMs, "paused_ms": s.PausedMs})
		}
		return out, err
	},
	"schedule_fire": func(q Q, p P) (any, error) {
		f, err := plain(q).Fire(ctx, get(p, "name", ""), get(p, "digest", ""), num(p, "slots", []int64{}))
		return map[string]any{"now_ms": f.NowMs, "status": f.Status, "last_fired_ms": f.LastFiredMs, "outcomes": f.Outcomes}, err
	},
	"schedule_next": func(q Q, p P) (any, error) { return rwq.NextSlots(schedule(p), ms(p, "after_ms"), num(p, "count", 0)) },
	"scheduler_tick": func(q Q, p P) (any, error) { // one Scheduler per session, kept until close or reset
		if schedulers[q] == nil {
			schedulers[q] = rwq.NewScheduler(plain(q), &rwq.SchedulerOptions{HeartbeatMs: -1})
		}
		t, err := schedulers[q].Tick(ctx)
		out := map[string]any{"fired": t.Fired, "next_ms": nil}
		if t.NextMs >= 0 {
			out["next_ms"] = t.NextMs
		}
		return out, err
	},
}

// schedule is a schedule object, absent members at PROTOCOL.md's defaults (UTC, skip, 60000); members
// that do not decode are INVALID_ARGUMENT (as policies).
func schedule(p P) rwq.Schedule {
	return num(p, "schedule", rwq.Schedule{TZ: "UTC", Missed: rwq.MissedSkip, GraceMs: rwq.DefaultGraceMs})
}

// plain is a session's queue when it is not sharded (periodic's other methods need not exist there).
func plain(q Q) *rwq.Queue {
	if pq, ok := q.(*rwq.Queue); ok {
		return pq
	}
	panic(failure{"unsupported", "UNSUPPORTED", "periodic on a sharded session"})
}

// record is worker_beat's record: a JSON object. Any other JSON value cannot reach the library's
// map[string]any, as a caller's compiler would refuse it: INVALID_ARGUMENT (PROTOCOL.md section 4).
func record(p P) map[string]any {
	var r map[string]any
	if err := json.Unmarshal(p["record"], &r); err != nil || r == nil {
		panic(failure{"domain", "INVALID_ARGUMENT", "record is not a JSON object"})
	}
	return r
}

func release(p P) rwq.ReleaseOptions {
	return rwq.ReleaseOptions{DelayMs: ms(p, "delay_ms"), RefundAttempt: get(p, "refund_attempt", false)}
}

func policy(p P) *rwq.RetryPolicy { return num(p, "policy", (*rwq.RetryPolicy)(nil)) }

// failure is an error reply other than the library's: the adapter panics with it, and handle
// replies with it. Kind protocol: a request not understood; unsupported; internal: a bug.
type failure struct{ Kind, Code, Message string }

// sentinels is each code's sentinel: an error of that code must match it with errors.Is.
var sentinels = map[rwq.Code]error{
	rwq.CodeInvalidArgument:   rwq.ErrInvalidArgument,
	rwq.CodeLeaseLost:         rwq.ErrLeaseLost,
	rwq.CodeUnsupportedServer: rwq.ErrUnsupportedServer,
	rwq.CodeRedisError:        rwq.ErrRedis,
	rwq.CodeWrongType:         rwq.ErrWrongType,
	rwq.CodeNotReplicated:     rwq.ErrNotReplicated,
	rwq.CodeShardMismatch:     rwq.ErrShardMismatch,
}

func badRequest(msg string) failure { return failure{"protocol", "BAD_REQUEST", msg} }

var (
	redisURL   = os.Getenv("RWQ_REDIS_URL")
	cluster    = os.Getenv("RWQ_REDIS_CLUSTER") == "1" // redisURL is one node of a Redis Cluster
	queues     = map[string]Q{}                        // by session
	clients    = map[string]redis.UniversalClient{}
	schedulers = map[Q]*rwq.Scheduler{} // by session's queue
)

func closeSession(name string) {
	if c := clients[name]; c != nil {
		c.Close()
	}
	delete(schedulers, queues[name])
	delete(queues, name)
	delete(clients, name)
}

func open(a P) (any, error) {
	o, name := get(a, "options", P{}), get(a, "session", "")
	closeSession(name)
	ack := &rwq.Ack{Replicas: num(o, "wait_replicas", 0), TimeoutMs: num(o, "wait_timeout_ms", int64(1000))}
	shards := num(o, "shards", 0)
	ropts, err := rwq.ParseRedisURL(redisURL) // with MaxRetries -1 (RWQ-FAIL-004)
	if err != nil {
		panic(badRequest(err.Error()))
	}
	ropts.ClientName, ropts.IsClusterMode = get(a, "client_name", ""), cluster // CLIENT SETNAME on every connection
	client := redis.NewUniversalClient(ropts)
	qopts := &rwq.Options{LegacyLeaseKey: get(o, "legacy_lease_key", false), FlatInFlight: get(o, "flat_in_flight", false),
		DeclaredKeys: get(o, "declared_keys", false), // profile ack: 0 replicas (the default) waits for none
		Ack:          ack}
	var q Q
	if has(o, "shards") { // profile sharded: queue is the logical name P
		q, err = rwq.NewSharded(client, get(a, "queue", ""), shards, qopts)
	} else {
		q, err = rwq.New(client, get(a, "queue", ""), qopts)
	}
	if err != nil {
		client.Close()
		return nil, err
	}
	queues[name], clients[name] = q, client
	return struct{}{}, nil
}

func dispatch(op string, a P) (any, error) {
	switch op {
	case "hello":
		if !slices.Contains(get(a, "protocols", []int{}), 1) {
			panic(badRequest("this adapter speaks protocol 1 only"))
		}
		r := get(a, "redis", P{})
		redisURL, cluster = get(r, "url", redisURL), get(r, "cluster", cluster)
		names := make([]string, 0, len(methods))
		for name := range methods {
			names = append(names, name)
		}
		slices.Sort(names)
		return map[string]any{"protocol": 1, "implementation": map[string]string{"name": "rwq-go", "language": "go", "version": rwq.Version},
			"profiles": []string{"core", "retry", "delay", "ack", "flat", "sharded", "legacy-lease", "declared-keys", "workers", "stats", "periodic"},
			"methods":  names, "scripts": rwq.ScriptSHA1s(), "capabilities": map[string]bool{"cluster": true}}, nil
	case "open":
		return open(a)
	case "call":
		if q := queues[get(a, "session", "")]; q == nil {
			panic(badRequest("unknown session"))
		} else if m := methods[get(a, "method", "")]; m != nil {
			return m(q, get(a, "params", P{}))
		}
		panic(failure{"unsupported", "UNSUPPORTED", "no method " + get(a, "method", "")})
	case "close":
		closeSession(get(a, "session", ""))
	case "reset", "shutdown":
		for name := range clients {
			closeSession(name)
		}
	default:
		panic(badRequest("unknown op " + op))
	}
	return struct{}{}, nil
}

// handle answers one request line with one reply object.
func handle(line []byte) (op string, reply map[string]any) {
	var r struct {
		ID   *int64
		Op   string
		Args P
	}
	reply = map[string]any{"v": 1, "id": 0}
	defer func() {
		if p := recover(); p != nil { // a failure, or a bug: internal, with its stack
			f, ok := p.(failure)
			if !ok {
				f = failure{"internal", "INTERNAL", fmt.Sprint("panic: ", p)}
			}
			reply["err"] = map[string]any{"kind": f.Kind, "code": f.Code, "message": f.Message}
			if !ok {
				reply["err"].(map[string]any)["detail"] = map[string]string{"traceback": string(debug.Stack())}
			}
		}
	}()
	err := json.Unmarshal(line, &r)
	if r.ID != nil {
		reply["id"] = *r.ID
	}
	if err != nil || r.ID == nil {
		panic(badRequest(fmt.Sprint("not a request with an id: ", err)))
	}
	var domain *rwq.Error // every error the library returns is one
	if result, err := dispatch(r.Op, r.Args); err == nil {
		reply["ok"] = result
	} else if errors.As(err, &domain) {
		reply["err"] = map[string]string{"kind": "domain", "code": string(domain.Code), "message": err.Error()}
		if !errors.Is(err, sentinels[domain.Code]) { // the package's promise: errors.Is with the code's sentinel
			panic(failure{"internal", "INTERNAL", fmt.Sprintf("errors.Is(err, the sentinel of %s) is false: %v", domain.Code, err)})
		}
	} else {
		panic(err)
	}
	return r.Op, reply
}

func main() {
	in, out := bufio.NewScanner(os.Stdin), bufio.NewWriter(os.Stdout)
	in.Buffer(make([]byte, 1<<20), 17<<20) // requests of up to 16 MiB
	for in.Scan() {
		op, reply := handle(in.Bytes())
		if json.NewEncoder(out).Encode(reply) != nil { // one line, or nothing written
			out.WriteString(`{"v":1,"id":0,"err":{"kind":"internal","code":"INTERNAL","message":"unencodable reply"}}` + "\n")
		}
		if out.Flush(); op == "shutdown" {
			return
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "rwq-conformance-adapter: reading stdin:", err)
		os.Exit(1)
	}
}
