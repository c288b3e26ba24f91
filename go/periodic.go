package rwq

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Profile periodic (SPEC §23): schedules stored in Redis as data, so that schedulers in any
// language read the same ones, and the fire script, which turns each slot into at most one item
// (<name>@<slot>) by the server's clock. Every check here comes before any I/O
// (ErrInvalidArgument); slots are computed from the server's now that the replies carry.

// Limits and defaults of profile periodic (RWQ-SCHED-001).
const (
	MinEveryMs     = 1000
	MaxEveryMs     = 31_536_000_000
	MaxGraceMs     = 86_400_000
	DefaultGraceMs = 60_000
	MaxFireSlots   = 100                   // the most slots one Fire takes
	MaxSlotMs      = 1_000_000_000_000_000 // 10^15
	MissedSkip     = "skip"                // slots more than GraceMs late never fire (the default)
	MissedOnce     = "once"                // the latest late slot fires once when none is on time
	scheduleCount  = 1000                  // schedules per "schedule list" call
)

var (
	scheduleName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$`)
	scheduleTZ   = regexp.MustCompile(`^[A-Za-z0-9_+/-]{1,64}$`)
	cronChars    = regexp.MustCompile(`^[A-Za-z0-9*/,@ \t-]+$`)
	sha1Hex      = regexp.MustCompile(`^[0-9a-f]{40}$`)
)

// Schedule is a definition (SPEC §23.1): exactly one of EveryMs (the slots k·EveryMs + OffsetMs,
// ms since the epoch) or Cron (a 5-field expression, SPEC §23.2) in zone TZ (an IANA name). Missed
// says what happens to slots more than GraceMs late: MissedSkip or MissedOnce. Build one with
// Every or CronIn, which set the defaults (MissedSkip, GraceMs 60000), then change its fields.
type Schedule struct {
	EveryMs  int64  `json:"every_ms,omitempty"`
	OffsetMs int64  `json:"offset_ms,omitempty"`
	Cron     string `json:"cron,omitempty"`
	TZ       string `json:"tz,omitempty"`
	Missed   string `json:"missed,omitempty"`
	GraceMs  int64  `json:"grace_ms"`
}

// Every is a schedule of a slot every everyMs ms (1000..31536000000), on the grid of multiples of
// everyMs from the epoch; set OffsetMs to shift it.
func Every(everyMs int64) Schedule {
	return Schedule{EveryMs: everyMs, Missed: MissedSkip, GraceMs: DefaultGraceMs}
}

// CronIn is a schedule at the times cron expression expr gives in zone tz (an IANA name).
func CronIn(expr, tz string) Schedule {
	return Schedule{Cron: expr, TZ: tz, Missed: MissedSkip, GraceMs: DefaultGraceMs}
}

// walk is a checked schedule with its cron expression parsed: the slot walk of a scheduler.
type walk struct {
	s    Schedule
	cron *CronSchedule
}

// Check refuses, with ErrInvalidArgument, a definition SPEC §23.1 refuses (RWQ-SCHED-001, -004,
// -007); it does no I/O.
func (s Schedule) Check() error {
	_, err := s.walk()
	return err
}

func (s Schedule) walk() (walk, error) {
	w := walk{s: s}
	if (s.EveryMs == 0) == (s.Cron == "") {
		return w, invalid("a schedule takes exactly one of EveryMs or Cron (RWQ-SCHED-001)")
	}
	if s.EveryMs != 0 {
		if err := checkRange("every_ms", s.EveryMs, MinEveryMs, MaxEveryMs); err != nil {
			return w, err
		}
		if err := checkRange("offset_ms", s.OffsetMs, 0, s.EveryMs-1); err != nil {
			return w, err
		}
		if s.TZ != "" && s.TZ != "UTC" { // "" is the zero value, UTC the default of a stored one
			return w, invalid("tz applies to cron schedules only (RWQ-SCHED-001)")
		}
	} else {
		if s.OffsetMs != 0 {
			return w, invalid("offset_ms applies to every_ms schedules only (RWQ-SCHED-001)")
		}
		if len(s.Cron) > MaxCronBytes || !cronChars.MatchString(s.Cron) {
			return w, invalid("cron must be 1..200 bytes of a cron expression (RWQ-SCHED-004)")
		}
		if !scheduleTZ.MatchString(s.TZ) {
			return w, invalid("tz must be an IANA zone name of 1..64 bytes (RWQ-SCHED-001)")
		}
		cron, err := ParseCron(s.Cron, s.TZ)
		if err != nil {
			return w, err
		}
		w.cron = cron
	}
	if s.Missed != MissedSkip && s.Missed != MissedOnce {
		return w, invalid(fmt.Sprintf("missed must be skip or once, not %q (RWQ-SCHED-001)", s.Missed))
	}
	return w, checkRange("grace_ms", s.GraceMs, 0, MaxGraceMs)
}

// definition is the stored JSON: compact, v = 1, members in the order every client writes them.
func (s Schedule) definition() []byte {
	var b bytes.Buffer
	b.WriteString(`{"v":1,`)
	if s.EveryMs != 0 {
		fmt.Fprintf(&b, `"every_ms":%d,"offset_ms":%d,`, s.EveryMs, s.OffsetMs)
	} else {
		cron, _ := json.Marshal(s.Cron)
		tz, _ := json.Marshal(s.TZ)
		fmt.Fprintf(&b, `"cron":%s,"tz":%s,`, cron, tz)
	}
	fmt.Fprintf(&b, `"missed":%q,"grace_ms":%d}`, s.Missed, s.GraceMs)
	return b.Bytes()
}

// ParseSchedule reads a stored definition: ErrInvalidArgument for one of another v or that does
// not parse (a scheduler skips it, RWQ-SCHED-017). Members it does not know are ignored.
func ParseSchedule(definition []byte) (Schedule, error) {
	var d struct {
		V        *float64 `json:"v"`
		EveryMs  *int64   `json:"every_ms"`
		OffsetMs *int64   `json:"offset_ms"`
		GraceMs  *int64   `json:"grace_ms"`
		Cron     *string  `json:"cron"`
		TZ       *string  `json:"tz"`
		Missed   *string  `json:"missed"`
	}
	if err := json.Unmarshal(definition, &d); err != nil || d.V == nil || *d.V != 1 {
		return Schedule{}, invalid("the definition is not a version 1 JSON object (RWQ-SCHED-017)")
	}
	s := Schedule{Missed: MissedSkip, GraceMs: DefaultGraceMs}
	for _, m := range []struct {
		to   *int64
		from *int64
	}{{&s.EveryMs, d.EveryMs}, {&s.OffsetMs, d.OffsetMs}, {&s.GraceMs, d.GraceMs}} {
		if m.from != nil {
			*m.to = *m.from
		}
	}
	for _, m := range []struct {
		to   *string
		from *string
	}{{&s.Cron, d.Cron}, {&s.TZ, d.TZ}, {&s.Missed, d.Missed}} {
		if m.from != nil {
			*m.to = *m.from
		}
	}
	if d.TZ == nil && s.Cron != "" {
		s.TZ = "UTC" // the default zone of a stored definition
	}
	if d.EveryMs != nil && *d.EveryMs == 0 || d.Cron != nil && *d.Cron == "" {
		return Schedule{}, invalid("the definition has an every_ms of 0 or an empty cron (RWQ-SCHED-017)")
	}
	return s, s.Check()
}

// floorDiv is a/b rounded towards minus infinity (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// next is the least slot after afterMs; math.MaxInt64 when there is none.
func (w walk) next(afterMs int64) int64 {
	if w.cron == nil {
		return (floorDiv(afterMs-w.s.OffsetMs, w.s.EveryMs)+1)*w.s.EveryMs + w.s.OffsetMs
	}
	if slot := w.cron.NextSlot(max(afterMs, 0)); slot >= 0 {
		return slot
	}
	return math.MaxInt64
}

// latest is the greatest slot in (lowMs, highMs], or -1.
func (w walk) latest(lowMs, highMs int64) int64 {
	if w.cron == nil {
		if slot := floorDiv(highMs-w.s.OffsetMs, w.s.EveryMs)*w.s.EveryMs + w.s.OffsetMs; slot > lowMs {
			return slot
		}
		return -1
	}
	for window := int64(3_600_000); ; window *= 2 { // an hour, doubling: a long outage costs few steps
		start := max(lowMs, highMs-window)
		found := int64(-1)
		for slot := w.next(start); slot <= highMs; slot = w.next(slot) {
			found = slot
		}
		if found >= 0 || start == lowMs {
			return found
		}
	}
}

// due is the slots a scheduler offers at nowMs with watermark markMs (RWQ-SCHED-010): those
// after the watermark at most GraceMs late, oldest first, at most 100; under MissedOnce, when
// there is none such but a slot after the watermark, the latest of them.
func (w walk) due(markMs, nowMs int64) []int64 {
	var slots []int64
	for slot := w.next(max(markMs, nowMs-w.s.GraceMs-1)); slot <= nowMs && len(slots) < MaxFireSlots; slot = w.next(slot) {
		slots = append(slots, slot)
	}
	if len(slots) == 0 && w.s.Missed == MissedOnce {
		if late := w.latest(markMs, nowMs); late >= 0 {
			slots = append(slots, late)
		}
	}
	return slots
}

// NextSlots returns the count (1..100) slots of s after afterMs (0..10^15, server ms), in order;
// it does no I/O. A cron schedule walks only from instants before 9000-01-01T00:00Z: a call whose
// walk reaches that bound is refused with ErrInvalidArgument (RWQ-SCHED-019).
func NextSlots(s Schedule, afterMs int64, count int) ([]int64, error) {
	w, err := s.walk()
	if err != nil {
		return nil, err
	}
	if err := checkRange("after_ms", afterMs, 0, MaxSlotMs); err != nil {
		return nil, err
	}
	if err := checkRange("count", int64(count), 1, MaxFireSlots); err != nil {
		return nil, err
	}
	slots := make([]int64, 0, count)
	for after := afterMs; len(slots) < count; after = slots[len(slots)-1] {
		slot := w.next(after)
		if slot == math.MaxInt64 { // a cron walk from 9000-01-01T00:00Z or later (RWQ-SCHED-019)
			return nil, invalid(fmt.Sprintf("a cron schedule walks from after_ms in 0..%d, got %d (RWQ-SCHED-019)",
				MaxCronAfterMs-1, after))
		}
		slots = append(slots, slot)
	}
	return slots, nil
}

// StoredSchedule is a schedule as Redis holds it: its name, definition text (its SHA1 is Fire's
// digest), payload, watermark (the last slot fired) and the server time of its pause, if any.
type StoredSchedule struct {
	Name        string
	Definition  []byte
	Data        []byte
	LastFiredMs *int64
	PausedMs    *int64
}

// Digest is the SHA1 of the definition, in hex: what Fire checks the stored one against.
func (s StoredSchedule) Digest() string {
	sum := sha1.Sum(s.Definition)
	return hex.EncodeToString(sum[:])
}

// Schedule is the parsed definition (ErrInvalidArgument when it does not parse, RWQ-SCHED-017).
func (s StoredSchedule) Schedule() (Schedule, error) { return ParseSchedule(s.Definition) }

// ScheduleList is every schedule of a queue, by name, and the server's now when it was read.
type ScheduleList struct {
	NowMs     int64
	Schedules []StoredSchedule
}

// SlotOutcome is what Fire did with one slot; as JSON, the script's 1, 0, "old", "late", "early".
type SlotOutcome int

// The outcomes of a slot.
const (
	SlotAdded   SlotOutcome = iota // fired, and its item added
	SlotExisted                    // fired; an item, delayed or dead item with its id existed
	SlotOld                        // not after the watermark: fired before
	SlotLate                       // missed = skip, more than GraceMs before the server's now
	SlotEarly                      // after the server's now (and so is every later slot)
)

var slotOutcomeNames = [...]string{"1", "0", "old", "late", "early"}

func (o SlotOutcome) String() string { return slotOutcomeNames[o] }

// MarshalJSON writes the outcome as the fire script replies it.
func (o SlotOutcome) MarshalJSON() ([]byte, error) {
	if o <= SlotExisted {
		return []byte(o.String()), nil
	}
	return json.Marshal(o.String())
}

// Fired is what one Fire did: the server's now, the status ("ok"; "gone", "stale", "paused" or
// "corrupt", a watermark written by hand that is not decimal ms: nothing written), the watermark after the call, one outcome per slot offered, and the ids of
// the items it added.
type Fired struct {
	NowMs       int64
	Status      string
	LastFiredMs *int64
	Outcomes    []SlotOutcome
	Added       []string
}

func checkScheduleName(name string) error {
	if !scheduleName.MatchString(name) {
		return invalid("a schedule name must be 1..200 characters of A-Z a-z 0-9 _ . : -, starting with a letter or digit (RWQ-SCHED-001)")
	}
	return nil
}

// PutSchedule creates or replaces schedule name with the payload of every item it adds; true
// when it was created (its watermark is then the server's now: its first slot is its first
// after the call). Replacing keeps the watermark (RWQ-SCHED-013).
func (q *Queue) PutSchedule(ctx context.Context, name string, s Schedule, data []byte) (bool, error) {
	if err := checkScheduleName(name); err != nil {
		return false, err
	}
	if err := s.Check(); err != nil {
		return false, err
	}
	reply, err := q.eval(ctx, "schedule", q.one(), "put", name, s.definition(), data)
	if err != nil {
		return false, err
	}
	arr, _ := reply.([]any)
	if len(arr) != 2 {
		return false, unexpected("schedule put", reply)
	}
	return toInt(arr[0]) == 1, nil
}

// RemoveSchedule removes a schedule (the items it added stay); false when there was none.
func (q *Queue) RemoveSchedule(ctx context.Context, name string) (bool, error) {
	return q.changeSchedule(ctx, "remove", name)
}

// PauseSchedule pauses a schedule; false when there is none or it is paused already.
func (q *Queue) PauseSchedule(ctx context.Context, name string) (bool, error) {
	return q.changeSchedule(ctx, "pause", name)
}

// ResumeSchedule resumes a paused schedule: no slot of the pause fires (RWQ-SCHED-014); false
// when it was not paused.
func (q *Queue) ResumeSchedule(ctx context.Context, name string) (bool, error) {
	return q.changeSchedule(ctx, "resume", name)
}

func (q *Queue) changeSchedule(ctx context.Context, mode, name string) (bool, error) {
	if err := checkScheduleName(name); err != nil {
		return false, err
	}
	reply, err := q.eval(ctx, "schedule", q.one(), mode, name)
	return toInt(reply) == 1, err
}

// ms is a watermark or pause time as the scripts reply it: nil for "".
// msOrNil reads a watermark or pause time: nil when absent or not decimal ms (written by hand,
// RWQ-SCHED-021).
func msOrNil(v any) *int64 {
	s := toStr(v)
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

// Schedules lists every schedule of the queue by name, with the server's now of the last page.
func (q *Queue) Schedules(ctx context.Context) (ScheduleList, error) {
	found := map[string]StoredSchedule{}
	cursor, now := "0", int64(0)
	for {
		reply, err := q.eval(ctx, "schedule", q.one(), "list", cursor, scheduleCount)
		if err != nil {
			return ScheduleList{}, err
		}
		arr, _ := reply.([]any)
		if len(arr) != 3 {
			return ScheduleList{}, unexpected("schedule list", reply)
		}
		rows, _ := arr[2].([]any)
		for _, r := range rows {
			row := toStrs(r)
			if len(row) != 5 {
				return ScheduleList{}, unexpected("schedule list", reply)
			}
			found[row[0]] = StoredSchedule{row[0], []byte(row[1]), []byte(row[2]), msOrNil(row[3]), msOrNil(row[4])}
		}
		if now, cursor = toInt(arr[0]), toStr(arr[1]); cursor == "0" {
			break
		}
	}
	list := ScheduleList{NowMs: now, Schedules: make([]StoredSchedule, 0, len(found))}
	for _, s := range found {
		list.Schedules = append(list.Schedules, s)
	}
	sort.Slice(list.Schedules, func(i, j int) bool { return list.Schedules[i].Name < list.Schedules[j].Name })
	return list, nil
}

// Fire fires slots (1..100, strictly ascending, 0..10^15) of schedule name, computed from the
// definition whose SHA1 is digest, in one script call (RWQ-SCHED-008, -009). A call whose reply
// was lost is ErrRedis and is not sent again (RWQ-SCHED-011).
func (q *Queue) Fire(ctx context.Context, name, digest string, slots []int64) (Fired, error) {
	if err := checkScheduleName(name); err != nil {
		return Fired{}, err
	}
	if !sha1Hex.MatchString(digest) {
		return Fired{}, invalid("digest must be 40 lower-case hex digits (the SHA1 of the definition)")
	}
	if err := checkRange("the number of slots", int64(len(slots)), 1, MaxFireSlots); err != nil {
		return Fired{}, err
	}
	args := []any{name, digest}
	for i, slot := range slots {
		if err := checkRange("slot", slot, 0, MaxSlotMs); err != nil {
			return Fired{}, err
		}
		if i > 0 && slot <= slots[i-1] {
			return Fired{}, invalid("slots must be strictly ascending")
		}
		args = append(args, slot)
	}
	reply, err := q.eval(ctx, "fire", q.one(), args...)
	if err != nil {
		return Fired{}, err
	}
	arr, _ := reply.([]any)
	if len(arr) != 4 {
		return Fired{}, unexpected("fire", reply)
	}
	outcomes, _ := arr[3].([]any)
	if len(outcomes) > len(slots) {
		return Fired{}, unexpected("fire", reply)
	}
	f := Fired{NowMs: toInt(arr[0]), Status: toStr(arr[1]), LastFiredMs: msOrNil(arr[2]),
		Outcomes: make([]SlotOutcome, 0, len(slots)), Added: []string{}}
	for i, o := range outcomes {
		outcome := SlotOutcome(-1)
		switch o {
		case int64(1):
			outcome = SlotAdded
			f.Added = append(f.Added, name+"@"+strconv.FormatInt(slots[i], 10))
		case int64(0):
			outcome = SlotExisted
		case "old":
			outcome = SlotOld
		case "late":
			outcome = SlotLate
		case "early":
			outcome = SlotEarly
		}
		if outcome < 0 {
			return Fired{}, unexpected("fire", reply)
		}
		f.Outcomes = append(f.Outcomes, outcome)
	}
	return f, nil
}

// PutSchedule is refused on a sharded queue (RWQ-SCHED-016): a slot's id routes to the shard of
// its hash, while its schedule's watermark is one key, and no script call spans two shards.
func (s *ShardedQueue) PutSchedule(ctx context.Context, name string, sched Schedule, data []byte) (bool, error) {
	return false, invalid("schedules are not supported on a sharded queue yet (RWQ-SCHED-016)")
}
