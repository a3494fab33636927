package servicedesk

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/store"
)

// Limits of a business-hours calendar (docs/api-conventions.md#service-desk).
const (
	MaxCalendarName = 100
	// MaxHolidays bounds the desk's own holidays of one calendar.
	MaxHolidays = 366
	// MaxCalendars bounds the calendars of one desk.
	MaxCalendars = 50
	// MaxPauseStatuses bounds a policy's pause statuses.
	MaxPauseStatuses = 20
)

// Calendar errors.
var (
	ErrCalendarNotFound = errors.New("servicedesk: calendar not found")
	// ErrCalendarInUse: a policy counts in the calendar, so it cannot be deleted.
	ErrCalendarInUse = errors.New("servicedesk: calendar used by an SLA policy")
	// ErrTooManyCalendars: the desk has MaxCalendars already.
	ErrTooManyCalendars = errors.New("servicedesk: too many calendars")
	// ErrStatusNotInWorkflow: a pause status is not a status of the project's workflow.
	ErrStatusNotInWorkflow = errors.New("servicedesk: pause status not in the project's workflow")
)

// Audit actions of calendars.
const (
	AuditCalendarCreated = "SLA_CALENDAR_CREATED"
	AuditCalendarUpdated = "SLA_CALENDAR_UPDATED"
	AuditCalendarDeleted = "SLA_CALENDAR_DELETED"
)

// NewCalendar is a validated calendar: WorkingDays ISO weekdays (1 = Monday, no
// duplicates), WorkStart < WorkEnd minutes after local midnight, Timezone an IANA
// name, HolidaysCountry one of HolidayCountries or nil, Holidays YYYY-MM-DD dates.
type NewCalendar struct {
	Name            string
	Timezone        string
	WorkingDays     []int16
	WorkStart       int16
	WorkEnd         int16
	HolidaysCountry *string
	Holidays        []string
}

func (in NewCalendar) details() map[string]any {
	return map[string]any{"name": in.Name, "timezone": in.Timezone, "workingDays": in.WorkingDays,
		"workStart": in.WorkStart, "workEnd": in.WorkEnd, "holidaysCountry": in.HolidaysCountry, "holidays": in.Holidays}
}

// CreateCalendar adds a calendar to the project's desk: ErrDeskNotFound without one,
// ErrTooManyCalendars past MaxCalendars.
func (s *Service) CreateCalendar(ctx context.Context, by audit.Actor, p Project, in NewCalendar) (*store.SLACalendar, error) {
	c := &store.SLACalendar{}
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		// FOR UPDATE on the desk serialises creations, so the count holds.
		d := new(store.ServiceDesk)
		if err := tx.NewSelect().Model(d).Where("d.project_id = ?", p.ID).For("UPDATE").Scan(ctx); err != nil {
			if store.IsNotFound(err) {
				return ErrDeskNotFound
			}
			return fmt.Errorf("load service desk: %w", err)
		}
		n, err := tx.NewSelect().Model((*store.SLACalendar)(nil)).Where("service_desk_id = ?", d.ID).Count(ctx)
		if err != nil {
			return fmt.Errorf("count calendars: %w", err)
		}
		if n >= MaxCalendars {
			return ErrTooManyCalendars
		}
		*c = store.SLACalendar{ServiceDeskID: d.ID}
		in.apply(c)
		if _, err := tx.NewInsert().Model(c).Returning("*").Exec(ctx); err != nil {
			return fmt.Errorf("insert calendar: %w", err)
		}
		return s.record(ctx, tx, by, p, AuditCalendarCreated, "SLA_CALENDAR", c.ID, in.details())
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (in NewCalendar) apply(c *store.SLACalendar) {
	c.Name, c.Timezone, c.WorkingDays, c.WorkStart, c.WorkEnd = in.Name, in.Timezone, in.WorkingDays, in.WorkStart, in.WorkEnd
	c.HolidaysCountry, c.Holidays = in.HolidaysCountry, in.Holidays
	if c.Holidays == nil {
		c.Holidays = []string{}
	}
}

// Calendars lists the desk's calendars by creation; ErrDeskNotFound without a desk.
func (s *Service) Calendars(ctx context.Context, p Project) ([]store.SLACalendar, error) {
	d, err := deskOf(ctx, s.db, p.ID, false)
	if err != nil {
		return nil, err
	}
	out := []store.SLACalendar{}
	if err := s.db.NewSelect().Model(&out).Where("sc.service_desk_id = ?", d.ID).OrderExpr("sc.created_at, sc.id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("list calendars: %w", err)
	}
	return out, nil
}

// calendarOf reads (and locks FOR UPDATE) a calendar of the project's desk;
// another project's is ErrCalendarNotFound.
func calendarOf(ctx context.Context, tx bun.IDB, p Project, id uuid.UUID, lock string) (*store.SLACalendar, error) {
	c := new(store.SLACalendar)
	q := tx.NewSelect().Model(c).Join("JOIN service_desks AS d ON d.id = sc.service_desk_id").
		Where("sc.id = ? AND d.project_id = ?", id, p.ID)
	if lock != "" {
		q = q.For(lock + " OF sc")
	}
	if err := q.Scan(ctx); err != nil {
		if store.IsNotFound(err) {
			return nil, ErrCalendarNotFound
		}
		return nil, fmt.Errorf("load calendar: %w", err)
	}
	return c, nil
}

// UpdateCalendar replaces a calendar's settings. updated_at moves, so the next SLA
// scan recomputes the clocks of every policy counting in it.
func (s *Service) UpdateCalendar(ctx context.Context, by audit.Actor, p Project, id uuid.UUID, in NewCalendar) (*store.SLACalendar, error) {
	var c *store.SLACalendar
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		var err error
		if c, err = calendarOf(ctx, tx, p, id, "UPDATE"); err != nil {
			return err
		}
		in.apply(c)
		_, err = tx.NewUpdate().Model(c).Column("name", "timezone", "working_days", "work_start", "work_end",
			"holidays_country", "holidays").Set("updated_at = clock_timestamp()").WherePK().Returning("*").Exec(ctx)
		if err != nil {
			return fmt.Errorf("update calendar: %w", err)
		}
		if _, err := tx.NewRaw("UPDATE sla_policies SET clocks_stale = true WHERE calendar_id = ?", c.ID).Exec(ctx); err != nil {
			return fmt.Errorf("mark clocks stale: %w", err)
		}
		return s.record(ctx, tx, by, p, AuditCalendarUpdated, "SLA_CALENDAR", c.ID, in.details())
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// DeleteCalendar removes a calendar no policy uses: ErrCalendarInUse otherwise.
func (s *Service) DeleteCalendar(ctx context.Context, by audit.Actor, p Project, id uuid.UUID) error {
	return store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		c, err := calendarOf(ctx, tx, p, id, "UPDATE")
		if err != nil {
			return err
		}
		// A policy taking the calendar concurrently holds KEY SHARE on it (CreatePolicy),
		// so this check and the foreign key agree.
		used, err := tx.NewSelect().Model((*store.SLAPolicy)(nil)).Where("calendar_id = ?", id).Exists(ctx)
		if err != nil {
			return fmt.Errorf("calendar in use: %w", err)
		}
		if used {
			return ErrCalendarInUse
		}
		if _, err := tx.NewDelete().Model((*store.SLACalendar)(nil)).Where("id = ?", id).Exec(ctx); err != nil {
			return fmt.Errorf("delete calendar: %w", err)
		}
		return s.record(ctx, tx, by, p, AuditCalendarDeleted, "SLA_CALENDAR", id, map[string]any{"name": c.Name})
	})
}
