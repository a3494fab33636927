package notify

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/locale"
	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/store"
)

// Digest modes of the notification preferences (docs/api-conventions.md#notifications):
// OFF sends every notification e-mail at once; HOURLY and DAILY gather them into one
// e-mail per period.
const (
	DigestOff    = "OFF"
	DigestHourly = "HOURLY"
	DigestDaily  = "DAILY"
)

// DigestModes in their documented order.
var DigestModes = []string{DigestOff, DigestHourly, DigestDaily}

// KnownDigest reports whether m is a digest mode.
func KnownDigest(m string) bool {
	for _, k := range DigestModes {
		if k == m {
			return true
		}
	}
	return false
}

// TypeDigest is the type of a digest e-mail (X-Taskweave-Notification-Type).
const TypeDigest = "DIGEST"

// DigestDailyHour is when a DAILY period ends, in UTC (users have no time zone yet).
const DigestDailyHour = 8

// MaxDigestItems is how many notifications one digest lists; it names how many more
// there were.
const MaxDigestItems = 50

// digestUsersPerRun bounds the users one run sends to; the rest wait for the next run.
const digestUsersPerRun = 500

// digestKeep is how long a sent period's key is kept: far longer than a period, so no
// run can send a period again.
const digestKeep = 7 * 24 * time.Hour

// Digest is user's digest mode.
func Digest(ctx context.Context, db bun.IDB, user uuid.UUID) (string, error) {
	var mode string
	err := db.NewRaw("SELECT digest FROM notification_digest_settings WHERE user_id = ?", user).Scan(ctx, &mode)
	if store.IsNotFound(err) {
		return DigestOff, nil
	}
	if err != nil {
		return "", fmt.Errorf("read digest mode: %w", err)
	}
	return mode, nil
}

// SetDigest sets user's digest mode (checked at the edge). Items already waiting stay:
// switched OFF, they go out as one last digest at the job's next run.
func SetDigest(ctx context.Context, db bun.IDB, user uuid.UUID, mode string) error {
	var err error
	if mode == DigestOff {
		_, err = db.NewRaw("DELETE FROM notification_digest_settings WHERE user_id = ?", user).Exec(ctx)
	} else {
		_, err = db.NewRaw(`INSERT INTO notification_digest_settings (user_id, digest) VALUES (?, ?)
			ON CONFLICT (user_id) DO UPDATE SET digest = EXCLUDED.digest, updated_at = now()`, user, mode).Exec(ctx)
	}
	if err != nil {
		return fmt.Errorf("write digest mode: %w", err)
	}
	return nil
}

// UpdatePreferences applies a PUT of the preferences in one transaction: the changed
// types, and the digest mode unless digest is "". It returns every type and the mode.
func UpdatePreferences(ctx context.Context, db *bun.DB, user uuid.UUID, prefs []Preference, digest string) ([]Preference, string, error) {
	var out []Preference
	err := store.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		if digest != "" {
			if err := SetDigest(ctx, tx, user, digest); err != nil {
				return err
			}
		}
		var err error
		if out, err = SetPreferences(ctx, tx, user, prefs); err != nil {
			return err
		}
		digest, err = Digest(ctx, tx, user)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return out, digest, nil
}

// PeriodEnd is the end of the latest period of mode that ended at or before now: the
// full hour for HOURLY, DigestDailyHour UTC for DAILY, and now itself (to the second)
// for OFF, whose waiting items are due at once.
func PeriodEnd(mode string, now time.Time) time.Time {
	now = now.UTC()
	switch mode {
	case DigestHourly:
		return now.Truncate(time.Hour)
	case DigestDaily:
		end := time.Date(now.Year(), now.Month(), now.Day(), DigestDailyHour, 0, 0, 0, time.UTC)
		if end.After(now) {
			end = end.AddDate(0, 0, -1)
		}
		return end
	}
	return now.Truncate(time.Second)
}

// periodStart is the start of the period ending at end.
func periodStart(mode string, end time.Time) time.Time {
	if mode == DigestDaily {
		return end.AddDate(0, 0, -1)
	}
	return end.Add(-time.Hour)
}

// digestRow is the row of a notification e-mail waiting for its user's digest.
type digestRow struct {
	bun.BaseModel `bun:"table:notification_digest_items"`

	NotificationID uuid.UUID `bun:"notification_id,pk,type:uuid"`
	UserID         uuid.UUID `bun:"user_id,type:uuid"`
	Type           string    `bun:"type"`
	Title          string    `bun:"title"`
	Body           string    `bun:"body"`
	Link           string    `bun:"link"`
}

