package rwq

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Profile declared-keys (SPEC §20): with Options.DeclaredKeys, every script call passes every key
// its script touches in KEYS. The call sites build the core call shape; eval extends its KEYS
// with the script's DECLARED keys and one key triple per id the call names in ARGV or that the
// last window of the same kind named, and takes the window out of a finding script's reply
// before the call site reads it. A finding script that meets an id outside its window stops and
// asks to be called again (again = 1, or a cursor that goes on), which the call sites do anyway.

// declaredLine matches the key names of a script header's "-- DECLARED <P>:a <P>:b ..." line.
var declaredLine = regexp.MustCompile(`<P>:(\S+)`)

// parseDeclared returns the key names (after "<P>:") of the first "-- DECLARED " line of a
// script's source, in order; nil when the script has none (ring declares all its keys in the
// core shape).
func parseDeclared(src string) []string {
	for _, line := range strings.Split(src, "\n") {
		if rest, ok := strings.CutPrefix(line, "-- DECLARED "); ok {
			var names []string
			for _, m := range declaredLine.FindAllStringSubmatch(rest, -1) {
				names = append(names, m[1])
			}
			return names
		}
	}
	return nil
}

// itemKinds are the three keys of one id that a declared call passes, in order.
var itemKinds = [...]string{"item:", "lease:", "leased_by_session:"}

// windowAt is where each finding script's reply carries the window (RWQ-DECL-003).
var windowAt = map[string]int{"lease": 3, "light_clean": 5, "deep_clean": 2}

// windows keeps the last window a queue's finding calls replied with, per kind. Windows are
// hints: a stale one costs one more call, never a wrong result.
type windows struct {
	mu   sync.Mutex
	last map[string][]string
}

func (w *windows) get(kind string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last[kind]
}

func (w *windows) set(kind string, ids []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.last == nil {
		w.last = make(map[string][]string)
	}
	w.last[kind] = ids
}

// argString is an ARGV value as Redis receives it (ids are strings; []byte is taken as is).
func argString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}

// every returns args[from], args[from+step], ... as strings.
func every(args []any, from, step int) []string {
	var out []string
	for i := from; i < len(args); i += step {
		out = append(out, argString(args[i]))
	}
	return out
}

// namedIDs are the ids whose keys a call names in ARGV, as each script's header lays out its ARGV.
func namedIDs(script string, args []any) []string {
	switch script {
	case "add":
		return every(args, 1, 2)
	case "release": // ["refund",] delay_ms, then id, token pairs
		if len(args) > 0 && argString(args[0]) == "refund" {
			return every(args, 2, 2)
		}
		return every(args, 1, 2)
	case "renew":
		return every(args, 2, 2)
	case "claim", "fail":
		return every(args[:min(1, len(args))], 0, 1)
	case "complete":
		if len(args) > 0 && argString(args[0]) == "owner" {
			return every(args, 1, 2)
		}
		return every(args, 1, 1)
	case "complete_and_lease":
		if len(args) > 5 && argString(args[5]) == "owner" {
			return every(args, 6, 2)
		}
		return every(args, 6, 1)
	case "fire": // name, digest, slots: the ids <name>@<slot> (SPEC §23)
		out := every(args, 2, 1)
		for i := range out {
			out[i] = argString(args[0]) + "@" + out[i]
		}
		return out
	case "dead", "deep_clean":
		if len(args) > 0 && argString(args[0]) == "requeue" {
			return every(args, 1, 1)
		}
	}
	return nil
}

// windowKind is which window a finding call declares and replies with: "lease" (shared by lease
// and complete_and_lease), "light_clean", or "deep_clean:<list>" for a deep clean's index call
// of that list; "" for a call that finds no id.
func windowKind(script string, args []any) string {
	switch script {
	case "lease", "complete_and_lease":
		return "lease"
	case "light_clean":
		return "light_clean"
	case "deep_clean":
		if len(args) > 1 && argString(args[0]) == "index" {
			return "deep_clean:" + argString(args[1])
		}
	}
	return ""
}

// declaredKeys is keys extended for a declared call (RWQ-DECL-002): the core keys, the script's
// DECLARED keys, then the triple of each id named in args or in window, each id once, in order.
// A script without a DECLARED line gets keys unchanged.
func declaredKeys(script string, keys []string, args []any, window []string) []string {
	names := declaredNames[script]
	if len(names) == 0 || len(keys) == 0 || !strings.HasSuffix(keys[0], "queue") {
		return keys // nothing to declare; or a core shape the script refuses anyway
	}
	base := strings.TrimSuffix(keys[0], "queue") // P with its trailing colon (RWQ-SCRIPT-005)
	named := namedIDs(script, args)
	seen := make(map[string]bool, len(named)+len(window))
	out := make([]string, 0, len(keys)+len(names)+3*(len(named)+len(window)))
	out = append(out, keys...)
	for _, name := range names {
		out = append(out, base+name)
	}
	for _, ids := range [][]string{named, window} {
		for _, id := range ids {
			if seen[id] {
				continue
			}
			seen[id] = true
			for _, kind := range itemKinds {
				out = append(out, base+kind+id)
			}
		}
	}
	return out
}

// splitWindow takes the window out of a declared finding call's reply: the reply as the core
// call shape gives it, and the window.
func splitWindow(script string, reply any) (any, []string, error) {
	if script == "complete_and_lease" {
		parts, ok := reply.([]any)
		if !ok || len(parts) != 2 {
			return nil, nil, unexpected(script, reply)
		}
		leased, window, err := splitWindow("lease", parts[1])
		if err != nil {
			return nil, nil, unexpected(script, reply)
		}
		return []any{parts[0], leased}, window, nil
	}
	at, known := windowAt[script]
	arr, ok := reply.([]any)
	if !known || !ok || len(arr) <= at {
		return nil, nil, unexpected(script, reply)
	}
	window, ok := arr[at].([]any)
	if !ok {
		return nil, nil, unexpected(script, reply)
	}
	ids := make([]string, len(window))
	for i, id := range window {
		ids[i] = toStr(id)
	}
	rest := make([]any, 0, len(arr)-1)
	rest = append(append(rest, arr[:at]...), arr[at+1:]...)
	return rest, ids, nil
}
