package rwq

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestLeaseFormatHidesToken: no fmt verb prints a lease's token (SPEC RWQ-SEC-003), nor does a
// slice, a map, a pointer or a struct that holds leases, nor an error wrapping one.
func TestLeaseFormatHidesToken(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	l := Lease{ID: "job-1", Data: []byte("payload"), Token: token, Attempt: 2}
	type holder struct {
		Lease  Lease
		Leases []Lease
	}
	values := []any{l, &l, []Lease{l, l}, map[string]Lease{"a": l}, holder{l, []Lease{l}}, &holder{Lease: l}}
	for _, v := range values {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
			if out := fmt.Sprintf(verb, v); strings.Contains(out, token) || strings.Contains(out, fmt.Sprintf("%x", token)) {
				t.Fatalf("%s of %T prints the token: %s", verb, v, out)
			}
		}
	}
	if err := fmt.Errorf("lost %v", l); strings.Contains(err.Error(), token) || strings.Contains(errors.Unwrap(fmt.Errorf("w: %w", err)).Error(), token) {
		t.Fatalf("an error message prints the token: %v", err)
	}
	if got := l.String(); !strings.Contains(got, `"job-1"`) || !strings.Contains(got, "Attempt: 2") {
		t.Fatalf("String should still name the item and the attempt: %s", got)
	}
}
