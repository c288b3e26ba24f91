// Command rwq-conformance-adapter lets the conformance runner drive the Go client: protocol 1 of
// conformance/PROTOCOL.md, NDJSON requests on stdin, replies on stdout (logs go to stderr). It
// only maps JSON to rwq calls and back; all client logic lives in the rwq package.
package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"
	rwq "github.com/rwq-protocol/rwq/go"
)

var ctx = context.Background()

// jbytes is a bytes value: {"utf8": "..."} or {"base64": "..."}.
type jbytes []byte

func (b *jbytes) UnmarshalJSON(raw []byte) (err error) {
	var v map[string]string
	if err = json.Unmarshal(raw, &v); err != nil || len(v) != 1 {
		return fmt.Errorf(`not a bytes value ({"utf8": ...} or {"base64": ...}): %s`, raw)
	}
	if s, ok := v["utf8"]; ok {
		*b = []byte(s)
	} else if s, ok = v["base64"]; ok {
		*b, err = base64.StdEncoding.Strict().DecodeString(s)
	} else {
		err = fmt.Errorf("not a bytes value: %s", raw)
	}
	return err
}

func (b jbytes) MarshalJSON() ([]byte, error) {
	if utf8.Valid(b) {
		return json.Marshal(map[string]string{"utf8": string(b)})
	}
	return json.Marshal(map[string]string{"base64": base64.StdEncoding.EncodeToString(b)})
}

// jlease is a lease as results carry it and as the runner passes it back (data ignored).
type jlease struct {
	ID      jbytes `json:"id"`
	Data    jbytes `json:"data"`
	Token   string `json:"token"`
	Attempt int64  `json:"attempt"`
}

// params holds every method's parameters; absent ones stay zero and the library judges them.
type params struct {
	ID           *jbytes          `json:"id"`
	Data         jbytes           `json:"data"`
	Lease        *jlease          `json:"lease"`
	Items        []params         `json:"items"` // add_many: {id, data}; complete_many, complete_and_lease: {id} or {lease}
	Leases       []jlease         `json:"leases"`
	IDs          []jbytes         `json:"ids"`
	LeaseMs      int64            `json:"lease_ms"`
	Block        bool             `json:"block"`
	TimeoutMs    int64            `json:"timeout_ms"`
	Count        *int             `json:"count"`
	RequireLease bool             `json:"require_lease"`
	Chunk        *int             `json:"chunk"`
	PaceMs       int64            `json:"pace_ms"`
	DelayMs      *int64           `json:"delay_ms"`
	Reason       string           `json:"reason"`
	Dead         bool             `json:"dead"`
	FallbackMs   int64            `json:"fallback_delay_ms"`
	Detail       string           `json:"detail"`
	Refund       bool             `json:"refund_attempt"`
	Policy       *rwq.RetryPolicy `json:"policy"`
	Offset       int              `json:"offset"`
}

func (p params) id() string {
	if p.ID == nil {
		return ""
	}
	return string(*p.ID)
}

func (l *jlease) lease() rwq.Lease {
	if l == nil {
		return rwq.Lease{}
	}
	return rwq.Lease{ID: string(l.ID), Token: l.Token}
}

// targets are what complete_many and complete_and_lease act on: each item an id or a lease.
func (p params) targets() (ids []string, leases []rwq.Lease, err error) {
	for _, it := range p.Items {
		if (it.ID == nil) == (it.Lease == nil) {
			return nil, nil, badRequest("each item takes exactly one of id and lease")
		}
		l := rwq.Lease{ID: it.id()}
		if it.Lease != nil {
			l = it.Lease.lease()
		}
		ids, leases = append(ids, l.ID), append(leases, l)
	}
	return ids, leases, nil
}

func or[T any](v *T, def T) T {
	if v == nil {
		return def
	}
	return *v
}

