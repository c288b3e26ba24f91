package rwq

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // zone data where the system has none

	"github.com/robfig/cron/v3"
)

// Cron schedules of profile periodic (SPEC §23, "Cron: the dialect and the slot set"). ParseCron
// checks an expression with one regular expression per field, so robfig/cron only reads the part
// of cron every library reads alike, and takes the field sets from its SpecSchedule; NextSlot walks
// local dates by SPEC's rule, not by robfig's Next (which skips a wall time in a DST gap and fires
// a repeated one twice). conformance/vectors/cron.json holds the vectors every client reproduces.

const (
	// MaxCronBytes is the longest cron expression (RWQ-SCHED-001).
	MaxCronBytes = 200
	// MaxZoneBytes is the longest zone name (RWQ-SCHED-001).
	MaxZoneBytes = 64
	// cronNeverDays: an expression must match a date among this many from 2000-01-01
	// (RWQ-SCHED-007); the longest wait of one that matches at all is 2,922 days (2096 to 2104).
	cronNeverDays = 3000
	// MaxCronAfterMs bounds NextSlot's argument: instants in 0..9000-01-01T00:00Z (exclusive), ms.
	MaxCronAfterMs = 221_845_392_000_000
	dayMs          = 86_400_000
)

var cronMacros = map[string]string{
	"@hourly":   "0 * * * *",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@weekly":   "0 0 * * 0",
	"@monthly":  "0 0 1 * *",
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
}

type cronField struct {
	name            string
	least, greatest int
	names           []string
	pattern         *regexp.Regexp
}

func cronPattern(value, step string, names []string) *regexp.Regexp {
	value = strings.Join(append([]string{value}, names...), "|")
	item := fmt.Sprintf(`(?:\*(?:/(?:%[2]s))?|(?:%[1]s)-(?:%[1]s)(?:/(?:%[2]s))?|(?:%[1]s))`, value, step)
	return regexp.MustCompile(`^(?i:` + item + `(?:,` + item + `)*)$`)
}

var (
	cronMonths = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
	cronDays   = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}
	cronFields = [5]cronField{
		{"minute", 0, 59, nil, cronPattern(`[0-5]?[0-9]`, `0?[1-9]|[1-5][0-9]|60`, nil)},
		{"hour", 0, 23, nil, cronPattern(`[01]?[0-9]|2[0-3]`, `0?[1-9]|1[0-9]|2[0-4]`, nil)},
		{"day-of-month", 1, 31, nil, cronPattern(`0?[1-9]|[12][0-9]|3[01]`, `0?[1-9]|[12][0-9]|3[01]`, nil)},
		{"month", 1, 12, cronMonths, cronPattern(`0?[1-9]|1[0-2]`, `0?[1-9]|1[0-2]`, cronMonths)},
		{"day-of-week", 0, 6, cronDays, cronPattern(`0?[0-6]`, `0?[1-7]`, cronDays)},
	}
	cronSeparator = regexp.MustCompile(`[ \t]+`)
	zoneName      = regexp.MustCompile(`^[A-Z][A-Za-z0-9_+-]*(?:/[A-Z][A-Za-z0-9_+-]*)*$`)
)

// CronSchedule is a parsed cron expression and zone: the slot set of SPEC §23.
type CronSchedule struct {
	Expr string
	TZ   string
	// bit i set: value i is in the field
	minutes, hours, doms, months, dows uint64
	hourStar                           bool // the hour field's text is exactly "*"
	orDays                             bool // neither day-of-month nor day-of-week is exactly "*"
	loc                                *time.Location
}

func (f cronField) value(text string) int {
	lower := strings.ToLower(text)
	for i, name := range f.names {
		if name == lower {
			return f.least + i
		}
	}
	n, _ := strconv.Atoi(text) // the pattern admits only digits here
	return n
}

