package account

import (
	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/notify"
)

// notificationPageSize is GET /notifications' default size (docs/api-conventions.md#pages).
const notificationPageSize = 20

// listNotifications is the caller's notifications, newest first; unread=true keeps the
// unread ones.
func (s *handlers) listNotifications(c *fiber.Ctx) error {
	pr, err := core.ParsePage(c, notificationPageSize)
	if err != nil {
		return err
	}
	var unread bool
	switch c.Query("unread") {
	case "", "false":
	case "true":
		unread = true
	default:
		return core.BadRequest("INVALID_QUERY", "field", "unread")
	}
	after, err := pr.AfterTimeID("notifications")
	if err != nil {
		return err
	}
	rows, total, err := notify.List(c.UserContext(), s.DB.Bun, core.Principal(c).UserID, unread, after, pr.Offset(), pr.Limit())
	if err != nil {
		return err
	}
	next := pr.Next(c, "notifications", len(rows), total, func(i int) []string { return core.TimeIDKeys(rows[i].CreatedAt, rows[i].ID) })
	rows = core.Trim(rows, pr)
	out := make([]notify.View, 0, len(rows))
	for i := range rows {
		out = append(out, notify.ViewOf(&rows[i]))
	}
	return c.JSON(core.NewPage(out, pr, total, next))
}

type unreadCountResponse struct {
	Count int `json:"count"`
}

func (s *handlers) unreadNotificationCount(c *fiber.Ctx) error {
	n, err := notify.UnreadCount(c.UserContext(), s.DB.Bun, core.Principal(c).UserID)
	if err != nil {
		return err
	}
	return c.JSON(unreadCountResponse{Count: n})
}

// readNotification marks one of the caller's notifications read; another user's is
// not found (404), like an unknown id.
func (s *handlers) readNotification(c *fiber.Ctx) error {
	id, err := core.PathUUID(c, "id")
	if err != nil {
		return err
	}
	n, err := notify.MarkRead(c.UserContext(), s.DB.Bun, core.Principal(c).UserID, id)
	if err != nil {
		return err
	}
	return c.JSON(notify.ViewOf(n))
}

func (s *handlers) readAllNotifications(c *fiber.Ctx) error {
	if err := notify.MarkAllRead(c.UserContext(), s.DB.Bun, core.Principal(c).UserID); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
