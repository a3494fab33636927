package api

import "github.com/taskweave/taskweave/domain/sso"

// ssoErrors maps the SSO sentinels to docs/api-conventions.md#errors. Failures of the
// browser flow never get here: they end at the web client (api/sso_flow.go).
var ssoErrors = []errorMapping{
	{sso.ErrConfigNotFound, 404, "NOT_FOUND", "SSO_CONFIG_NOT_FOUND"},
	{sso.ErrInvalidCode, 403, "FORBIDDEN", "INVALID_SSO_CODE"},
	{sso.ErrIssuerRejected, 400, "BAD_REQUEST", "SSO_ISSUER_REJECTED"},
	{sso.ErrSessionRequired, 403, "FORBIDDEN", "SESSION_REQUIRED"},
	{sso.ErrProviderNotFound, 404, "NOT_FOUND", "SSO_PROVIDER_NOT_FOUND"},
	{sso.ErrProviderUnavailable, 503, "UNAVAILABLE", "SSO_PROVIDER_UNAVAILABLE"},
	{sso.ErrLinkNotFound, 404, "NOT_FOUND", "SSO_LINK_NOT_FOUND"},
	{sso.ErrLastSignInMethod, 409, "CONFLICT", "LAST_SIGN_IN_METHOD"},
}
