package automation

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestScheduleNextAcrossDST: a schedule runs at its wall-clock time in its zone, which
// moves in UTC with daylight saving; with fixed hours, a time a spring-forward change
// skips runs at the change and a time a fall-back change repeats runs once; a
// schedule of every hour follows the clock.
func TestScheduleNextAcrossDST(t *testing.T) {
	t.Parallel()
	utc := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		require.NoError(t, err)
		return v
	}
	cases := []struct {
		spec, tz, after string
		want            []string
	}{
		// 09:00 New York: 14:00Z in winter, 13:00Z after the change of 2026-03-08.
		{"0 9 * * *", "America/New_York", "2026-03-06T15:00:00Z",
			[]string{"2026-03-07T14:00:00Z", "2026-03-08T13:00:00Z", "2026-03-09T13:00:00Z"}},
		// Berlin's fall-back change of 2026-10-25: 09:00 is 07:00Z, then 08:00Z.
		{"0 9 * * *", "Europe/Berlin", "2026-10-24T08:00:00Z",
			[]string{"2026-10-25T08:00:00Z", "2026-10-26T08:00:00Z"}},
		// 02:30 does not exist in Berlin on 2026-03-29: the run is at the change, 03:00 CEST (01:00Z).
		{"30 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z",
			[]string{"2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"}},
		// 02:30 happens twice in Berlin on 2026-10-25: once, the first time (00:30Z).
		{"30 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z",
			[]string{"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}},
		// Every hour at :30 follows the clock: the repeated hour runs twice.
		{"30 * * * *", "Europe/Berlin", "2026-10-25T00:00:00Z",
			[]string{"2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z", "2026-10-25T02:30:00Z"}},
		// @daily in UTC.
		{"@daily", "", "2026-01-01T00:00:00Z", []string{"2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z"}},
	}
	for _, c := range cases {
		s, err := ParseSchedule(c.spec, c.tz)
		require.NoError(t, err, c.spec)
		at := utc(c.after)
		for _, w := range c.want {
			at = s.Next(at)
			require.Equal(t, utc(w), at, "%s in %q after %s", c.spec, c.tz, c.after)
			require.Equal(t, time.UTC, at.Location())
		}
	}
}

// TestParseScheduleRefuses: seconds fields, @every, a zone prefix, nonsense, schedules
// more often than every five minutes (within an hour or across two following hours)
// and unknown zones are refused; five minutes apart is allowed.
func TestParseScheduleRefuses(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{"0 0 9 * * *", "@every 10m", "CRON_TZ=UTC 0 9 * * *", "TZ=UTC 0 9 * * *", "nonsense", "",
		"60 * * * *"} {
		_, err := ParseSchedule(spec, "")
		require.ErrorIs(t, err, errScheduleSyntax, spec)
	}
	for _, spec := range []string{"* * * * *", "*/2 * * * *", "0,4 9 * * *", "0,58 8,9 * * *", "0,57 23,0 * * *"} {
		_, err := ParseSchedule(spec, "")
		require.Error(t, err, spec)
	}
	for _, spec := range []string{"0,4 9 * * *", "0,58 8,9 * * *", "0,57 23,0 * * *"} {
		_, err := ParseSchedule(spec, "")
		require.ErrorIs(t, err, errScheduleTooOften, spec)
	}
	for _, spec := range []string{"*/5 * * * *", "0,58 9 * * *", "0,55 * * * *", "@hourly", "@weekly", "15 14 1 * *"} {
		_, err := ParseSchedule(spec, "Europe/Berlin")
		require.NoError(t, err, spec)
	}
	for _, tz := range []string{"Mars/Olympus", "Local", "europe/berlin"} {
		_, err := ParseSchedule("@daily", tz)
		require.ErrorIs(t, err, errTimezone, tz)
	}
}
