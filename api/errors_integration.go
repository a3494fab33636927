package api

import "github.com/taskweave/taskweave/domain/integration"

// integrationErrors maps the integration sentinels to docs/api-conventions.md#errors. A
// wrong incoming signature is not here: those replies have their own body
// (docs/api-conventions.md#incoming-provider-events).
var integrationErrors = []errorMapping{
	{integration.ErrExists, 409, "CONFLICT", "INTEGRATION_EXISTS"},
	{integration.ErrNotFound, 404, "NOT_FOUND", "INTEGRATION_NOT_FOUND"},
	{integration.ErrInvalidPayload, 400, "BAD_REQUEST", "MALFORMED_JSON"},
}