// cronFieldTexts returns the five field texts of a valid expression (a macro expanded).
func cronFieldTexts(expr string) ([]string, error) {
	if len(expr) > MaxCronBytes || strings.IndexFunc(expr, func(r rune) bool { return r > 0x7f }) >= 0 {
		return nil, invalid(fmt.Sprintf("cron expression must be 1..%d ASCII bytes (RWQ-SCHED-001)", MaxCronBytes))
	}
	text := expr
	if expanded, ok := cronMacros[expr]; ok {
		text = expanded
	}
	texts := cronSeparator.Split(text, -1)
	for _, t := range texts {
		if t == "" {
			texts = nil
		}
	}
	if len(texts) != 5 {
		return nil, invalid(fmt.Sprintf("cron expression %s must be five fields (minute hour day-of-month "+
			"month day-of-week) separated by spaces or tabs, or one of @hourly, @daily, @midnight, @weekly, "+
			"@monthly, @yearly, @annually (RWQ-SCHED-004)", strconv.Quote(expr)))
	}
	for i, f := range cronFields {
		if !f.pattern.MatchString(texts[i]) {
			names := ""
			if f.names != nil {
				names = " or names"
			}
			return nil, invalid(fmt.Sprintf("cron %s field %s is outside the dialect: numbers %d-%d%s, *, a-b, "+
				"*/n, a-b/n (n at most %d) and lists of them (RWQ-SCHED-004)",
				f.name, strconv.Quote(texts[i]), f.least, f.greatest, names, f.greatest-f.least+1))
		}
		for _, item := range strings.Split(texts[i], ",") {
			start, end, dash := strings.Cut(strings.SplitN(item, "/", 2)[0], "-")
			if dash && f.value(start) > f.value(end) {
				return nil, invalid(fmt.Sprintf("cron %s range %s starts after its end (no wrap-around) (RWQ-SCHED-004)",
					f.name, strconv.Quote(item)))
			}
		}
	}
	return texts, nil
}

func loadZone(tz string) (*time.Location, error) {
	// The pattern refuses what some systems keep beside the zones (localtime, posix/...); Local is
	// Go's process zone, Factory tzdata's zone for an unset clock (unknown to ICU).
	bad := len(tz) > MaxZoneBytes || !zoneName.MatchString(tz) || tz == "Local" || tz == "Factory"
	var loc *time.Location
	if !bad {
		var err error
		loc, err = time.LoadLocation(tz)
		bad = err != nil
	}
	if bad {
		shown := tz
		if len(shown) > MaxZoneBytes+1 {
			shown = shown[:MaxZoneBytes+1]
		}
		return nil, invalid(fmt.Sprintf("time zone must be an IANA zone name (such as UTC or Europe/London) "+
			"of at most %d bytes, got %s (RWQ-SCHED-001)", MaxZoneBytes, strconv.Quote(shown)))
	}
	return loc, nil
}

// ParseCron checks and expands a cron expression in zone tz (an IANA name; "UTC" for UTC). The
// error wraps ErrInvalidArgument (RWQ-SCHED-001, -004, -007).
func ParseCron(expr, tz string) (*CronSchedule, error) {
	texts, err := cronFieldTexts(expr)
	if err != nil {
		return nil, err
	}
	loc, err := loadZone(tz)
	if err != nil {
		return nil, err
	}
	parsed, err := cron.ParseStandard(strings.Join(texts, " "))
	if err != nil { // the grammar check admits only what robfig/cron v3 reads
		return nil, invalid(fmt.Sprintf("cron expression %s: %v (RWQ-SCHED-004)", strconv.Quote(expr), err))
	}
	spec, ok := parsed.(*cron.SpecSchedule)
	if !ok {
		return nil, invalid(fmt.Sprintf("cron expression %s is not a field schedule (RWQ-SCHED-004)", strconv.Quote(expr)))
	}
	const star = uint64(1) << 63 // robfig's star bit; "restricted" is decided from the text
	s := &CronSchedule{
		Expr: expr, TZ: tz, loc: loc,
		minutes: spec.Minute &^ star, hours: spec.Hour &^ star, doms: spec.Dom &^ star,
		months: spec.Month &^ star, dows: spec.Dow &^ star,
		hourStar: texts[1] == "*", orDays: texts[2] != "*" && texts[4] != "*",
	}
	first := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	for n := 0; n < cronNeverDays; n++ {
		if s.matchesDay(first.AddDate(0, 0, n)) {
			return s, nil
		}
	}
	return nil, invalid(fmt.Sprintf("cron expression %s matches no day (such as 30 February) (RWQ-SCHED-007)",
		strconv.Quote(expr)))
}

