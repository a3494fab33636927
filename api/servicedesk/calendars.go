package servicedesk

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/domain/servicedesk"
	"github.com/taskweave/taskweave/store"
)

// weekdays are the workingDays values by ISO weekday (1 = Monday).
var weekdays = []string{"MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"}

// maxTimezone bounds the timezone member (IANA names are far shorter).
const maxTimezone = 64

// timeOfDay is HH:MM from 00:00 to 24:00.
var timeOfDay = regexp.MustCompile(`^(?:[01][0-9]|2[0-3]):[0-5][0-9]$|^24:00$`)

// workingHours is WorkingHours: local times of day, end exclusive.
type workingHours struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// calendarResponse is SlaCalendar in api/openapi/91-servicedesk.yaml.
type calendarResponse struct {
	ID              uuid.UUID    `json:"id"`
	ServiceDeskID   uuid.UUID    `json:"serviceDeskId"`
	Name            string       `json:"name"`
	Timezone        string       `json:"timezone"`
	WorkingDays     []string     `json:"workingDays"`
	WorkingHours    workingHours `json:"workingHours"`
	HolidaysCountry *string      `json:"holidaysCountry"`
	Holidays        []string     `json:"holidays"`
	CreatedAt       string       `json:"createdAt"`
	UpdatedAt       string       `json:"updatedAt"`
}

func clock(m int16) string { return fmt.Sprintf("%02d:%02d", m/60, m%60) }

func toCalendarResponse(c *store.SLACalendar) calendarResponse {
	days := make([]string, 0, len(c.WorkingDays))
	for _, d := range c.WorkingDays {
		days = append(days, weekdays[d-1])
	}
	holidays := make([]string, len(c.Holidays))
	for i, h := range c.Holidays {
		holidays[i] = h[:min(len(h), 10)]
	}
	return calendarResponse{ID: c.ID, ServiceDeskID: c.ServiceDeskID, Name: c.Name, Timezone: c.Timezone, WorkingDays: days,
		WorkingHours: workingHours{Start: clock(c.WorkStart), End: clock(c.WorkEnd)}, HolidaysCountry: c.HolidaysCountry,
		Holidays: holidays, CreatedAt: core.Instant(c.CreatedAt), UpdatedAt: core.Instant(c.UpdatedAt)}
}

// minutesOfDay reads a valid HH:MM.
func minutesOfDay(s string) int16 {
	h, _ := strconv.Atoi(s[:2])
	m, _ := strconv.Atoi(s[3:])
	return int16(h*60 + m)
}

