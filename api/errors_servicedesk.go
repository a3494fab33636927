package api

import "github.com/taskweave/taskweave/domain/servicedesk"

// serviceDeskErrors maps the service desk and incident sentinels to
// docs/api-conventions.md#errors.
var serviceDeskErrors = []errorMapping{
	{servicedesk.ErrDeskNotFound, 404, "NOT_FOUND", "SERVICE_DESK_NOT_FOUND"},
	{servicedesk.ErrEmailTaken, 409, "CONFLICT", "DESK_EMAIL_TAKEN"},
	{servicedesk.ErrEmailReserved, 409, "CONFLICT", "DESK_EMAIL_RESERVED"},
	{servicedesk.ErrEmailNotPending, 409, "CONFLICT", "DESK_EMAIL_NOT_PENDING"},
	{servicedesk.ErrEmailChanged, 409, "CONFLICT", "DESK_EMAIL_CHANGED"},
	{servicedesk.ErrResendTooSoon, 409, "CONFLICT", "DESK_EMAIL_RESEND_TOO_SOON"},
	{servicedesk.ErrCodeInvalid, 400, "BAD_REQUEST", "DESK_EMAIL_CODE_INVALID"},
	{servicedesk.ErrCodeExpired, 400, "BAD_REQUEST", "DESK_EMAIL_CODE_EXPIRED"},
	{servicedesk.ErrPolicyNotFound, 404, "NOT_FOUND", "SLA_POLICY_NOT_FOUND"},
	{servicedesk.ErrPolicyExists, 409, "CONFLICT", "SLA_POLICY_EXISTS"},
	{servicedesk.ErrUserNotMember, 404, "NOT_FOUND", "USER_NOT_MEMBER"},
	{servicedesk.ErrIncidentNotFound, 404, "NOT_FOUND", "INCIDENT_NOT_FOUND"},
	{servicedesk.ErrIncidentResolved, 409, "CONFLICT", "INCIDENT_RESOLVED"},
}
