package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/locale"
	"github.com/taskweave/taskweave/domain/realtime"
	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/store"
)

// Notification types this package creates from events (the others come from the
// service desk and automation).
const (
	TypeCommentMention = "COMMENT_MENTION"
	TypeIssueAssigned  = "ISSUE_ASSIGNED"
	TypeCommentAdded   = "COMMENT_ADDED"
	TypeStatusChanged  = "STATUS_CHANGED"
)

// Text limits. A live push is one pg_notify payload (realtime.MaxPayload, 7900 bytes);
// even when every rune is a character JSON escapes to six bytes (<, >, &), 300 + 600
// runes stay well below it, so no title or body can make a push fail.
const (
	maxTitleRunes = 300
	maxBodyRunes  = 600
)

// idSpace is the UUID v5 namespace of notification ids.
var idSpace = uuid.MustParse("6b0c2f4e-8f8e-4c1e-9d7a-3a1c5e2b7d90")

// NotificationID derives the id of the notification of type typ for user from the job
// that creates it: a retried job computes the same ids, and ON CONFLICT DO NOTHING
// keeps it from notifying twice.
func NotificationID(jobID int64, user uuid.UUID, typ string) uuid.UUID {
	return uuid.NewSHA1(idSpace, []byte(strconv.FormatInt(jobID, 10)+"/"+user.String()+"/"+typ))
}

// TaskNotificationID is NotificationID for the changes of a task (a bulk change): the
// same for every change of the task, so they fold into one notification (and e-mail)
// per user and type.
func TaskNotificationID(taskID, user uuid.UUID, typ string) uuid.UUID {
	return uuid.NewSHA1(idSpace, []byte("task/"+taskID.String()+"/"+user.String()+"/"+typ))
}

// Dispatcher creates the notifications of one event job.
type Dispatcher struct {
	DB *bun.DB
	// Enqueue inserts jobs on tx (the worker's insert-only River client over the same
	// database/sql transaction), so e-mail jobs commit with the notifications.
	Enqueue func(ctx context.Context, tx bun.Tx, params ...river.InsertManyParams) error
	// Mail says whether e-mail is configured (TW_SMTP_ADDR); without it no mail job is
	// even inserted.
	Mail bool
}

// want is one notification the rules ask for, before users and preferences are read.
type want struct {
	user uuid.UUID
	typ  string
}

// person is a recipient (or the actor) as the dispatch needs them.
type person struct {
	ID          uuid.UUID `bun:"id"`
	DisplayName string    `bun:"display_name"`
	Language    *string   `bun:"language"`
	// Reachable: active, not deleted, and still able to see the project (owner, member
	// row or organization member), so nobody learns of a project they have left.
	Reachable bool `bun:"reachable"`
	// Digest is the recipient's digest mode: with HOURLY or DAILY, e-mails wait for
	// the digest (notification_digest_items) instead of going out one by one.
	Digest string `bun:"digest"`
}