// parseCalendar reads a calendar: name, timezone, workingDays and workingHours
// required; an unknown day or country is BAD_REQUEST INVALID_ENUM; a blank or long
// name, an unknown time zone, a malformed time, hours that end before they start, no
// working day, a malformed date or too many holidays VALIDATION_ERRORs.
func parseCalendar(body core.Body) (servicedesk.NewCalendar, error) {
	var r struct {
		Name         *string  `json:"name"`
		Timezone     *string  `json:"timezone"`
		WorkingDays  []string `json:"workingDays"`
		WorkingHours *struct {
			Start *string `json:"start"`
			End   *string `json:"end"`
		} `json:"workingHours"`
		HolidaysCountry *string  `json:"holidaysCountry"`
		Holidays        []string `json:"holidays"`
	}
	var in servicedesk.NewCalendar
	if err := body.Decode(&r); err != nil {
		return in, err
	}
	switch {
	case r.Name == nil:
		return in, core.Required("name")
	case r.Timezone == nil:
		return in, core.Required("timezone")
	case r.WorkingDays == nil:
		return in, core.Required("workingDays")
	case r.WorkingHours == nil:
		return in, core.Required("workingHours")
	case r.WorkingHours.Start == nil:
		return in, core.Required("workingHours.start")
	case r.WorkingHours.End == nil:
		return in, core.Required("workingHours.end")
	}
	for _, d := range r.WorkingDays {
		i := slices.Index(weekdays, d)
		if i < 0 {
			return in, core.BadRequest("INVALID_ENUM", "field", "workingDays", "values", strings.Join(weekdays, ", "))
		}
		if !slices.Contains(in.WorkingDays, int16(i+1)) {
			in.WorkingDays = append(in.WorkingDays, int16(i+1))
		}
	}
	slices.Sort(in.WorkingDays)
	if r.HolidaysCountry != nil && !servicedesk.ValidHolidayCountry(*r.HolidaysCountry) {
		return in, core.BadRequest("INVALID_ENUM", "field", "holidaysCountry", "values", strings.Join(servicedesk.HolidayCountries(), ", "))
	}
	in.Name, in.Timezone, in.HolidaysCountry = strings.TrimSpace(*r.Name), *r.Timezone, r.HolidaysCountry
	var f core.Fields
	f.Text("name", in.Name, true, servicedesk.MaxCalendarName)
	if in.Timezone == "" || in.Timezone == "Local" || len(in.Timezone) > maxTimezone {
		f.Add("timezone", "TIMEZONE", "field.TIMEZONE")
	} else if _, err := time.LoadLocation(in.Timezone); err != nil {
		f.Add("timezone", "TIMEZONE", "field.TIMEZONE")
	}
	if len(in.WorkingDays) == 0 {
		f.Add("workingDays", "SIZE", "field.NOT_EMPTY")
	}
	start, end := *r.WorkingHours.Start, *r.WorkingHours.End
	okStart, okEnd := timeOfDay.MatchString(start) && start != "24:00", timeOfDay.MatchString(end)
	if !okStart {
		f.Add("workingHours.start", "PATTERN", "field.TIME_OF_DAY")
	}
	if !okEnd {
		f.Add("workingHours.end", "PATTERN", "field.TIME_OF_DAY")
	}
	if okStart && okEnd {
		in.WorkStart, in.WorkEnd = minutesOfDay(start), minutesOfDay(end)
		if in.WorkEnd <= in.WorkStart {
			f.Add("workingHours.end", "TIME_ORDER", "field.WORKING_HOURS_ORDER")
		}
	}
	if len(r.Holidays) > servicedesk.MaxHolidays {
		f.Add("holidays", "SIZE", "field.TOO_MANY", "max", strconv.Itoa(servicedesk.MaxHolidays))
	} else {
		in.Holidays = []string{}
		for _, h := range r.Holidays {
			d, err := time.Parse(time.DateOnly, h)
			if err != nil || d.Format(time.DateOnly) != h {
				f.Add("holidays", "DATE", "field.DATE")
				break
			}
			if !slices.Contains(in.Holidays, h) {
				in.Holidays = append(in.Holidays, h)
			}
		}
		slices.Sort(in.Holidays)
	}
	return in, f.Err()
}

func (s *handlers) createCalendar(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Admin)
	if err != nil {
		return err
	}
	in, err := parseCalendar(core.BodyOf(c))
	if err != nil {
		return err
	}
	cal, err := s.serviceDesk().CreateCalendar(c.UserContext(), core.AuditActor(c), deskProject(a), in)
	if err != nil {
		return err
	}
	return c.JSON(toCalendarResponse(cal))
}

func (s *handlers) listCalendars(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Viewer)
	if err != nil {
		return err
	}
	cals, err := s.serviceDesk().Calendars(c.UserContext(), deskProject(a))
	if err != nil {
		return err
	}
	out := make([]calendarResponse, len(cals))
	for i := range cals {
		out[i] = toCalendarResponse(&cals[i])
	}
	return c.JSON(out)
}

func (s *handlers) updateCalendar(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Admin)
	if err != nil {
		return err
	}
	id, err := core.PathUUID(c, "id")
	if err != nil {
		return err
	}
	in, err := parseCalendar(core.BodyOf(c))
	if err != nil {
		return err
	}
	cal, err := s.serviceDesk().UpdateCalendar(c.UserContext(), core.AuditActor(c), deskProject(a), id, in)
	if err != nil {
		return err
	}
	return c.JSON(toCalendarResponse(cal))
}

func (s *handlers) deleteCalendar(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Admin)
	if err != nil {
		return err
	}
	id, err := core.PathUUID(c, "id")
	if err != nil {
		return err
	}
	if err := s.serviceDesk().DeleteCalendar(c.UserContext(), core.AuditActor(c), deskProject(a), id); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