// matchesDay reports whether local date d (a UTC midnight standing for the date) has slots: its
// month matches, and its day of month or of week (either when both are restricted, else both)
// (RWQ-SCHED-005).
func (s *CronSchedule) matchesDay(d time.Time) bool {
	if s.months&(1<<uint(d.Month())) == 0 {
		return false
	}
	dom, dow := s.doms&(1<<uint(d.Day())) != 0, s.dows&(1<<uint(d.Weekday())) != 0
	if s.orDays {
		return dom || dow
	}
	return dom && dow
}

func (s *CronSchedule) offsetAt(unix int64) int64 {
	_, offset := time.Unix(unix, 0).In(s.loc).Zone()
	return int64(offset)
}

// instants appends the slots of wall time w (Unix seconds of the wall time read as UTC) to out
// (RWQ-SCHED-006): each offset in force a day before or a day after w that reads w as an instant
// having that offset is an occurrence; none is a gap, read with the offset of the day before
// (the offset in force before the transition).
func (s *CronSchedule) instants(w int64, out []int64) []int64 {
	before, after := s.offsetAt(w-86400), s.offsetAt(w+86400)
	first, second := int64(0), int64(0)
	occurrences := 0
	for _, offset := range []int64{before, after} {
		if u := w - offset; s.offsetAt(u) == offset && (occurrences == 0 || u != first) {
			if occurrences == 0 {
				first = u
			} else {
				second = u
			}
			occurrences++
		}
	}
	switch {
	case occurrences == 0 && !s.hourStar:
		out = append(out, (w-before)*1000)
	case occurrences == 1:
		out = append(out, first*1000)
	case occurrences == 2:
		if second < first {
			first, second = second, first
		}
		out = append(out, first*1000)
		if s.hourStar {
			out = append(out, second*1000)
		}
	}
	return out
}

// NextSlot returns the least slot greater than afterMs (ms since the epoch, in
// 0..MaxCronAfterMs-1; outside it, -1).
func (s *CronSchedule) NextSlot(afterMs int64) int64 {
	if afterMs < 0 || afterMs >= MaxCronAfterMs {
		return -1
	}
	local := time.UnixMilli(afterMs).In(s.loc)
	// a gap can move a slot of the day before past midnight
	d := time.Date(local.Year(), local.Month(), local.Day()-1, 0, 0, 0, 0, time.UTC)
	best := int64(-1)
	var found []int64
	for n := 0; n < cronNeverDays+370; n++ {
		midnight := d.Unix()
		if best >= 0 && best <= midnight*1000-dayMs {
			return best // every slot of d and later dates is after best
		}
		if s.matchesDay(d) {
			for h := int64(0); h < 24; h++ {
				if s.hours&(1<<uint(h)) == 0 {
					continue
				}
				for m := int64(0); m < 60; m++ {
					w := midnight + h*3600 + m*60
					if s.minutes&(1<<uint(m)) == 0 || w*1000+dayMs <= afterMs {
						continue // not a minute of the field, or every instant of it is at or before afterMs
					}
					found = s.instants(w, found[:0])
					for _, instant := range found {
						if instant > afterMs && (best < 0 || instant < best) {
							best = instant
						}
					}
				}
			}
		}
		d = d.AddDate(0, 0, 1)
	}
	return best
}
