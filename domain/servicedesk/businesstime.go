package servicedesk

import (
	"fmt"
	"sort"
	"time"
	// The IANA zone database in the binary: a calendar's time zone, checked when it is
	// written, loads the same wherever the server runs (an image without zoneinfo too).
	_ "time/tzdata"

	"github.com/rickar/cal/v2"
	"github.com/rickar/cal/v2/ar"
	"github.com/rickar/cal/v2/at"
	"github.com/rickar/cal/v2/be"
	"github.com/rickar/cal/v2/bg"
	"github.com/rickar/cal/v2/br"
	"github.com/rickar/cal/v2/ca"
	"github.com/rickar/cal/v2/ch"
	"github.com/rickar/cal/v2/cz"
	"github.com/rickar/cal/v2/de"
	"github.com/rickar/cal/v2/dk"
	"github.com/rickar/cal/v2/es"
	"github.com/rickar/cal/v2/fr"
	"github.com/rickar/cal/v2/gb"
	"github.com/rickar/cal/v2/gr"
	"github.com/rickar/cal/v2/hr"
	"github.com/rickar/cal/v2/ie"
	"github.com/rickar/cal/v2/it"
	"github.com/rickar/cal/v2/lt"
	"github.com/rickar/cal/v2/lv"
	"github.com/rickar/cal/v2/mw"
	"github.com/rickar/cal/v2/nc"
	"github.com/rickar/cal/v2/nl"
	"github.com/rickar/cal/v2/no"
	"github.com/rickar/cal/v2/nz"
	"github.com/rickar/cal/v2/pl"
	"github.com/rickar/cal/v2/ro"
	"github.com/rickar/cal/v2/ru"
	"github.com/rickar/cal/v2/se"
	"github.com/rickar/cal/v2/si"
	"github.com/rickar/cal/v2/sk"
	"github.com/rickar/cal/v2/ua"
	"github.com/rickar/cal/v2/us"
	"github.com/rickar/cal/v2/za"
	"github.com/taskweave/taskweave/store"
)

// holidayCountries are the countries whose national public holidays a calendar may
// take (holidaysCountry): the ISO 3166 codes github.com/rickar/cal/v2 has a national
// list for.
var holidayCountries = map[string][]*cal.Holiday{
	"AR": ar.Holidays,
	"AT": at.Holidays,
	"BE": be.Holidays,
	"BG": bg.Holidays,
	"BR": br.Holidays,
	"CA": ca.Holidays,
	"CH": ch.Holidays,
	"CZ": cz.Holidays,
	"DE": de.Holidays,
	"DK": dk.Holidays,
	"ES": es.Holidays,
	"FR": fr.Holidays,
	"GB": gb.Holidays,
	"GR": gr.Holidays,
	"HR": hr.Holidays,
	"IE": ie.Holidays,
	"IT": it.Holidays,
	"LT": lt.Holidays,
	"LV": lv.Holidays,
	"MW": mw.Holidays,
	"NC": nc.Holidays,
	"NL": nl.Holidays,
	"NO": no.Holidays,
	"NZ": nz.Holidays,
	"PL": pl.Holidays,
	"RO": ro.Holidays,
	"RU": ru.Holidays,
	"SE": se.Holidays,
	"SI": si.Holidays,
	"SK": sk.Holidays,
	"UA": ua.Holidays,
	"US": us.Holidays,
	"ZA": za.Holidays,
}

