package account

import (
	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/notify"
	"github.com/taskweave/taskweave/domain/sso"
	"github.com/taskweave/taskweave/domain/user"
)

// Errors maps the notification and SSO sentinels to docs/api-conventions.md#errors (the
// account sentinels of domain/auth are core.Table's). Failures of the SSO browser flow
// never get here: they end at the web client (sso_flow.go).
var Errors = core.ErrorTable{Mappings: []core.ErrorMapping{
	{Err: notify.ErrNotFound, Status: 404, Code: "NOT_FOUND", Reason: "NOTIFICATION_NOT_FOUND"},
	{Err: user.ErrSearchForbidden, Status: 403, Code: "FORBIDDEN", Reason: "USER_SEARCH_FORBIDDEN"},

	{Err: sso.ErrConfigNotFound, Status: 404, Code: "NOT_FOUND", Reason: "SSO_CONFIG_NOT_FOUND"},
	{Err: sso.ErrInvalidCode, Status: 403, Code: "FORBIDDEN", Reason: "INVALID_SSO_CODE"},
	{Err: sso.ErrIssuerRejected, Status: 400, Code: "BAD_REQUEST", Reason: "SSO_ISSUER_REJECTED"},
	{Err: sso.ErrSessionRequired, Status: 403, Code: "FORBIDDEN", Reason: "SESSION_REQUIRED"},
	{Err: sso.ErrProviderNotFound, Status: 404, Code: "NOT_FOUND", Reason: "SSO_PROVIDER_NOT_FOUND"},
	{Err: sso.ErrProviderUnavailable, Status: 503, Code: "UNAVAILABLE", Reason: "SSO_PROVIDER_UNAVAILABLE"},
	{Err: sso.ErrLinkNotFound, Status: 404, Code: "NOT_FOUND", Reason: "SSO_LINK_NOT_FOUND"},
	{Err: sso.ErrLastSignInMethod, Status: 409, Code: "CONFLICT", Reason: "LAST_SIGN_IN_METHOD"},
}}
