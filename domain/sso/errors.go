package sso

import "errors"

// Errors of the SSO configuration and the code exchange; api/ maps each to its status
// (docs/api-conventions.md#errors). Failures of the browser flow are not errors of
// this kind: they end at the web client as a FlowError's reason.
var (
	ErrConfigNotFound = errors.New("sso: config not found")
	// ErrInvalidCode refuses an exchange code that is unknown, used, expired, or whose
	// user was deactivated in the meantime: one answer for all.
	ErrInvalidCode = errors.New("sso: invalid login code")
)

// Reasons a browser flow ends with, sent to the web client as
// {base}/auth/sso/callback?error=<reason>. They are stable codes like the API's
// error reasons, never translated.
const (
	ReasonUnknownProvider      = "UNKNOWN_PROVIDER"
	ReasonInvalidState         = "INVALID_STATE"
	ReasonAccessDenied         = "ACCESS_DENIED"
	ReasonProviderError        = "PROVIDER_ERROR"
	ReasonEmailNotVerified     = "EMAIL_NOT_VERIFIED"
	ReasonProvisioningDisabled = "PROVISIONING_DISABLED"
	ReasonAccountDisabled      = "ACCOUNT_DISABLED"
	ReasonServerError          = "SERVER_ERROR"
)

// FlowError ends a browser flow with Reason; Err, when set, is the cause for the log.
type FlowError struct {
	Reason string
	Err    error
}

func (e *FlowError) Error() string {
	if e.Err != nil {
		return "sso flow: " + e.Reason + ": " + e.Err.Error()
	}
	return "sso flow: " + e.Reason
}

func (e *FlowError) Unwrap() error { return e.Err }

func flowError(reason string, err error) *FlowError { return &FlowError{Reason: reason, Err: err} }

// ReasonOf is the reason a flow error ends with; anything that is not a FlowError
// (the database failing, say) is SERVER_ERROR.
func ReasonOf(err error) string {
	var fe *FlowError
	if errors.As(err, &fe) {
		return fe.Reason
	}
	return ReasonServerError
}