func conv[T, R any](in []T, f func(T) R) []R {
	out := make([]R, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

// enc turns a library result into its JSON form: ids and payloads as bytes values.
func enc(v any) any {
	dead := func(d rwq.DeadItem) map[string]any {
		return map[string]any{"id": jbytes(d.ID), "dead_at_ms": d.DeadAtMs, "reason": d.Reason, "attempts": d.Attempts, "detail": d.Detail}
	}
	switch v := v.(type) {
	case *rwq.Lease:
		if v == nil {
			return nil
		}
		return jlease{ID: jbytes(v.ID), Data: v.Data, Token: v.Token, Attempt: v.Attempt}
	case []rwq.Lease:
		return conv(v, func(l rwq.Lease) any { return enc(&l) })
	case rwq.CleanReport:
		toBytes := func(id string) jbytes { return jbytes(id) }
		return map[string]any{"requeued": conv(v.Requeued, toBytes), "dropped": v.Dropped, "dead": conv(v.Dead, toBytes), "promoted": v.Promoted}
	case []rwq.DeadItem: // dead_list: without payloads
		return conv(v, func(d rwq.DeadItem) any { return dead(d) })
	case *rwq.DeadItem: // dead_get: with its payload
		if v == nil {
			return nil
		}
		out := dead(*v)
		out["data"] = jbytes(v.Data)
		return out
	}
	return v
}

func res[T any](v T, err error) (any, error) { return enc(v), err }

var names = []string{"add", "add_many", "complete", "complete_and_lease", "complete_many", "counts", "dead_get",
	"dead_list", "dead_purge", "dead_requeue", "deep_clean", "fail", "get_policy", "lease", "lease_many",
	"light_clean", "release", "release_many", "renew", "renew_many", "set_policy", "set_policy_if_absent"}

// call runs one method of PROTOCOL.md on q.
func call(q rwq.WorkQueue, method string, p params) (any, error) {
	leases := conv(p.Leases, func(l jlease) rwq.Lease { return l.lease() })
	switch method {
	case "add":
		return res(q.AddDelayed(ctx, p.id(), p.Data, or(p.DelayMs, 0)))
	case "add_many":
		return res(q.AddManyDelayed(ctx, conv(p.Items, func(it params) rwq.Item { return rwq.Item{ID: it.id(), Data: it.Data} }), or(p.DelayMs, 0)))
	case "lease":
		if p.Block {
			return res(q.LeaseBlocking(ctx, p.LeaseMs, p.TimeoutMs))
		} else if p.TimeoutMs != 0 { // the Go API cannot express it (RWQ-LEASE-014)
			return nil, &rwq.Error{Code: rwq.CodeInvalidArgument, Message: "timeout_ms needs block"}
		}
		return res(q.Lease(ctx, p.LeaseMs))
	case "lease_many":
		return res(q.LeaseMany(ctx, or(p.Count, 0), p.LeaseMs))
	case "renew":
		return res(q.Renew(ctx, p.Lease.lease(), p.LeaseMs))
	case "renew_many":
		return res(q.RenewMany(ctx, leases, p.LeaseMs))
	case "complete", "complete_many", "complete_and_lease":
		if method == "complete" {
			p.Items = []params{{ID: p.ID, Lease: p.Lease}}
		}
		ids, owned, err := p.targets()
		switch {
		case err != nil:
			return nil, err
		case method == "complete" && p.RequireLease:
			return res(q.CompleteOwned(ctx, owned[0]))
		case method == "complete":
			return res(q.Complete(ctx, ids[0]))
		case method == "complete_many" && p.RequireLease:
			return res(q.CompleteManyOwned(ctx, owned))
		case method == "complete_many":
			return res(q.CompleteMany(ctx, ids))
		}
		var out []rwq.Outcome
		var next []rwq.Lease
		if p.RequireLease {
			out, next, err = q.CompleteOwnedAndLeaseMany(ctx, owned, or(p.Count, 1), p.LeaseMs)
		} else {
			out, next, err = q.CompleteAndLeaseMany(ctx, ids, or(p.Count, 1), p.LeaseMs)
		}
		return map[string]any{"outcomes": out, "leases": enc(next)}, err
	case "release":
		return res(q.ReleaseWith(ctx, p.Lease.lease(), rwq.ReleaseOptions{DelayMs: or(p.DelayMs, 0), RefundAttempt: p.Refund}))
	case "release_many":
		return res(q.ReleaseManyWith(ctx, leases, rwq.ReleaseOptions{DelayMs: or(p.DelayMs, 0), RefundAttempt: p.Refund}))
	case "counts":
		return res(q.Counts(ctx))
	case "light_clean":
		return res(q.LightCleanPaced(ctx, or(p.Chunk, rwq.DefaultLightCleanChunk), p.PaceMs))
	case "deep_clean":
		return res(q.DeepClean(ctx, or(p.Chunk, rwq.DefaultDeepCleanChunk)))
	case "fail":
		opts := rwq.FailOptions{Dead: p.Dead, DelayMs: p.DelayMs, FallbackDelayMs: p.FallbackMs, Detail: p.Detail}
		return res(q.FailWith(ctx, p.Lease.lease(), p.Reason, opts))
	case "set_policy":
		return struct{}{}, q.SetRetryPolicy(ctx, p.Policy)
	case "set_policy_if_absent":
		return res(q.SetRetryPolicyIfAbsent(ctx, p.Policy))
	case "get_policy":
		return res(q.RetryPolicy(ctx))
	case "dead_list":
		return res(q.DeadItems(ctx, p.Offset, or(p.Count, 100)))
	case "dead_get":
		return res(q.DeadItem(ctx, p.id()))
	case "dead_requeue":
		return res(q.RequeueDead(ctx, conv(p.IDs, func(b jbytes) string { return string(b) })))
	case "dead_purge":
		return res(q.PurgeDead(ctx, conv(p.IDs, func(b jbytes) string { return string(b) })))
	}
	return nil, unsupported(method)
}

// badRequest is a request the adapter cannot understand (kind "protocol"); unsupported, a method
// it does not offer.
type badRequest string
type unsupported string

func (e badRequest) Error() string  { return string(e) }
func (e unsupported) Error() string { return "no method " + string(e) }

type session struct {
	client redis.UniversalClient
	queue  rwq.WorkQueue
}

type adapter struct {
	redisURL string
	cluster  bool // redisURL is one node of a Redis Cluster: sessions open cluster clients
	sessions map[string]session
	done     bool
}

func (a *adapter) hello(h struct {
	Protocols []int
	Redis     struct {
		URL     string
		Cluster *bool
	}
}) (any, error) {
	if !slices.Contains(h.Protocols, 1) {
		return nil, badRequest("this adapter speaks protocol 1 only")
	}
	if h.Redis.URL != "" {
		a.redisURL = h.Redis.URL
	}
	a.cluster = or(h.Redis.Cluster, a.cluster)
	return map[string]any{"protocol": 1, "implementation": map[string]string{"name": "rwq-go", "language": "go", "version": rwq.Version},
		"profiles": []string{"core", "retry", "delay", "ack", "flat", "sharded", "legacy-lease", "declared-keys"},
		"methods":  names, "scripts": rwq.ScriptSHA1s(), "capabilities": map[string]bool{"cluster": true}}, nil
}

func (a *adapter) open(o struct {
	Session, Queue string
	ClientName     string `json:"client_name"`
	Options        struct {
		LegacyLeaseKey bool   `json:"legacy_lease_key"`
		FlatInFlight   bool   `json:"flat_in_flight"`
		WaitReplicas   *int   `json:"wait_replicas"`
		WaitTimeoutMs  *int64 `json:"wait_timeout_ms"`
		Shards         *int   `json:"shards"` // profile sharded: queue is the logical name P
		DeclaredKeys   bool   `json:"declared_keys"`
	}
}) (any, error) {
	a.close(o.Session)
	ropts, err := rwq.ParseRedisURL(a.redisURL) // with MaxRetries -1 (RWQ-FAIL-004)
	if err != nil {
		return nil, badRequest(err.Error())
	}
	ropts.ClientName, ropts.IsClusterMode = o.ClientName, a.cluster // CLIENT SETNAME on every connection
	client := redis.NewUniversalClient(ropts)
	w := o.Options
	qopts := &rwq.Options{LegacyLeaseKey: w.LegacyLeaseKey, FlatInFlight: w.FlatInFlight, DeclaredKeys: w.DeclaredKeys}
	if w.WaitReplicas != nil || w.WaitTimeoutMs != nil {
		qopts.Ack = &rwq.Ack{Replicas: or(w.WaitReplicas, 0), TimeoutMs: or(w.WaitTimeoutMs, 1000)}
	}
	var q rwq.WorkQueue
	if w.Shards != nil {
		q, err = rwq.NewSharded(client, o.Queue, *w.Shards, qopts)
	} else {
		q, err = rwq.New(client, o.Queue, qopts)
	}
	if err != nil {
		client.Close()
		return nil, err
	}
	a.sessions[o.Session] = session{client, q}
	return struct{}{}, nil
}

func (a *adapter) call(c struct {
	Session, Method string
	Params          params
}) (any, error) {
	if s, ok := a.sessions[c.Session]; ok {
		return call(s.queue, c.Method, c.Params)
	}
	return nil, badRequest("unknown session " + c.Session)
}

func (a *adapter) close(name string) {
	if s, ok := a.sessions[name]; ok {
		s.client.Close()
		delete(a.sessions, name)
	}
}

// with decodes a request's args into fn's argument and calls it.
func with[T any](op string, args json.RawMessage, fn func(T) (any, error)) (any, error) {
	var v T
	if err := json.Unmarshal(args, &v); err != nil {
		return nil, badRequest(op + ": " + err.Error())
	}
	return fn(v)
}

func (a *adapter) dispatch(op string, args json.RawMessage) (any, error) {
	switch op {
	case "hello":
		return with(op, args, a.hello)
	case "open":
		return with(op, args, a.open)
	case "call":
		return with(op, args, a.call)
	case "close":
		return with(op, args, func(c struct{ Session string }) (any, error) { a.close(c.Session); return struct{}{}, nil })
	case "reset", "shutdown":
		for name := range a.sessions {
			a.close(name)
		}
		a.done = op == "shutdown"
		return struct{}{}, nil
	}
	return nil, badRequest("unknown op " + op)
}

// handle answers one request line with one reply object.
func (a *adapter) handle(line []byte) (reply map[string]any) {
	var r struct {
		ID   *int64 `json:"id"`
		Op   string `json:"op"`
		Args json.RawMessage
	}
	reply = map[string]any{"v": 1, "id": 0}
	defer func() {
		if p := recover(); p != nil {
			reply["err"] = map[string]any{"kind": "internal", "code": "INTERNAL", "message": fmt.Sprint("panic: ", p),
				"detail": map[string]string{"traceback": string(debug.Stack())}}
		}
	}()
	err := json.Unmarshal(line, &r)
	if err == nil && r.ID == nil {
		err = badRequest("request without id")
	}
	reply["id"] = or(r.ID, 0)
	var result any
	if err == nil {
		result, err = a.dispatch(r.Op, r.Args)
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
	default: // badRequest, and JSON that does not fit the request
		reply["err"] = map[string]string{"kind": "protocol", "code": "BAD_REQUEST", "message": err.Error()}
	}
	return reply
}

func main() {
	a := &adapter{redisURL: os.Getenv("RWQ_REDIS_URL"), cluster: os.Getenv("RWQ_REDIS_CLUSTER") == "1", sessions: map[string]session{}}
	in, out := bufio.NewReaderSize(os.Stdin, 1<<20), bufio.NewWriter(os.Stdout)
	for !a.done {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			resp, merr := json.Marshal(a.handle(line))
			if merr != nil {
				resp = []byte(`{"v":1,"id":0,"err":{"kind":"internal","code":"INTERNAL","message":"unencodable reply"}}`)
			}
			out.Write(append(resp, '\n'))
			out.Flush()
		}
		if err == io.EOF {
			break
		} else if err != nil {
			fmt.Fprintln(os.Stderr, "rwq-conformance-adapter: reading stdin:", err)
			os.Exit(1)
		}
	}
	for name := range a.sessions {
		a.close(name)
	}
}
