package api

import "github.com/taskweave/taskweave/domain/webhook"

// webhookErrors maps the webhook sentinels to docs/api-conventions.md#errors.
var webhookErrors = []errorMapping{
	{webhook.ErrURLRejected, 400, "BAD_REQUEST", "WEBHOOK_URL_REJECTED"},
	{webhook.ErrNotFound, 404, "NOT_FOUND", "WEBHOOK_NOT_FOUND"},
	{webhook.ErrDeliveryNotFound, 404, "NOT_FOUND", "DELIVERY_NOT_FOUND"},
	{webhook.ErrDisabled, 409, "CONFLICT", "WEBHOOK_DISABLED"},
}
