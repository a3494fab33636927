package servicedesk

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/store"
)

func berlin(t *testing.T, s string) time.Time {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	at, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
	require.NoError(t, err)
	return at
}

func sched(t *testing.T, country *string, own ...string) *schedule {
	t.Helper()
	s, err := newSchedule(&store.SLACalendar{Timezone: "Europe/Berlin", WorkingDays: []int16{1, 2, 3, 4, 5},
		WorkStart: 9 * 60, WorkEnd: 17 * 60, HolidaysCountry: country, Holidays: own})
	require.NoError(t, err)
	return s
}

// TestAddBusinessMinutes: business time skips nights, weekends, the country's public
// holidays, the desk's own holidays and pauses, in the calendar's zone.
func TestAddBusinessMinutes(t *testing.T) {
	de := "DE"
	fri := berlin(t, "2026-05-22 16:00") // Friday before Whit Monday (Pfingstmontag, 25 May)
	cases := []struct {
		name   string
		s      *schedule
		start  time.Time
		n      int
		pauses []interval
		want   time.Time
	}{
		{"same day", sched(t, nil), berlin(t, "2026-05-20 09:30"), 60, nil, berlin(t, "2026-05-20 10:30")},
		{"before opening", sched(t, nil), berlin(t, "2026-05-20 06:00"), 60, nil, berlin(t, "2026-05-20 10:00")},
		{"over the weekend", sched(t, nil), fri, 240, nil, berlin(t, "2026-05-25 12:00")},
		{"over the weekend and Whit Monday", sched(t, &de), fri, 240, nil, berlin(t, "2026-05-26 12:00")},
		{"own holiday", sched(t, nil, "2026-05-25", "2026-05-26"), fri, 240, nil, berlin(t, "2026-05-27 12:00")},
		{"ends at closing", sched(t, nil), berlin(t, "2026-05-20 16:00"), 60, nil, berlin(t, "2026-05-20 17:00")},
		{"summer time starts", sched(t, nil), berlin(t, "2026-03-27 16:00"), 120, nil, berlin(t, "2026-03-30 10:00")},
		{"around the clock", nil, fri, 240, nil, berlin(t, "2026-05-22 20:00")},
		{"paused two hours", nil, fri, 240,
			[]interval{{berlin(t, "2026-05-22 17:00"), berlin(t, "2026-05-22 19:00")}}, berlin(t, "2026-05-22 22:00")},
		{"paused two business hours", sched(t, &de), fri, 240,
			[]interval{{berlin(t, "2026-05-26 09:00"), berlin(t, "2026-05-26 11:00")}}, berlin(t, "2026-05-26 14:00")},
		{"pause outside business hours changes nothing", sched(t, &de), fri, 240,
			[]interval{{berlin(t, "2026-05-23 09:00"), berlin(t, "2026-05-24 11:00")}}, berlin(t, "2026-05-26 12:00")},
		{"pause before the start ignored", nil, fri, 60,
			[]interval{{berlin(t, "2026-05-21 09:00"), berlin(t, "2026-05-21 11:00")}}, berlin(t, "2026-05-22 17:00")},
	}
	for _, c := range cases {
		got, ok := addBusiness(c.s, c.start, c.n, c.pauses)
		require.True(t, ok, c.name)
		require.Equal(t, c.want.UTC(), got.UTC(), c.name)
	}

	// Paused now: no due time while the pause lasts.
	_, ok := addBusiness(sched(t, nil), fri, 240, []interval{{from: berlin(t, "2026-05-22 16:30")}})
	require.False(t, ok)
	// Started while paused: the same.
	_, ok = addBusiness(nil, fri, 240, []interval{{}})
	require.False(t, ok)
	// Ten years' worth of minutes: bounded, no answer rather than a long loop.
	_, ok = addBusiness(sched(t, nil), fri, 10*365*24*60, nil)
	require.False(t, ok)
	// Christmas in Germany: 24 Dec 2026 is a Thursday, 25/26 public holidays.
	got, ok := addBusiness(sched(t, &de), berlin(t, "2026-12-24 16:00"), 120, nil)
	require.True(t, ok)
	require.Equal(t, berlin(t, "2026-12-28 10:00").UTC(), got.UTC())
}

func TestPausesFromHistory(t *testing.T) {
	wait, prog := uuid.UUID{1}, uuid.UUID{2}
	at := func(h int) time.Time { return time.Date(2026, 5, 20, h, 0, 0, 0, time.UTC) }
	pol := &timedPolicy{}
	pol.pause = map[uuid.UUID]bool{wait: true}
	moves := []statusMove{{StatusID: prog, At: at(1)}, {StatusID: wait, At: at(2)}, {StatusID: prog, At: at(4)},
		{StatusID: wait, At: at(6)}}
	require.Equal(t, []interval{{at(2), at(4)}, {from: at(6)}}, pausesOf(pol, wait, moves))
	require.Equal(t, []interval{{}}, pausesOf(pol, wait, nil), "never moved, in a pause status")
	require.Nil(t, pausesOf(pol, prog, nil))
}