// HolidayCountries lists the codes holidaysCountry accepts, sorted.
func HolidayCountries() []string {
	out := make([]string, 0, len(holidayCountries))
	for c := range holidayCountries {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// ValidHolidayCountry says whether c is a code holidaysCountry accepts.
func ValidHolidayCountry(c string) bool {
	_, ok := holidayCountries[c]
	return ok
}

// Bounds of the business-time search: how many days one search for the next working
// window looks ahead, and how many windows one addition walks through. A calendar has
// at least one working day and at most MaxHolidays holidays of its own, so a working
// window is always within a few weeks. A limit that needs more than maxWindowSteps
// working windows (more than 10,000 working days) never falls due
// (docs/api-conventions.md#service-desk).
const (
	maxWindowSearchDays = 800
	maxWindowSteps      = 10_000
)

// schedule is a calendar ready for business-time arithmetic.
type schedule struct {
	loc        *time.Location
	days       [7]bool // by time.Weekday
	start, end int     // minutes after local midnight
	own        map[civilDay]bool
	country    []*cal.Holiday
	years      map[int]bool
	public     map[civilDay]bool
}

type civilDay struct {
	y int
	m time.Month
	d int
}

// newSchedule prepares c; its fields were validated when it was written.
func newSchedule(c *store.SLACalendar) (*schedule, error) {
	loc, err := time.LoadLocation(c.Timezone)
	if err != nil {
		return nil, fmt.Errorf("calendar %s time zone: %w", c.ID, err)
	}
	s := &schedule{loc: loc, start: int(c.WorkStart), end: int(c.WorkEnd), own: map[civilDay]bool{},
		years: map[int]bool{}, public: map[civilDay]bool{}}
	for _, d := range c.WorkingDays {
		s.days[time.Weekday(d%7)] = true
	}
	for _, h := range c.Holidays {
		t, err := time.Parse(time.DateOnly, h[:min(len(h), 10)])
		if err != nil {
			return nil, fmt.Errorf("calendar %s holiday %q: %w", c.ID, h, err)
		}
		s.own[civilDay{t.Year(), t.Month(), t.Day()}] = true
	}
	if c.HolidaysCountry != nil {
		s.country = holidayCountries[*c.HolidaysCountry]
	}
	return s, nil
}

// holiday says whether the local day is a holiday of the desk or of its country (the
// day the holiday is observed, as rickar/cal reports it).
func (s *schedule) holiday(d civilDay) bool {
	if s.own[d] {
		return true
	}
	if len(s.country) == 0 {
		return false
	}
	if !s.years[d.y] {
		s.years[d.y] = true
		for _, h := range s.country {
			for _, y := range []int{d.y - 1, d.y, d.y + 1} {
				if _, obs := h.Calc(y); !obs.IsZero() {
					s.public[civilDay{obs.Year(), obs.Month(), obs.Day()}] = true
				}
			}
		}
	}
	return s.public[d]
}

// window returns the first working window [from, to) that ends after t; ok is false
// when none starts within maxWindowSearchDays.
func (s *schedule) window(t time.Time) (from, to time.Time, ok bool) {
	lt := t.In(s.loc)
	y, m, d := lt.Date()
	for i := 0; i < maxWindowSearchDays; i++ {
		day := time.Date(y, m, d+i, 12, 0, 0, 0, s.loc)
		cd := civilDay{day.Year(), day.Month(), day.Day()}
		if !s.days[day.Weekday()] || s.holiday(cd) {
			continue
		}
		from = time.Date(cd.y, cd.m, cd.d, 0, s.start, 0, 0, s.loc)
		to = time.Date(cd.y, cd.m, cd.d, 0, s.end, 0, 0, s.loc)
		if to.After(t) {
			return from, to, true
		}
	}
	return time.Time{}, time.Time{}, false
}

// interval is a pause of a clock: [from, to); a zero to is a pause still going on.
type interval struct{ from, to time.Time }

// addBusiness returns the instant at which a clock started at start has counted n
// minutes: only inside the schedule's working windows (every minute when s is nil)
// and outside the pauses (sorted by from, not overlapping). ok is false while the
// limit is not reachable: the clock is paused now, or the calendar has no working
// window within the search bounds.
func addBusiness(s *schedule, start time.Time, n int, pauses []interval) (time.Time, bool) {
	remaining := time.Duration(n) * time.Minute
	t := start
	for step := 0; step < maxWindowSteps; step++ {
		from, to := t, time.Time{}
		if s != nil {
			var ok bool
			if from, to, ok = s.window(t); !ok {
				return time.Time{}, false
			}
			if from.Before(t) {
				from = t
			}
		}
		// The first pause not over by the window's start.
		for len(pauses) > 0 && !pauses[0].to.IsZero() && !pauses[0].to.After(from) {
			pauses = pauses[1:]
		}
		end := to
		if len(pauses) > 0 {
			p := pauses[0]
			if !p.from.After(from) {
				if p.to.IsZero() {
					return time.Time{}, false // paused now
				}
				t = p.to
				continue
			}
			if end.IsZero() || p.from.Before(end) {
				end = p.from
			}
		}
		if end.IsZero() || end.Sub(from) >= remaining {
			return from.Add(remaining), true
		}
		remaining -= end.Sub(from)
		t = end
	}
	return time.Time{}, false
}
