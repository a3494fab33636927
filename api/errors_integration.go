package api

import (
	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/integration"
)

// integrationErrors maps the integration sentinels to docs/api-conventions.md#errors. The
// incoming endpoints answer a wrong signature themselves, with the providers' own body
// (docs/api-conventions.md#incoming-provider-events); the 401 here is for any other path.
var integrationErrors = []core.ErrorMapping{
	{Err: integration.ErrUnauthenticated, Status: 401, Code: "UNAUTHORIZED", Reason: ""},
	{Err: integration.ErrExists, Status: 409, Code: "CONFLICT", Reason: "INTEGRATION_EXISTS"},
	{Err: integration.ErrNotFound, Status: 404, Code: "NOT_FOUND", Reason: "INTEGRATION_NOT_FOUND"},
	{Err: integration.ErrInvalidPayload, Status: 400, Code: "BAD_REQUEST", Reason: "MALFORMED_JSON"},
}
