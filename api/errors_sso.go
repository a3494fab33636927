package api

import "github.com/taskweave/taskweave/domain/sso"

// ssoErrors maps the SSO sentinels to docs/api-conventions.md#errors. Failures of the
// browser flow never get here: they end at the web client (api/sso_flow.go).
var ssoErrors = []errorMapping{
	{sso.ErrConfigNotFound, 404, "NOT_FOUND", "SSO_CONFIG_NOT_FOUND"},
	{sso.ErrInvalidCode, 403, "FORBIDDEN", "INVALID_SSO_CODE"},
}
