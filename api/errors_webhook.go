package api

import (
	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/webhook"
)

// webhookErrors maps the webhook sentinels to docs/api-conventions.md#errors.
var webhookErrors = []core.ErrorMapping{
	{Err: webhook.ErrURLRejected, Status: 400, Code: "BAD_REQUEST", Reason: "WEBHOOK_URL_REJECTED"},
	{Err: webhook.ErrNotFound, Status: 404, Code: "NOT_FOUND", Reason: "WEBHOOK_NOT_FOUND"},
	{Err: webhook.ErrDeliveryNotFound, Status: 404, Code: "NOT_FOUND", Reason: "DELIVERY_NOT_FOUND"},
	{Err: webhook.ErrDisabled, Status: 409, Code: "CONFLICT", Reason: "WEBHOOK_DISABLED"},
}
