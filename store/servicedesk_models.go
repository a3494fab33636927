package store

import (
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// ServiceDesk is a project's desk (at most one per project). EmailAddress routes
// incoming e-mail to it once it is verified (EmailVerifiedAt set); a verified address
// belongs to one desk at most, a pending one to any number.
type ServiceDesk struct {
	bun.BaseModel `bun:"table:service_desks,alias:d"`

	ID              uuid.UUID  `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	ProjectID       uuid.UUID  `bun:"project_id,type:uuid"`
	EmailAddress    *string    `bun:"email_address"`
	Enabled         bool       `bun:"enabled"`
	EmailVerifiedAt *time.Time `bun:"email_verified_at"`
	// EmailVerifiedBy is CODE, ADMIN or MIGRATION once verified.
	EmailVerifiedBy    *string    `bun:"email_verified_by"`
	EmailCodeHash      []byte     `bun:"email_code_hash"`
	EmailCodeExpiresAt *time.Time `bun:"email_code_expires_at"`
	EmailCodeAttempts  int        `bun:"email_code_attempts,notnull"`
	EmailCodeSentAt    *time.Time `bun:"email_code_sent_at"`
	CreatedAt          time.Time  `bun:"created_at,nullzero,default:clock_timestamp()"`
	UpdatedAt          time.Time  `bun:"updated_at,nullzero,default:clock_timestamp()"`
}

// ServiceDeskTicket marks an issue as a ticket and keeps where it came from (WEB or
// EMAIL). ResponseOpen is the breach monitor's: true while the first-response clock
// still needs looking at.
type ServiceDeskTicket struct {
	bun.BaseModel `bun:"table:service_desk_tickets,alias:t"`

	IssueID       uuid.UUID `bun:"issue_id,pk,type:uuid"`
	ServiceDeskID uuid.UUID `bun:"service_desk_id,type:uuid"`
	SenderEmail   *string   `bun:"sender_email"`
	// ReplyTokenHash is the SHA-256 of the reply token of a ticket without a sender.
	ReplyTokenHash []byte    `bun:"reply_token_hash"`
	Channel        string    `bun:"channel"`
	ResponseOpen   bool      `bun:"response_open"`
	CreatedAt      time.Time `bun:"created_at,nullzero,default:clock_timestamp()"`
}

// SLAPolicy is a desk's service level for one priority, in minutes.
type SLAPolicy struct {
	bun.BaseModel `bun:"table:sla_policies,alias:sp"`

	ID                uuid.UUID `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	ServiceDeskID     uuid.UUID `bun:"service_desk_id,type:uuid"`
	Name              string    `bun:"name"`
	Priority          string    `bun:"priority"`
	ResponseMinutes   int       `bun:"response_minutes"`
	ResolutionMinutes int       `bun:"resolution_minutes"`
	CreatedAt         time.Time `bun:"created_at,nullzero,default:clock_timestamp()"`
	// CalendarID is the business-hours calendar its clocks count in (nil: around the
	// clock); PauseStatusIDs the statuses during which its clocks stop.
	CalendarID     *uuid.UUID  `bun:"calendar_id,type:uuid"`
	PauseStatusIDs []uuid.UUID `bun:"pause_status_ids,type:uuid[],array"`
	// ClocksStale: the next SLA scan recomputes the policy's clocks (new policy, its
	// calendar or rules changed); written by SQL only.
	ClocksStale bool `bun:"clocks_stale,scanonly"`
}

// SLACalendar is a desk's business-hours calendar: working days (ISO weekdays, 1 =
// Monday) and hours (minutes after local midnight, end exclusive) in Timezone, the
// public holidays of HolidaysCountry and the desk's own Holidays (YYYY-MM-DD).
type SLACalendar struct {
	bun.BaseModel `bun:"table:sla_calendars,alias:sc"`

	ID              uuid.UUID `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	ServiceDeskID   uuid.UUID `bun:"service_desk_id,type:uuid"`
	Name            string    `bun:"name"`
	Timezone        string    `bun:"timezone"`
	WorkingDays     []int16   `bun:"working_days,array"`
	WorkStart       int16     `bun:"work_start"`
	WorkEnd         int16     `bun:"work_end"`
	HolidaysCountry *string   `bun:"holidays_country"`
	Holidays        []string  `bun:"holidays,type:date[],array"`
	CreatedAt       time.Time `bun:"created_at,nullzero,default:clock_timestamp()"`
	UpdatedAt       time.Time `bun:"updated_at,nullzero,default:clock_timestamp()"`
}

// EscalationRule says who is notified (and who gets the issue) once an issue has been
// under its policy's timer for EscalateAfterMinutes.
type EscalationRule struct {
	bun.BaseModel `bun:"table:escalation_rules,alias:er"`

	ID                   uuid.UUID   `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	SLAPolicyID          uuid.UUID   `bun:"sla_policy_id,type:uuid"`
	EscalateAfterMinutes int         `bun:"escalate_after_minutes"`
	AssigneeID           *uuid.UUID  `bun:"assignee_id,type:uuid"`
	NotifyUserIDs        []uuid.UUID `bun:"notify_user_ids,type:uuid[],array"`
	CreatedAt            time.Time   `bun:"created_at,nullzero,default:clock_timestamp()"`
}

// Incident is a severity-ranked disruption tracked on one issue of the project.
type Incident struct {
	bun.BaseModel `bun:"table:incidents,alias:inc"`

	ID               uuid.UUID  `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	ProjectID        uuid.UUID  `bun:"project_id,type:uuid"`
	IssueID          uuid.UUID  `bun:"issue_id,type:uuid"`
	Severity         string     `bun:"severity"`
	OnCallAssigneeID *uuid.UUID `bun:"on_call_assignee_id,type:uuid"`
	PostmortemBody   *string    `bun:"postmortem_body"`
	ResolvedAt       *time.Time `bun:"resolved_at"`
	CreatedBy        *uuid.UUID `bun:"created_by,type:uuid"`
	CreatedAt        time.Time  `bun:"created_at,nullzero,default:clock_timestamp()"`
}