// digestItem is a notification waiting for its user's digest.
type digestItem struct {
	NotificationID uuid.UUID `bun:"notification_id"`
	Type           string    `bun:"type"`
	Title          string    `bun:"title"`
	Body           string    `bun:"body"`
	Link           string    `bun:"link"`
	CreatedAt      time.Time `bun:"created_at"`
}

// Digester sends the due digests: the periodic job's work (workers.DigestWorker).
type Digester struct {
	DB *bun.DB
	// Enqueue inserts the digest's e-mail job on the transaction that records the period.
	Enqueue func(ctx context.Context, tx bun.Tx, params ...river.InsertManyParams) error
	// BaseURL prefixes the notifications' links (TW_BASE_URL).
	BaseURL string
	// Now is the clock; nil is time.Now (tests move it).
	Now func() time.Time
}

// Run sends every due digest and returns how many e-mails it queued. A user is due when
// an item of theirs was created before the end of their latest period (PeriodEnd). Each
// user's digest is one transaction that inserts the period's key (user, end),
// deletes the items created before the end and queues one e-mail (jobs.MailSend, unique
// by an id derived from the key) with those still unread: a second run of the same
// period, here or on another worker, finds the key and sends nothing. A period whose
// items were all read meanwhile sends nothing.
func (d *Digester) Run(ctx context.Context) (int, error) {
	now := time.Now
	if d.Now != nil {
		now = d.Now
	}
	at := now().UTC()
	var due []struct {
		UserID uuid.UUID `bun:"user_id"`
		Mode   string    `bun:"digest"`
		Oldest time.Time `bun:"oldest"`
	}
	// Only users with an item before the end of their period, whose period was not sent
	// yet, so users not due cannot crowd the due ones out of the batch.
	err := d.DB.NewRaw(`WITH u AS (
			SELECT i.user_id, coalesce(s.digest, 'OFF') AS digest, min(i.created_at) AS oldest
			FROM notification_digest_items AS i
			LEFT JOIN notification_digest_settings AS s ON s.user_id = i.user_id
			GROUP BY i.user_id, s.digest
		), e AS (
			SELECT u.*, CASE u.digest WHEN 'HOURLY' THEN ?::timestamptz WHEN 'DAILY' THEN ?::timestamptz ELSE ?::timestamptz END AS period_end
			FROM u
		)
		SELECT e.user_id, e.digest, e.oldest FROM e
		WHERE e.oldest < e.period_end
		  AND NOT EXISTS (SELECT 1 FROM notification_digests AS d WHERE d.user_id = e.user_id AND d.period_end = e.period_end)
		ORDER BY e.oldest LIMIT ?`,
		PeriodEnd(DigestHourly, at), PeriodEnd(DigestDaily, at), PeriodEnd(DigestOff, at), digestUsersPerRun).Scan(ctx, &due)
	if err != nil && !store.IsNotFound(err) {
		return 0, fmt.Errorf("read due digests: %w", err)
	}
	sent := 0
	for _, u := range due {
		end := PeriodEnd(u.Mode, at)
		if !u.Oldest.Before(end) {
			continue
		}
		ok, err := d.send(ctx, u.UserID, u.Mode, end)
		if err != nil {
			return sent, err
		}
		if ok {
			sent++
		}
	}
	if _, err := d.DB.NewRaw("DELETE FROM notification_digests WHERE sent_at < ?", at.Add(-digestKeep)).Exec(ctx); err != nil {
		return sent, fmt.Errorf("clean digest periods: %w", err)
	}
	return sent, nil
}

