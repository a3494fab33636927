package notify

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/store"
)

// ErrNotFound means no notification of that id belongs to the caller; another user's
// notification is not found either, so ids of others cannot be probed.
var ErrNotFound = errors.New("notify: notification not found")

// View is a notification as the API shows it (api/openapi/87-notifications.yaml). The API
// answers with it and the live push sends the same bytes, so a client treats both alike.
type View struct {
	ID         uuid.UUID `json:"id"`
	Type       string    `json:"type"`
	Title      string    `json:"title"`
	Body       string    `json:"body"`
	Link       *string   `json:"link"`
	Read       bool      `json:"read"`
	CreatedAt  string    `json:"createdAt"`
	IssueKey   *string   `json:"issueKey"`
	ProjectKey *string   `json:"projectKey"`
}

// ViewOf turns a row into its View (instants RFC 3339 UTC with Z, as everywhere).
func ViewOf(n *store.Notification) View {
	return View{ID: n.ID, Type: n.Type, Title: n.Title, Body: n.Body, Link: n.Link, Read: n.Read,
		CreatedAt: n.CreatedAt.UTC().Format(time.RFC3339Nano), IssueKey: n.IssueKey, ProjectKey: n.ProjectKey}
}

// Link is the web client's route of an issue.
func Link(projectKey, issueKey string) string { return "/p/" + projectKey + "/issues/" + issueKey }

// List returns one page of user's notifications, newest first (id breaks ties so pages
// never overlap), and the total: two queries whatever the page holds, both on the
// notifications_user index.
//
// after, in a cursor walk, is the last notification handed out: the page is the ones
// after it in that order (store.After), found on the index rather than skipped.
func List(ctx context.Context, db bun.IDB, user uuid.UUID, unreadOnly bool, after *store.After, offset, limit int) ([]store.Notification, int, error) {
	q := db.NewSelect().Model((*store.Notification)(nil)).Where("user_id = ?", user)
	if unreadOnly {
		q = q.Where("NOT read")
	}
	total, err := q.Count(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("count notifications: %w", err)
	}
	var rows []store.Notification
	if after != nil {
		q = q.Where("(created_at, id) < (?, ?)", after.Time, after.ID)
	}
	if int(total) > offset {
		err = q.OrderExpr("created_at DESC, id DESC").Offset(int64(offset)).Limit(int64(limit)).Scan(ctx, &rows)
		if err != nil {
			return nil, 0, fmt.Errorf("list notifications: %w", err)
		}
	}
	return rows, int(total), nil
}

// UnreadCount counts user's unread notifications (the partial index answers it).
func UnreadCount(ctx context.Context, db bun.IDB, user uuid.UUID) (int, error) {
	n, err := db.NewSelect().Model((*store.Notification)(nil)).Where("user_id = ?", user).Where("NOT read").Count(ctx)
	if err != nil {
		return 0, fmt.Errorf("count unread notifications: %w", err)
	}
	return int(n), nil
}

// MarkRead marks one of user's notifications read (again, harmlessly) and returns it.
func MarkRead(ctx context.Context, db bun.IDB, user, id uuid.UUID) (*store.Notification, error) {
	var n store.Notification
	err := db.NewUpdate().Model(&n).Set("read = true").Where("id = ?", id).Where("user_id = ?", user).
		Returning("*").Scan(ctx)
	if err != nil {
		if store.IsNotFound(err) {
			return nil, ErrNotFound
		}
		return nil, fmt.Errorf("mark notification read: %w", err)
	}
	return &n, nil
}

// MarkAllRead marks every unread notification of user read.
func MarkAllRead(ctx context.Context, db bun.IDB, user uuid.UUID) error {
	_, err := db.NewUpdate().Model((*store.Notification)(nil)).Set("read = true").
		Where("user_id = ?", user).Where("NOT read").Exec(ctx)
	if err != nil {
		return fmt.Errorf("mark notifications read: %w", err)
	}
	return nil
}
