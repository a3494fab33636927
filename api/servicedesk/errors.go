package servicedesk

import (
	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/servicedesk"
)

// Errors maps the service desk and incident sentinels to
// docs/api-conventions.md#errors.
var Errors = core.ErrorTable{Mappings: []core.ErrorMapping{
	{Err: servicedesk.ErrDeskNotFound, Status: 404, Code: "NOT_FOUND", Reason: "SERVICE_DESK_NOT_FOUND"},
	{Err: servicedesk.ErrEmailTaken, Status: 409, Code: "CONFLICT", Reason: "DESK_EMAIL_TAKEN"},
	{Err: servicedesk.ErrEmailReserved, Status: 409, Code: "CONFLICT", Reason: "DESK_EMAIL_RESERVED"},
	{Err: servicedesk.ErrEmailNotPending, Status: 409, Code: "CONFLICT", Reason: "DESK_EMAIL_NOT_PENDING"},
	{Err: servicedesk.ErrEmailChanged, Status: 409, Code: "CONFLICT", Reason: "DESK_EMAIL_CHANGED"},
	{Err: servicedesk.ErrResendTooSoon, Status: 409, Code: "CONFLICT", Reason: "DESK_EMAIL_RESEND_TOO_SOON"},
	{Err: servicedesk.ErrCodeInvalid, Status: 400, Code: "BAD_REQUEST", Reason: "DESK_EMAIL_CODE_INVALID"},
	{Err: servicedesk.ErrCodeExpired, Status: 400, Code: "BAD_REQUEST", Reason: "DESK_EMAIL_CODE_EXPIRED"},
	{Err: servicedesk.ErrPolicyNotFound, Status: 404, Code: "NOT_FOUND", Reason: "SLA_POLICY_NOT_FOUND"},
	{Err: servicedesk.ErrPolicyExists, Status: 409, Code: "CONFLICT", Reason: "SLA_POLICY_EXISTS"},
	{Err: servicedesk.ErrUserNotMember, Status: 404, Code: "NOT_FOUND", Reason: "USER_NOT_MEMBER"},
	{Err: servicedesk.ErrIncidentNotFound, Status: 404, Code: "NOT_FOUND", Reason: "INCIDENT_NOT_FOUND"},
	{Err: servicedesk.ErrCalendarNotFound, Status: 404, Code: "NOT_FOUND", Reason: "SLA_CALENDAR_NOT_FOUND"},
	{Err: servicedesk.ErrCalendarInUse, Status: 409, Code: "CONFLICT", Reason: "SLA_CALENDAR_IN_USE"},
	{Err: servicedesk.ErrTooManyCalendars, Status: 409, Code: "CONFLICT", Reason: "SLA_CALENDAR_LIMIT"},
	{Err: servicedesk.ErrStatusNotInWorkflow, Status: 404, Code: "NOT_FOUND", Reason: "STATUS_NOT_FOUND"},
	{Err: servicedesk.ErrIncidentResolved, Status: 409, Code: "CONFLICT", Reason: "INCIDENT_RESOLVED"},
}}
