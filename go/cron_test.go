package rwq

import (
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

type cronVector struct {
	ID      string  `json:"id"`
	Expr    string  `json:"expr"`
	TZ      string  `json:"tz"`
	AfterMs int64   `json:"after_ms"`
	NextMs  []int64 `json:"next_ms"`
	Refused *string `json:"refused"`
}

// TestCronVectors runs every vector of conformance/vectors/cron.json (profile periodic).
func TestCronVectors(t *testing.T) {
	raw, err := os.ReadFile("../conformance/vectors/cron.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Vectors []cronVector `json:"vectors"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Vectors) < 100 {
		t.Fatalf("only %d vectors", len(doc.Vectors))
	}
	reqID := regexp.MustCompile(`RWQ-SCHED-00[147]`)
	for _, v := range doc.Vectors {
		t.Run(v.ID, func(t *testing.T) {
			s, err := ParseCron(v.Expr, v.TZ)
			if v.Refused != nil {
				if !errors.Is(err, ErrInvalidArgument) || !reqID.MatchString(err.Error()) {
					t.Fatalf("ParseCron(%q, %q) = %v, want INVALID_ARGUMENT (%s)", v.Expr, v.TZ, err, *v.Refused)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseCron(%q, %q): %v", v.Expr, v.TZ, err)
			}
			after := v.AfterMs
			for i, want := range v.NextMs {
				got := s.NextSlot(after)
				if got != want {
					t.Fatalf("slot %d after %d: got %d, want %d", i, after, got, want)
				}
				after = got
			}
		})
	}
}

func TestCronNextSlotRange(t *testing.T) {
	s, err := ParseCron("* * * * *", "UTC")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.NextSlot(-1); got != -1 {
		t.Errorf("NextSlot(-1) = %d, want -1", got)
	}
	if got := s.NextSlot(MaxCronAfterMs); got != -1 {
		t.Errorf("NextSlot(max) = %d, want -1", got)
	}
	if got := s.NextSlot(MaxCronAfterMs - 1); got != MaxCronAfterMs {
		t.Errorf("NextSlot(max-1) = %d, want %d", got, int64(MaxCronAfterMs))
	}
}

// TestCronLongZoneMessage: ParseCron's message shows a refused zone name cut to 65 bytes, whatever
// its length (Schedule.walk refuses one over 64 bytes first, so only a direct caller gets here).
func TestCronLongZoneMessage(t *testing.T) {
	for _, n := range []int{66, 2000} {
		tz := strings.Repeat("A", n)
		_, err := ParseCron("* * * * *", tz)
		if !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("ParseCron with a %d-byte zone: %v, want INVALID_ARGUMENT", n, err)
		}
		if want := strconv.Quote(tz[:MaxZoneBytes+1]) + " (RWQ"; !strings.Contains(err.Error(), want) {
			t.Errorf("ParseCron with a %d-byte zone: %q, want the name cut to %d bytes", n, err, MaxZoneBytes+1)
		}
	}
}
