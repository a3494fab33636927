package automation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // IANA zones on hosts without a zoneinfo database

	"github.com/google/uuid"
	"github.com/robfig/cron/v3"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/issue"
)

// Scheduled rules (docs/automation.md#scheduled-rules).
const (
	// TriggerScheduled runs a rule at the times of its schedule, on the issues its
	// filter matches, instead of on an event.
	TriggerScheduled = "SCHEDULED"
	// MinScheduleInterval is the least time between two runs a schedule may ask for.
	MinScheduleInterval = 5 * time.Minute
	// MaxRunIssues is how many issues one run acts on; a filter matching more marks the
	// run truncated, the issues past it (in the list's order) wait for the next run.
	MaxRunIssues = 1000
	// DefaultTimezone is a scheduled rule's zone when it names none.
	DefaultTimezone = "UTC"
	// MaxSchedule bounds the schedule text.
	MaxSchedule = 100
)

// Schedule is a parsed cron schedule in its zone.
type Schedule struct {
	spec cron.Schedule
	loc  *time.Location
	// fixedHours: the schedule names hours (not every hour), so a wall-clock time a
	// daylight-saving change skips or repeats is run once, at the change or the first
	// time (cron's usual rule); a schedule of every hour follows the clock.
	fixedHours bool
}

// errSchedule* are the reasons ParseSchedule refuses a schedule.
var (
	errScheduleSyntax   = errors.New("not a 5-field cron expression or @hourly, @daily, @weekly, @monthly, @yearly")
	errScheduleTooOften = errors.New("runs more often than every 5 minutes")
	errTimezone         = errors.New("unknown time zone")
)

