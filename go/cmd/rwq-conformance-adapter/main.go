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
	"runtime/debug"
	"slices"

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

// jlease is a lease in results, and as the runner passes it back (data ignored).
type jlease struct {
	ID      jbytes `json:"id"`
	Data    jbytes `json:"data"`
	Token   string `json:"token"`
	Attempt int64  `json:"attempt"`
}

// P is a request's args or a call's params, each member decoded when used.
type P = map[string]json.RawMessage

// get decodes member name of p, or gives def when p lacks it; absent params stay zero and the
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
func ms(p P, name string) int64 { return get(p, name, int64(0)) }
func id(p P) string             { return string(get(p, "id", jbytes{})) }
func lease(l jlease) rwq.Lease  { return rwq.Lease{ID: string(l.ID), Token: l.Token} }
func leases(p P) []rwq.Lease    { return conv(get(p, "leases", []jlease{}), lease) }
func lid(l rwq.Lease) string    { return l.ID }
func jid(id string) jbytes      { return jbytes(id) }

// target is what complete acts on: its lease, or its id (a lease without a token).
func target(p P) rwq.Lease {
	if has(p, "lease") {
		return lease(get(p, "lease", jlease{}))
	}
	return rwq.Lease{ID: id(p)}
}

func targets(p P) []rwq.Lease { return conv(get(p, "items", []P{}), target) }

func conv[T, R any](in []T, f func(T) R) []R {
	out := make([]R, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

// enc turns a library result into its JSON form: ids and payloads as bytes values.
func enc(v any) any {
	leaseJSON := func(l rwq.Lease) jlease { return jlease{[]byte(l.ID), l.Data, l.Token, l.Attempt} }
	dead := func(d rwq.DeadItem) map[string]any {
		return map[string]any{"id": jid(d.ID), "dead_at_ms": d.DeadAtMs, "reason": d.Reason, "attempts": d.Attempts, "detail": d.Detail}
	}
	switch v := v.(type) {
	case *rwq.Lease:
		if v != nil {
			return leaseJSON(*v)
		}
	case []rwq.Lease:
		return conv(v, leaseJSON)
	case rwq.CleanReport:
		return map[string]any{"requeued": conv(v.Requeued, jid), "dropped": v.Dropped, "dead": conv(v.Dead, jid), "promoted": v.Promoted}
	case []rwq.DeadItem: // dead_list: without payloads
		return conv(v, dead)
	case *rwq.DeadItem: // dead_get: with its payload
		if v != nil {
			out := dead(*v)
			out["data"] = jbytes(v.Data)
			return out
		}
	default:
		return v
	}
	return nil
}

func res[T any](v T, err error) (any, error) { return enc(v), err }

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
	"lease_many": func(q Q, p P) (any, error) { return res(q.LeaseMany(ctx, get(p, "count", 0), ms(p, "lease_ms"))) },
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
		return res(q.CompleteMany(ctx, conv(targets(p), lid)))
	},
	"complete_and_lease": func(q Q, p P) (any, error) {
		var out []rwq.Outcome
		var next []rwq.Lease
		var err error
		if get(p, "require_lease", false) {
			out, next, err = q.CompleteOwnedAndLeaseMany(ctx, targets(p), get(p, "count", 1), ms(p, "lease_ms"))
		} else {
			out, next, err = q.CompleteAndLeaseMany(ctx, conv(targets(p), lid), get(p, "count", 1), ms(p, "lease_ms"))
		}
		return map[string]any{"outcomes": out, "leases": enc(next)}, err
	},
	"release": func(q Q, p P) (any, error) { return res(q.ReleaseWith(ctx, target(p), releaseOptions(p))) },
	"release_many": func(q Q, p P) (any, error) {
		return res(q.ReleaseManyWith(ctx, leases(p), releaseOptions(p)))
	},
	"counts": func(q Q, p P) (any, error) { return res(q.Counts(ctx)) },
	"light_clean": func(q Q, p P) (any, error) {
		return res(q.LightCleanPaced(ctx, get(p, "chunk", rwq.DefaultLightCleanChunk), ms(p, "pace_ms")))
	},
	"deep_clean": func(q Q, p P) (any, error) { return res(q.DeepClean(ctx, get(p, "chunk", rwq.DefaultDeepCleanChunk))) },
	"fail": func(q Q, p P) (any, error) {
		opts := rwq.FailOptions{Dead: get(p, "dead", false), DelayMs: get(p, "delay_ms", (*int64)(nil)),
			FallbackDelayMs: ms(p, "fallback_delay_ms"), Detail: get(p, "detail", "")}
		return res(q.FailWith(ctx, target(p), get(p, "reason", ""), opts))
	},
	"set_policy":           func(q Q, p P) (any, error) { return struct{}{}, q.SetRetryPolicy(ctx, policy(p)) },
	"set_policy_if_absent": func(q Q, p P) (any, error) { return res(q.SetRetryPolicyIfAbsent(ctx, policy(p))) },
	"get_policy":           func(q Q, p P) (any, error) { return res(q.RetryPolicy(ctx)) },
	"dead_list":            func(q Q, p P) (any, error) { return res(q.DeadItems(ctx, get(p, "offset", 0), get(p, "count", 100))) },
	"dead_get":             func(q Q, p P) (any, error) { return res(q.DeadItem(ctx, id(p))) },
	"dead_requeue":         func(q Q, p P) (any, error) { return res(q.RequeueDead(ctx, ids(p))) },
	"dead_purge":           func(q Q, p P) (any, error) { return res(q.PurgeDead(ctx, ids(p))) },
}

