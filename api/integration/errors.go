package integration

import (
	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/integration"
	"github.com/taskweave/taskweave/domain/webhook"
)

// Errors maps the webhook and integration sentinels to docs/api-conventions.md#errors.
// The incoming endpoints answer a wrong signature themselves, with the providers' own
// body (docs/api-conventions.md#incoming-provider-events); the 401 here is for any other
// path.
var Errors = core.ErrorTable{Mappings: []core.ErrorMapping{
	{Err: webhook.ErrURLRejected, Status: 400, Code: "BAD_REQUEST", Reason: "WEBHOOK_URL_REJECTED"},
	{Err: webhook.ErrNotFound, Status: 404, Code: "NOT_FOUND", Reason: "WEBHOOK_NOT_FOUND"},
	{Err: webhook.ErrDeliveryNotFound, Status: 404, Code: "NOT_FOUND", Reason: "DELIVERY_NOT_FOUND"},
	{Err: webhook.ErrDisabled, Status: 409, Code: "CONFLICT", Reason: "WEBHOOK_DISABLED"},

	{Err: integration.ErrUnauthenticated, Status: 401, Code: "UNAUTHORIZED", Reason: ""},
	{Err: integration.ErrExists, Status: 409, Code: "CONFLICT", Reason: "INTEGRATION_EXISTS"},
	{Err: integration.ErrNotFound, Status: 404, Code: "NOT_FOUND", Reason: "INTEGRATION_NOT_FOUND"},
	{Err: integration.ErrInvalidPayload, Status: 400, Code: "BAD_REQUEST", Reason: "MALFORMED_JSON"},
}}
