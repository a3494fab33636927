package api

import (
	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/notify"
)

// notificationErrors maps the notification sentinels to docs/api-conventions.md#errors.
var notificationErrors = []core.ErrorMapping{
	{Err: notify.ErrNotFound, Status: 404, Code: "NOT_FOUND", Reason: "NOTIFICATION_NOT_FOUND"},
}