func releaseOptions(p P) rwq.ReleaseOptions {
	return rwq.ReleaseOptions{DelayMs: ms(p, "delay_ms"), RefundAttempt: get(p, "refund_attempt", false)}
}
func policy(p P) *rwq.RetryPolicy { return get(p, "policy", (*rwq.RetryPolicy)(nil)) }
func ids(p P) []string {
	return conv(get(p, "ids", []jbytes{}), func(b jbytes) string { return string(b) })
}

type badRequest string // a request the adapter cannot understand (kind "protocol")
type unsupported string

func (e badRequest) Error() string  { return string(e) }
func (e unsupported) Error() string { return string(e) }

type session struct {
	client redis.UniversalClient
	queue  Q
}

var (
	redisURL = os.Getenv("RWQ_REDIS_URL")
	cluster  = os.Getenv("RWQ_REDIS_CLUSTER") == "1" // redisURL is one node of a Redis Cluster
	sessions = map[string]session{}
)

func closeSession(name string) {
	if s, ok := sessions[name]; ok {
		s.client.Close()
		delete(sessions, name)
	}
}

func open(a P) (any, error) {
	o, name := get(a, "options", P{}), get(a, "session", "")
	closeSession(name)
	ropts, err := rwq.ParseRedisURL(redisURL) // with MaxRetries -1 (RWQ-FAIL-004)
	if err != nil {
		return nil, badRequest(err.Error())
	}
	ropts.ClientName, ropts.IsClusterMode = get(a, "client_name", ""), cluster // CLIENT SETNAME on every connection
	client := redis.NewUniversalClient(ropts)
	qopts := &rwq.Options{LegacyLeaseKey: get(o, "legacy_lease_key", false), FlatInFlight: get(o, "flat_in_flight", false),
		DeclaredKeys: get(o, "declared_keys", false)}
	if has(o, "wait_replicas") || has(o, "wait_timeout_ms") {
		qopts.Ack = &rwq.Ack{Replicas: get(o, "wait_replicas", 0), TimeoutMs: get(o, "wait_timeout_ms", int64(1000))}
	}
	var q Q
	if has(o, "shards") { // profile sharded: queue is the logical name P
		q, err = rwq.NewSharded(client, get(a, "queue", ""), get(o, "shards", 0), qopts)
	} else {
		q, err = rwq.New(client, get(a, "queue", ""), qopts)
	}
	if err != nil {
		client.Close()
		return nil, err
	}
	sessions[name] = session{client, q}
	return struct{}{}, nil
}

