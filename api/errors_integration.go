package api

import "github.com/taskweave/taskweave/domain/integration"

// integrationErrors maps the integration sentinels to docs/api-conventions.md#errors. The
// incoming endpoints answer a wrong signature themselves, with the providers' own body
// (docs/api-conventions.md#incoming-provider-events); the 401 here is for any other path.
var integrationErrors = []errorMapping{
	{integration.ErrUnauthenticated, 401, "UNAUTHORIZED", ""},
	{integration.ErrExists, 409, "CONFLICT", "INTEGRATION_EXISTS"},
	{integration.ErrNotFound, 404, "NOT_FOUND", "INTEGRATION_NOT_FOUND"},
	{integration.ErrInvalidPayload, 400, "BAD_REQUEST", "MALFORMED_JSON"},
}
