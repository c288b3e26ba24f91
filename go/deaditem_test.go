package rwq

import "testing"

// TestDeadItemReadsInfoLeniently: dead item info written by another client, with a missing or
// mistyped field or not JSON at all, reads field by field (empty where unusable), never as an
// error that would hide the dead set (RWQ-RETRY-009).
func TestDeadItemReadsInfoLeniently(t *testing.T) {
	cases := []struct {
		info     string
		reason   string
		attempts int64
		detail   string
	}{
		{`{"reason":"boom","attempts":3,"detail":"trace"}`, "boom", 3, "trace"},
		{`{"attempts":"3"}`, "", 0, ""},
		{`{"reason":5,"attempts":1.5,"detail":null}`, "", 0, ""},
		{"{\"reason\":\"\xff\",\"attempts\":2}", "\ufffd", 2, ""},
		{`{"reason":"r","attempts":-2,"detail":["d"]}`, "r", 0, ""},
		{`null`, "", 0, ""},
		{`not json`, "", 0, ""},
		{`[1, 2]`, "", 0, ""},
	}
	for _, c := range cases {
		item, err := deadItem([]any{"x", int64(1000), c.info, "payload"})
		if err != nil {
			t.Fatalf("info %q: %v", c.info, err)
		}
		if item.Reason != c.reason || item.Attempts != c.attempts || item.Detail != c.detail || string(item.Data) != "payload" {
			t.Fatalf("info %q read as %+v", c.info, item)
		}
	}
}