var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseSchedule reads a 5-field cron expression (or a descriptor such as @daily; not
// @every, and no seconds field) in the IANA zone tz ("" is UTC).
func ParseSchedule(spec, tz string) (*Schedule, error) {
	loc, err := loadZone(tz)
	if err != nil {
		return nil, err
	}
	spec = strings.TrimSpace(spec)
	if spec == "" || strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") ||
		strings.HasPrefix(spec, "@every") || len(spec) > MaxSchedule {
		return nil, errScheduleSyntax
	}
	parsed, err := cronParser.Parse(spec)
	if err != nil {
		return nil, errScheduleSyntax
	}
	s, ok := parsed.(*cron.SpecSchedule)
	if !ok {
		return nil, errScheduleSyntax
	}
	if minGap(s) < MinScheduleInterval {
		return nil, errScheduleTooOften
	}
	const allHours = 1<<24 - 1
	return &Schedule{spec: s, loc: loc, fixedHours: s.Hour&allHours != allHours}, nil
}

func loadZone(tz string) (*time.Location, error) {
	if tz == "" {
		tz = DefaultTimezone
	}
	if tz == "Local" || len(tz) > 64 {
		return nil, errTimezone
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, errTimezone
	}
	return loc, nil
}

// minGap is the shortest time between two runs of s: between two minutes of an hour,
// and across the hour when two following hours are both in the schedule.
func minGap(s *cron.SpecSchedule) time.Duration {
	var minutes []int
	for m := 0; m < 60; m++ {
		if s.Minute&(1<<uint(m)) != 0 {
			minutes = append(minutes, m)
		}
	}
	gap := 60
	for i := 1; i < len(minutes); i++ {
		gap = min(gap, minutes[i]-minutes[i-1])
	}
	consecutive := false // two following hours (23 and 0 count)
	for h := 0; h < 24; h++ {
		if s.Hour&(1<<uint(h)) != 0 && s.Hour&(1<<uint((h+1)%24)) != 0 {
			consecutive = true
		}
	}
	if consecutive && len(minutes) > 0 {
		gap = min(gap, 60-minutes[len(minutes)-1]+minutes[0])
	}
	return time.Duration(gap) * time.Minute
}

// Next is the first run of s strictly after t. With fixed hours, a time a
// spring-forward change skips runs at the change, and a time a fall-back change
// repeats runs the first time only.
func (s *Schedule) Next(t time.Time) time.Time {
	t = t.In(s.loc)
	n := s.spec.Next(t)
	if n.IsZero() || !s.fixedHours {
		return n.UTC()
	}
	// A spring-forward change between t and n whose skipped hour held a run.
	_, offT := t.Zone()
	if _, offN := n.Zone(); offN > offT {
		change := transition(t, n)
		old := time.FixedZone("", offT)
		skipped := time.Duration(offN-offT) * time.Second
		if m := s.spec.Next(change.Add(-time.Second).In(old)); m.Before(change.Add(skipped)) && change.After(t) {
			return change.UTC()
		}
	}
	// The second time of a wall-clock time a fall-back change repeats: its first time
	// ran (or was due before t).
	for i := 0; i < 4 && s.repeated(n); i++ {
		n = s.spec.Next(n)
	}
	return n.UTC()
}

// repeated reports whether n is the second time of its wall-clock time, which a
// fall-back change within the three hours before it repeats.
func (s *Schedule) repeated(n time.Time) bool {
	n = n.In(s.loc)
	_, offN := n.Zone()
	_, offEarlier := n.Add(-3 * time.Hour).Zone()
	if offEarlier <= offN {
		return false
	}
	first := n.Add(-time.Duration(offEarlier-offN) * time.Second).In(s.loc)
	const wall = "2006-01-02 15:04"
	return first.Format(wall) == n.Format(wall)
}

// transition finds the instant of the zone change in (a, b] (a and b differ in offset).
func transition(a, b time.Time) time.Time {
	_, offA := a.Zone()
	for b.Sub(a) > time.Second {
		mid := a.Add(b.Sub(a) / 2)
		if _, off := mid.Zone(); off == offA {
			a = mid
		} else {
			b = mid
		}
	}
	return b.Truncate(time.Second)
}

// checkSchedule validates the members of a scheduled rule (schedule, timezone,
// filter) and stores them on r; on a rule of another trigger they must be absent.
func checkSchedule(in RuleInput, r *Rule, project bool, ps *problems) {
	if in.TriggerType != TriggerScheduled {
		for _, m := range []struct {
			field string
			set   bool
		}{{"schedule", in.Schedule != nil}, {"timezone", in.Timezone != nil}, {"filter", hasJSON(in.Filter)}} {
			if m.set {
				ps.add(m.field, "SCHEDULED_ONLY", "field.AUTOMATION_SCHEDULED_ONLY")
			}
		}
		return
	}
	if !project {
		ps.add("triggerType", "SCHEDULED_PROJECT", "field.AUTOMATION_SCHEDULED_PROJECT")
	}
	if hasJSON(in.TriggerPayload) {
		ps.add("triggerPayload", "SCHEDULED_FILTER", "field.AUTOMATION_SCHEDULED_FILTER")
	}
	tz := DefaultTimezone
	if in.Timezone != nil && *in.Timezone != "" {
		tz = *in.Timezone
	}
	if _, err := loadZone(tz); err != nil {
		ps.add("timezone", "TIMEZONE", "field.AUTOMATION_TIMEZONE")
	}
	r.Timezone = &tz
	switch {
	case in.Schedule == nil || strings.TrimSpace(*in.Schedule) == "":
		ps.add("schedule", "REQUIRED", "field.AUTOMATION_REQUIRED")
	default:
		spec := strings.TrimSpace(*in.Schedule)
		r.Schedule = &spec
		if _, err := ParseSchedule(spec, DefaultTimezone); errors.Is(err, errScheduleTooOften) {
			ps.add("schedule", "SCHEDULE_TOO_OFTEN", "field.AUTOMATION_SCHEDULE_TOO_OFTEN", "min", "5")
		} else if err != nil {
			ps.add("schedule", "SCHEDULE", "field.AUTOMATION_SCHEDULE")
		}
	}
	r.Filter = checkFilter(in.Filter, ps)
}

func hasJSON(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s != "" && s != "null"
}

// checkFilter reads a scheduled rule's filter: an object of the issue list's query
// parameters (strings; true/false for its flags; cf a string or an array of them),
// checked by the list's own parser. It returns the JSON text to store (nil: none).
func checkFilter(raw json.RawMessage, ps *problems) *string {
	if !hasJSON(raw) {
		return nil
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil || members == nil {
		ps.add("filter", "FILTER", "field.AUTOMATION_FILTER_OBJECT")
		return nil
	}
	values := map[string][]string{}
	for _, k := range sortedKeys(members) {
		field := "filter." + k
		if !valid(issue.FilterParams, k) {
			ps.add(field, "UNKNOWN_KEY", "field.AUTOMATION_FILTER_KEY", "keys", strings.Join(issue.FilterParams, ", "))
			continue
		}
		var s string
		var b bool
		var list []string
		switch {
		case json.Unmarshal(members[k], &s) == nil:
			values[k] = []string{s}
		case json.Unmarshal(members[k], &b) == nil:
			values[k] = []string{map[bool]string{true: "true", false: "false"}[b]}
		case k == "cf" && json.Unmarshal(members[k], &list) == nil:
			values[k] = list
		default:
			ps.add(field, "WRONG_TYPE", "field.AUTOMATION_STRING")
		}
	}
	if len(*ps) > 0 {
		for _, p := range *ps {
			if strings.HasPrefix(p.Field, "filter") {
				return nil
			}
		}
	}
	if _, err := issue.ParseFilter(filterQuery(values), uuid.Nil); err != nil {
		var fe *issue.FilterError
		if errors.As(err, &fe) {
			field := "filter." + fe.Field
			switch fe.Reason {
			case "INVALID_ENUM":
				ps.add(field, CodeEnum, "field.ENUM", "values", fe.Values, "value", values[fe.Field][0])
			case "INVALID_UUID":
				ps.add(field, "INVALID_UUID", "field.AUTOMATION_UUID")
			case "TOO_MANY_FILTERS":
				ps.add(field, "TOO_MANY", "field.AUTOMATION_TOO_MANY", "max", fe.Max)
			default:
				ps.add(field, "FILTER_VALUE", "field.AUTOMATION_FILTER_VALUE")
			}
		}
		return nil
	}
	text, _ := json.Marshal(values) // canonical: keys sorted, every value a list
	s := string(text)
	return &s
}

// filterQuery serves stored filter values to issue.ParseFilter.
func filterQuery(values map[string][]string) issue.FilterQuery {
	return issue.FilterQuery{
		Get: func(name string) string {
			if v := values[name]; len(v) > 0 {
				return v[0]
			}
			return ""
		},
		All: func(name string) []string { return values[name] },
	}
}

// decodeFilter reads a stored filter (checkFilter's text).
func decodeFilter(text *string) map[string][]string {
	out := map[string][]string{}
	if text != nil {
		_ = json.Unmarshal([]byte(*text), &out)
	}
	return out
}

// FilterObject is a stored filter as the rule's reply shows it: each parameter's value,
// cf as a list.
func FilterObject(text *string) map[string]any {
	if text == nil {
		return nil
	}
	out := map[string]any{}
	for k, v := range decodeFilter(text) {
		if k == "cf" {
			out[k] = v
		} else if len(v) > 0 {
			out[k] = v[0]
		}
	}
	return out
}

// filterJSON is stored filter text as the object a request sends (FilterObject's form).
func filterJSON(text string) json.RawMessage {
	raw, _ := json.Marshal(FilterObject(&text))
	return raw
}

// syncSchedule keeps the rule's row in automation_schedules: the next slot after now
// for a SCHEDULED rule (recomputed only when reset: a new rule, a changed schedule or
// zone, a rule turned on, so an edit of its actions keeps a slot already due), none
// for the others.
func syncSchedule(ctx context.Context, tx bun.Tx, id uuid.UUID, r *Rule, reset bool) error {
	if r.TriggerType != TriggerScheduled || r.Schedule == nil {
		if _, err := tx.ExecContext(ctx, "DELETE FROM automation_schedules WHERE rule_id = ?", id); err != nil {
			return fmt.Errorf("delete schedule: %w", err)
		}
		return nil
	}
	s, err := ParseSchedule(*r.Schedule, deref(r.Timezone))
	if err != nil {
		return fmt.Errorf("schedule of rule %s: %w", id, err)
	}
	next := s.Next(time.Now())
	q := `INSERT INTO automation_schedules (rule_id, next_run_at) VALUES (?, ?) ON CONFLICT (rule_id) DO NOTHING`
	if reset {
		q = `INSERT INTO automation_schedules (rule_id, next_run_at) VALUES (?, ?)
			ON CONFLICT (rule_id) DO UPDATE SET next_run_at = EXCLUDED.next_run_at`
	}
	if _, err := tx.ExecContext(ctx, q, id, next); err != nil {
		return fmt.Errorf("write schedule: %w", err)
	}
	return nil
}