func dispatch(op string, a P) (any, error) {
	switch op {
	case "hello":
		if !slices.Contains(get(a, "protocols", []int{}), 1) {
			return nil, badRequest("this adapter speaks protocol 1 only")
		}
		r := get(a, "redis", struct {
			URL     string
			Cluster bool
		}{redisURL, cluster})
		redisURL, cluster = r.URL, r.Cluster
		names := make([]string, 0, len(methods))
		for name := range methods {
			names = append(names, name)
		}
		slices.Sort(names)
		return map[string]any{"protocol": 1, "implementation": map[string]string{"name": "rwq-go", "language": "go", "version": rwq.Version},
			"profiles": []string{"core", "retry", "delay", "ack", "flat", "sharded", "legacy-lease", "declared-keys"},
			"methods":  names, "scripts": rwq.ScriptSHA1s(), "capabilities": map[string]bool{"cluster": true}}, nil
	case "open":
		return open(a)
	case "call":
		s, ok := sessions[get(a, "session", "")]
		m, known := methods[get(a, "method", "")]
		if !ok {
			return nil, badRequest("unknown session")
		} else if !known {
			return nil, unsupported("no method " + get(a, "method", ""))
		}
		return m(s.queue, get(a, "params", P{}))
	case "close":
		closeSession(get(a, "session", ""))
	case "reset", "shutdown":
		for name := range sessions {
			closeSession(name)
		}
	default:
		return nil, badRequest("unknown op " + op)
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
		if p := recover(); p != nil {
			reply["err"] = map[string]any{"kind": "internal", "code": "INTERNAL", "message": fmt.Sprint("panic: ", p),
				"detail": map[string]string{"traceback": string(debug.Stack())}}
			if bad, ok := p.(badRequest); ok { // a member that did not decode
				reply["err"] = map[string]string{"kind": "protocol", "code": "BAD_REQUEST", "message": string(bad)}
			}
		}
	}()
	err := json.Unmarshal(line, &r)
	if r.ID != nil {
		reply["id"] = *r.ID
	} else if err == nil {
		err = badRequest("request without id")
	}
	var result any
	if err == nil {
		result, err = dispatch(r.Op, r.Args)
	}
	var rerr *rwq.Error
	var unsup unsupported
	switch {
	case err == nil:
		reply["ok"] = result
	case errors.As(err, &rerr):
		reply["err"] = map[string]string{"kind": "domain", "code": string(rerr.Code), "message": err.Error()}
	case errors.As(err, &unsup):
		reply["err"] = map[string]string{"kind": "unsupported", "code": "UNSUPPORTED", "message": err.Error()}
	default: // badRequest, and JSON that is no request
		reply["err"] = map[string]string{"kind": "protocol", "code": "BAD_REQUEST", "message": err.Error()}
	}
	return r.Op, reply
}

func main() {
	in, out := bufio.NewScanner(os.Stdin), bufio.NewWriter(os.Stdout)
	in.Buffer(make([]byte, 1<<20), 17<<20) // requests of up to 16 MiB
	for in.Scan() {
		op, reply := handle(in.Bytes())
		line, err := json.Marshal(reply)
		if err != nil {
			line = []byte(`{"v":1,"id":0,"err":{"kind":"internal","code":"INTERNAL","message":"unencodable reply"}}`)
		}
		out.Write(append(line, '\n'))
		out.Flush()
		if op == "shutdown" {
			return
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "rwq-conformance-adapter: reading stdin:", err)
		os.Exit(1)
	}
}
