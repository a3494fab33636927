package api

import "github.com/taskweave/taskweave/domain/notify"

// notificationErrors maps the notification sentinels to docs/api-conventions.md#errors.
var notificationErrors = []errorMapping{
	{notify.ErrNotFound, 404, "NOT_FOUND", "NOTIFICATION_NOT_FOUND"},
}