// Dispatch resolves the recipients of ev (job jobID), applies their preferences and, in
// one transaction, inserts the notification rows, publishes them live and inserts the
// e-mail jobs. Run again for the same job it inserts, pushes and mails nothing more.
func (d *Dispatcher) Dispatch(ctx context.Context, jobID int64, ev jobs.NotifyEvent) error {
	return store.InTx(ctx, d.DB, func(ctx context.Context, tx bun.Tx) error {
		var iss struct {
			ReporterID uuid.UUID  `bun:"reporter_id"`
			AssigneeID *uuid.UUID `bun:"assignee_id"`
		}
		err := tx.NewSelect().Table("issues").Column("reporter_id", "assignee_id").Where("id = ?", ev.IssueID).Scan(ctx, &iss)
		if store.IsNotFound(err) {
			return nil // deleted since: a notification would link to nothing
		}
		if err != nil {
			return fmt.Errorf("read issue %s: %w", ev.IssueID, err)
		}
		wants := recipients(ev, iss.ReporterID, iss.AssigneeID)
		if len(wants) == 0 {
			return nil
		}
		people, err := loadPeople(ctx, tx, ev.ProjectID, wants, ev.ActorID)
		if err != nil {
			return err
		}
		prefs, err := loadPreferences(ctx, tx, wants)
		if err != nil {
			return err
		}

		link, projectKey, issueKey := Link(ev.ProjectKey, ev.IssueKey), ev.ProjectKey, ev.IssueKey
		var (
			rows    []store.Notification
			mails   []river.InsertManyParams
			waiting []digestRow
		)
		for _, w := range wants {
			p, ok := people[w.user]
			if !ok || !p.Reachable {
				continue
			}
			pref := prefs[w]
			email := pref.Email && d.Mail
			if !pref.InApp && !email {
				continue
			}
			lang := locale.Pick(p.Language, "")
			title, body := render(lang, w.typ, ev, actorName(lang, ev.ActorID, people))
			id := NotificationID(jobID, w.user, w.typ)
			if ev.TaskID != nil {
				// One per task, user and type: the first stands, the rest conflict with it.
				id = TaskNotificationID(*ev.TaskID, w.user, w.typ)
			}
			if pref.InApp {
				rows = append(rows, store.Notification{ID: id, UserID: w.user, Type: w.typ, Title: title, Body: body,
					Link: &link, ProjectKey: &projectKey, IssueKey: &issueKey})
			}
			switch {
			case email && p.Digest != DigestOff:
				waiting = append(waiting, digestRow{NotificationID: id, UserID: w.user, Type: w.typ, Title: title, Body: body, Link: link})
			case email:
				mails = append(mails, river.InsertManyParams{Args: jobs.MailSend{ID: id, UserID: w.user, Type: w.typ,
					Lang: lang, Subject: title, Body: body, Link: link}})
			}
		}

		if len(rows) > 0 {
			// Only rows really inserted come back; a retry's rows already exist and
			// are neither inserted nor pushed again.
			var inserted []store.Notification
			err := tx.NewInsert().Model(&rows).On("CONFLICT (id) DO NOTHING").Returning("*").Scan(ctx, &inserted)
			if err != nil && !store.IsNotFound(err) {
				return fmt.Errorf("insert notifications: %w", err)
			}
			msgs := make([]realtime.Message, 0, len(inserted))
			for i := range inserted {
				raw, err := json.Marshal(ViewOf(&inserted[i]))
				if err != nil {
					return fmt.Errorf("notification message: %w", err)
				}
				msgs = append(msgs, realtime.Message{
					Destination: realtime.UserDestination(inserted[i].UserID, realtime.NotificationQueue), Body: raw})
			}
			if err := realtime.Publish(ctx, tx, msgs...); err != nil {
				return err
			}
		}
		if len(waiting) > 0 {
			// Keyed by the notification's id, so a retry queues nothing twice.
			if _, err := tx.NewInsert().Model(&waiting).On("CONFLICT (notification_id) DO NOTHING").Exec(ctx); err != nil {
				return fmt.Errorf("queue digest items: %w", err)
			}
		}
		// MailSend is unique by id, so a retry inserts no second e-mail.
		return d.Enqueue(ctx, tx, mails...)
	})
}

// recipients applies the rules: who gets which type for ev, never the actor, each
// user at most once per event (a mention wins over COMMENT_ADDED).
func recipients(ev jobs.NotifyEvent, reporter uuid.UUID, assignee *uuid.UUID) []want {
	var out []want
	seen := map[uuid.UUID]bool{}
	add := func(u uuid.UUID, typ string) {
		if u == uuid.Nil || seen[u] || (ev.ActorID != nil && *ev.ActorID == u) {
			return
		}
		seen[u] = true
		out = append(out, want{user: u, typ: typ})
	}
	switch ev.Event {
	case jobs.NotifyAssigned:
		if ev.AssigneeID != nil {
			add(*ev.AssigneeID, TypeIssueAssigned)
		}
	case jobs.NotifyStatusChanged:
		add(reporter, TypeStatusChanged)
		if assignee != nil {
			add(*assignee, TypeStatusChanged)
		}
	case jobs.NotifyCommented:
		for _, u := range ev.Mentioned {
			add(u, TypeCommentMention)
		}
		add(reporter, TypeCommentAdded)
		if assignee != nil {
			add(*assignee, TypeCommentAdded)
		}
	case jobs.NotifyDirect:
		if KnownType(ev.Type) {
			for _, u := range ev.Recipients {
				add(u, ev.Type)
			}
		}
	}
	return out
}

