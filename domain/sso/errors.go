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
	// ErrIssuerRejected is an issuer URL whose host is or resolves to an address the
	// server must not call (the webhook address rule), while TW_SSO_ALLOW_PRIVATE is off.
	ErrIssuerRejected = errors.New("sso: issuer url rejected")
	// ErrSessionRequired refuses to link an identity for a caller signed in with a
	// personal access token: a token must not become a way to a full login.
	ErrSessionRequired = errors.New("sso: linking needs a signed-in session")
	// ErrProviderNotFound is a registration to link that is unknown, disabled or not
	// configured.
	ErrProviderNotFound = errors.New("sso: no such provider")
	// ErrProviderUnavailable is a provider whose discovery failed when a link began.
	ErrProviderUnavailable = errors.New("sso: provider unavailable")
	// ErrLinkNotFound is an unlink of a registration the account is not linked to.
	ErrLinkNotFound = errors.New("sso: account not linked to this provider")
	// ErrLastSignInMethod refuses to unlink the only way an account without a
	// password can sign in.
	ErrLastSignInMethod = errors.New("sso: the account's last sign-in method")
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
	// ReasonAccountExists: the verified e-mail belongs to an account not linked to this
	// registration, which may not be linked automatically; the user signs in with the
	// password and links the provider from the account.
	ReasonAccountExists = "ACCOUNT_EXISTS"
	// ReasonIdentityInUse: a link flow's identity is already linked to another account.
	ReasonIdentityInUse = "IDENTITY_IN_USE"
	ReasonServerError   = "SERVER_ERROR"
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