// send sends user's digest of the period ending at end; ok is false when it sent none.
func (d *Digester) send(ctx context.Context, user uuid.UUID, mode string, end time.Time) (ok bool, err error) {
	err = store.InTx(ctx, d.DB, func(ctx context.Context, tx bun.Tx) error {
		ok = false
		var key uuid.UUID
		err := tx.NewRaw(`INSERT INTO notification_digests (user_id, period_end) VALUES (?, ?)
			ON CONFLICT DO NOTHING RETURNING user_id`, user, end).Scan(ctx, &key)
		if store.IsNotFound(err) {
			return nil // sent already
		}
		if err != nil {
			return fmt.Errorf("record digest period: %w", err)
		}
		var items []digestItem
		err = tx.NewRaw(`DELETE FROM notification_digest_items AS i WHERE i.user_id = ? AND i.created_at < ?
			RETURNING i.notification_id, i.type, i.title, i.body, i.link, i.created_at`, user, end).Scan(ctx, &items)
		if err != nil && !store.IsNotFound(err) {
			return fmt.Errorf("take digest items: %w", err)
		}
		if len(items) == 0 {
			return nil
		}
		// RETURNING has no order: the digest lists the oldest first.
		slices.SortFunc(items, func(a, b digestItem) int {
			if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
				return c
			}
			return bytes.Compare(a.NotificationID[:], b.NotificationID[:])
		})
		ids := make([]uuid.UUID, 0, len(items))
		for _, it := range items {
			ids = append(ids, it.NotificationID)
		}
		var read []uuid.UUID
		if err := tx.NewRaw("SELECT id FROM notifications WHERE id IN (?) AND read", bun.In(ids)).Scan(ctx, &read); err != nil && !store.IsNotFound(err) {
			return fmt.Errorf("read digest notifications: %w", err)
		}
		seen := make(map[uuid.UUID]bool, len(read))
		for _, id := range read {
			seen[id] = true
		}
		// A kind whose e-mails were switched off since is left out too.
		var off []string
		if err := tx.NewRaw("SELECT type FROM notification_preferences WHERE user_id = ? AND NOT email", user).Scan(ctx, &off); err != nil && !store.IsNotFound(err) {
			return fmt.Errorf("read digest preferences: %w", err)
		}
		muted := make(map[string]bool, len(off))
		for _, t := range off {
			muted[t] = true
		}
		unread := items[:0]
		for _, it := range items {
			if !seen[it.NotificationID] && !muted[it.Type] {
				unread = append(unread, it)
			}
		}
		if len(unread) == 0 {
			return nil // everything was read in the app: an empty period sends nothing
		}
		var lang *string
		if err := tx.NewRaw("SELECT language FROM users WHERE id = ?", user).Scan(ctx, &lang); err != nil {
			if store.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("read digest reader: %w", err)
		}
		l := locale.Pick(lang, "")
		start := periodStart(mode, end)
		if mode == DigestOff || unread[0].CreatedAt.Before(start) {
			start = unread[0].CreatedAt.UTC().Truncate(time.Minute)
		}
		if _, err := tx.NewRaw("UPDATE notification_digests SET items = ? WHERE user_id = ? AND period_end = ?",
			len(unread), user, end).Exec(ctx); err != nil {
			return fmt.Errorf("record digest period: %w", err)
		}
		ok = true
		return d.Enqueue(ctx, tx, river.InsertManyParams{Args: jobs.MailSend{
			ID: DigestID(user, end), UserID: user, Type: TypeDigest, Lang: l,
			Subject: locale.T(l, "digest.subject", "count", strconv.Itoa(len(unread))),
			Body:    d.digestBody(l, unread, start, end), Link: "/notifications",
		}})
	})
	return ok, err
}

// DigestID is the id of user's digest of the period ending at end: its Message-ID and
// its e-mail job's unique key.
func DigestID(user uuid.UUID, end time.Time) uuid.UUID {
	return uuid.NewSHA1(idSpace, []byte("digest/"+user.String()+"/"+end.UTC().Format(time.RFC3339)))
}

// digestBody lists the items, oldest first, each with its title, its text and its link.
func (d *Digester) digestBody(lang string, items []digestItem, start, end time.Time) string {
	const layout = "2006-01-02 15:04"
	var b strings.Builder
	b.WriteString(locale.T(lang, "digest.intro", "count", strconv.Itoa(len(items)),
		"start", start.UTC().Format(layout), "end", end.UTC().Format(layout)))
	base := strings.TrimRight(d.BaseURL, "/")
	if base == "" {
		base = "http://localhost:8080"
	}
	for i, it := range items {
		if i == MaxDigestItems {
			b.WriteString("\n\n" + locale.T(lang, "digest.more", "count", strconv.Itoa(len(items)-MaxDigestItems)))
			break
		}
		b.WriteString("\n\n* " + oneLine(it.Title) + "\n  " + strings.ReplaceAll(it.Body, "\n", "\n  "))
		if it.Link != "" {
			b.WriteString("\n  " + base + it.Link)
		}
	}
	return b.String()
}