// loadPeople reads the recipients and the actor in one query.
func loadPeople(ctx context.Context, tx bun.Tx, projectID uuid.UUID, wants []want, actor *uuid.UUID) (map[uuid.UUID]person, error) {
	ids := make([]uuid.UUID, 0, len(wants)+1)
	for _, w := range wants {
		ids = append(ids, w.user)
	}
	if actor != nil {
		ids = append(ids, *actor)
	}
	var rows []person
	err := tx.NewRaw(`SELECT u.id, u.display_name, u.language,
			u.active AND u.deleted_at IS NULL
			  AND (p.owner_id = u.id OR pm.user_id IS NOT NULL OR om.user_id IS NOT NULL) AS reachable,
			coalesce(ds.digest, 'OFF') AS digest
		FROM users AS u
		JOIN projects AS p ON p.id = ?
		LEFT JOIN notification_digest_settings AS ds ON ds.user_id = u.id
		LEFT JOIN project_members AS pm ON pm.project_id = p.id AND pm.user_id = u.id
		LEFT JOIN organization_members AS om ON om.org_id = p.org_id AND om.user_id = u.id
		WHERE u.id IN (?)`, projectID, bun.In(ids)).Scan(ctx, &rows)
	if err != nil && !store.IsNotFound(err) {
		return nil, fmt.Errorf("read recipients: %w", err)
	}
	out := make(map[uuid.UUID]person, len(rows))
	for _, r := range rows {
		out[r.ID] = r
	}
	return out, nil
}

// loadPreferences reads every recipient's preference for the type they would get, in
// one query; a missing row means both channels are on.
func loadPreferences(ctx context.Context, tx bun.Tx, wants []want) (map[want]Preference, error) {
	users := make([]uuid.UUID, 0, len(wants))
	types := make([]string, 0, len(wants))
	out := make(map[want]Preference, len(wants))
	for _, w := range wants {
		users, types = append(users, w.user), append(types, w.typ)
		out[w] = Preference{Type: w.typ, InApp: true, Email: true}
	}
	var rows []store.NotificationPreference
	err := tx.NewSelect().Model(&rows).Where("user_id IN (?)", bun.In(users)).Where("type IN (?)", bun.In(types)).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("read preferences: %w", err)
	}
	for _, r := range rows {
		w := want{user: r.UserID, typ: r.Type}
		if _, ok := out[w]; ok {
			out[w] = Preference{Type: r.Type, InApp: r.InApp, Email: r.Email}
		}
	}
	return out, nil
}

// actorName is who did it, as the reader sees it: the actor's display name, or the
// product's name for a system change.
func actorName(lang string, actor *uuid.UUID, people map[uuid.UUID]person) string {
	if actor != nil {
		if p, ok := people[*actor]; ok && p.DisplayName != "" {
			return p.DisplayName
		}
	}
	return locale.T(lang, "notification.actor.system")
}

// render writes the title and body of a notification of type typ in lang.
func render(lang, typ string, ev jobs.NotifyEvent, actor string) (title, body string) {
	args := []string{"actor", actor, "issueKey", ev.IssueKey, "issueTitle", ev.IssueTitle,
		"oldStatus", ev.OldStatus, "newStatus", ev.NewStatus, "excerpt", ev.Excerpt}
	for k, v := range ev.Args {
		args = append(args, k, v)
	}
	return truncate(locale.T(lang, "notification."+typ+".title", args...), maxTitleRunes),
		truncate(locale.T(lang, "notification."+typ+".body", args...), maxBodyRunes)
}
