package api

import "github.com/taskweave/taskweave/domain/notify"

// notificationErrors maps the notification sentinels to CONTRACT §2.
var notificationErrors = []errorMapping{
	{notify.ErrNotFound, 404, "NOT_FOUND", "NOTIFICATION_NOT_FOUND"},
}
