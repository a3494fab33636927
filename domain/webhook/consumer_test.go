package webhook_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/webhook"
	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/store/storetest"
)

// TestOneTransactionsEventsShareOneLookup emits events of two projects in one
// transaction to webhooks subscribed to different types (one disabled) and checks each
// subscriber gets exactly the deliveries it asked for, and one job per webhook carrying
// all of that webhook's deliveries and their issues.
func TestOneTransactionsEventsShareOneLookup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewDB(t)
	var userID uuid.UUID
	require.NoError(t, db.Pool.QueryRow(ctx, "INSERT INTO users (email, display_name) VALUES ($1, 'U') RETURNING id",
		uuid.NewString()+"@example.com").Scan(&userID))
	project := func() issue.Subject {
		s := issue.Subject{ProjectKey: "W" + strings.ToUpper(strings.ReplaceAll(uuid.NewString(), "-", "")[:7])}
		require.NoError(t, db.Pool.QueryRow(ctx, "INSERT INTO projects (key, name, owner_id) VALUES ($1, 'P', $2) RETURNING id",
			s.ProjectKey, userID).Scan(&s.ProjectID))
		return s
	}
	hook := func(p issue.Subject, enabled bool, events ...string) uuid.UUID {
		var id uuid.UUID
		require.NoError(t, db.Pool.QueryRow(ctx, `INSERT INTO webhooks (project_id, url, secret, events, enabled)
			VALUES ($1, 'https://203.0.113.10/', 's', $2, $3) RETURNING id`, p.ProjectID, events, enabled).Scan(&id))
		return id
	}
	p1, p2 := project(), project()
	created1 := hook(p1, true, webhook.EventIssueCreated)
	deleted1 := hook(p1, true, webhook.EventIssueDeleted, webhook.EventSprintStarted)
	hook(p1, false, webhook.EventIssueCreated)
	both2 := hook(p2, true, webhook.EventIssueCreated, webhook.EventIssueDeleted)

	client, err := river.NewClient(riverdatabasesql.New(db.SQL), &river.Config{})
	require.NoError(t, err)
	bus := event.NewBus(client)
	webhook.RegisterConsumers(bus, webhook.Config{})
	subject := func(p issue.Subject, n int) issue.Subject {
		p.IssueID, p.IssueKey, p.Title = uuid.New(), p.ProjectKey+"-"+string(rune('0'+n)), "t"
		return p
	}
	a, b, c := subject(p1, 1), subject(p2, 2), subject(p1, 3)
	tx, err := db.Bun.BeginTx(ctx, nil)
	require.NoError(t, err)
	require.NoError(t, bus.Emit(ctx, tx,
		issue.Created{Subject: a, At: time.Now()},
		issue.Created{Subject: b, At: time.Now()},
		issue.Deleted{Subject: c, At: time.Now()},
		issue.Deleted{Subject: b, At: time.Now()},
	))
	require.NoError(t, tx.Commit())

	rows, err := db.Pool.Query(ctx, `SELECT d.id::text, d.webhook_id, d.event_type, d.payload, j.args->>'webhookId' = d.webhook_id::text
		FROM webhook_deliveries AS d LEFT JOIN river_job AS j ON j.kind = 'webhook.deliver' AND j.args->'deliveryIds' ? d.id::text
		ORDER BY d.webhook_id, d.event_type`)
	require.NoError(t, err)
	got := map[uuid.UUID][]string{}
	for rows.Next() {
		var (
			id, typ, payload string
			hookID           uuid.UUID
			hasJob           *bool
		)
		require.NoError(t, rows.Scan(&id, &hookID, &typ, &payload, &hasJob))
		require.NotNil(t, hasJob, "a job for every delivery")
		require.True(t, *hasJob, "the job sends to the delivery's webhook")
		var body struct {
			ID         string `json:"id"`
			Event      string `json:"event"`
			ProjectKey string `json:"projectKey"`
			Data       struct {
				IssueID string `json:"issueId"`
			} `json:"data"`
		}
		require.NoError(t, json.Unmarshal([]byte(payload), &body), payload)
		require.Equal(t, id, body.ID, "the body carries its own delivery id")
		require.Equal(t, typ, body.Event)
		require.NotEmpty(t, body.ProjectKey)
		got[hookID] = append(got[hookID], typ+" "+body.Data.IssueID)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, map[uuid.UUID][]string{
		created1: {"issue.created " + a.IssueID.String()},
		deleted1: {"issue.deleted " + c.IssueID.String()},
		both2:    {"issue.created " + b.IssueID.String(), "issue.deleted " + b.IssueID.String()},
	}, got)
	jobRows, err := db.Pool.Query(ctx, `SELECT args->>'webhookId', args->>'projectId', jsonb_array_length(args->'deliveryIds'), args->'issueIds'
		FROM river_job WHERE kind = 'webhook.deliver' AND queue = 'webhooks' AND max_attempts = 3`)
	require.NoError(t, err)
	jobs := map[string]string{}
	for jobRows.Next() {
		var hookID, projectID, issues string
		var n int
		require.NoError(t, jobRows.Scan(&hookID, &projectID, &n, &issues))
		var ids []string
		require.NoError(t, json.Unmarshal([]byte(issues), &ids))
		jobs[hookID] = fmt.Sprint(projectID, " ", n, " ", ids)
	}
	require.NoError(t, jobRows.Err())
	require.Equal(t, map[string]string{
		created1.String(): fmt.Sprint(p1.ProjectID, " 1 ", []string{a.IssueID.String()}),
		deleted1.String(): fmt.Sprint(p1.ProjectID, " 1 ", []string{c.IssueID.String()}),
		both2.String():    fmt.Sprint(p2.ProjectID, " 2 ", []string{b.IssueID.String()}),
	}, jobs, "one job per webhook, its issues once each")
}

// TestALargeTransactionSplitsIntoJobs: more deliveries to one webhook than a job
// carries take several jobs, each full but the last, together covering every delivery
// exactly once.
func TestALargeTransactionSplitsIntoJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewDB(t)
	hookID, p, bus, _ := seededBus(t, db)
	n := 2*jobs.DeliveriesPerJob + 3
	evs := make([]event.Event, n)
	for i := range evs {
		s := p
		s.IssueID, s.IssueKey, s.Title = uuid.New(), fmt.Sprintf("%s-%d", p.ProjectKey, i+1), "t"
		evs[i] = issue.Created{Subject: s, At: time.Now()}
	}
	tx, err := db.Bun.BeginTx(ctx, nil)
	require.NoError(t, err)
	require.NoError(t, bus.Emit(ctx, tx, evs...))
	require.NoError(t, tx.Commit())

	rows, err := db.Pool.Query(ctx, `SELECT jsonb_array_length(args->'deliveryIds') FROM river_job
		WHERE kind = 'webhook.deliver' AND args->>'webhookId' = $1 ORDER BY jsonb_array_length(args->'deliveryIds') DESC`, hookID.String())
	require.NoError(t, err)
	sizes, err := pgx.CollectRows(rows, pgx.RowTo[int])
	require.NoError(t, err)
	require.Equal(t, []int{jobs.DeliveriesPerJob, jobs.DeliveriesPerJob, 3}, sizes)
	var covered, distinct int
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT d.id) FROM river_job AS j
		CROSS JOIN jsonb_array_elements_text(j.args->'deliveryIds') AS e(id)
		JOIN webhook_deliveries AS d ON d.id = e.id::uuid AND d.webhook_id = $1
		WHERE j.kind = 'webhook.deliver'`, hookID).Scan(&covered, &distinct))
	require.Equal(t, n, covered)
	require.Equal(t, n, distinct)
}

// TestDeliveryJobsGoThroughRiver: the consumer answers its jobs to the bus, which
// inserts them with River's client: one job for the transaction's deliveries to the
// webhook, args in event order with the issue once, the configured attempts, River's
// insert notification on the webhooks queue, and nothing for a transaction without
// subscribers.
func TestDeliveryJobsGoThroughRiver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewDB(t)
	hookID, p, bus, _ := seededBus(t, db)
	listener, err := db.Pool.Acquire(ctx)
	require.NoError(t, err)
	defer listener.Release()
	_, err = listener.Exec(ctx, `LISTEN "public.river_insert"`)
	require.NoError(t, err)

	_, err = db.Pool.Exec(ctx, "UPDATE webhooks SET events = '{issue.created,issue.deleted}' WHERE id = $1", hookID)
	require.NoError(t, err)
	s := p
	s.IssueID, s.IssueKey, s.Title = uuid.New(), p.ProjectKey+"-1", "t"
	emit := func(evs ...event.Event) {
		t.Helper()
		tx, err := db.Bun.BeginTx(ctx, nil)
		require.NoError(t, err)
		require.NoError(t, bus.Emit(ctx, tx, evs...))
		require.NoError(t, tx.Commit())
	}
	emit(issue.StatusChanged{Subject: s, At: time.Now()}) // no subscriber: no job
	emit(issue.Created{Subject: s, At: time.Now()}, issue.Deleted{Subject: s, At: time.Now()})

	wait, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	n, err := listener.Conn().WaitForNotification(wait)
	require.NoError(t, err, "the insert notifies River's insert topic")
	var payload struct{ Queue string }
	require.NoError(t, json.Unmarshal([]byte(n.Payload), &payload), n.Payload)
	require.Equal(t, jobs.QueueWebhooks, payload.Queue)

	var (
		raw         []byte
		count       int
		maxAttempts int
		queue       string
	)
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT (array_agg(args))[1], count(*), max(max_attempts), max(queue)
		FROM river_job WHERE kind = 'webhook.deliver'`).Scan(&raw, &count, &maxAttempts, &queue))
	require.Equal(t, 1, count, "one job for the one transaction with deliveries")
	require.Equal(t, webhook.Config{}.WithDefaults().MaxAttempts(), maxAttempts)
	require.Equal(t, jobs.QueueWebhooks, queue)
	var args jobs.WebhookDeliver
	require.NoError(t, json.Unmarshal(raw, &args))
	// issue.created sorts before issue.deleted, the order they were emitted in.
	rows, err := db.Pool.Query(ctx, "SELECT id FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY event_type", hookID)
	require.NoError(t, err)
	deliveries, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	require.NoError(t, err)
	require.Len(t, deliveries, 2)
	require.Equal(t, jobs.WebhookDeliver{DeliveryIDs: deliveries, WebhookID: hookID, ProjectID: p.ProjectID,
		IssueIDs: []uuid.UUID{s.IssueID}}, args, "both deliveries in event order, the issue once")
}

// seededBus seeds a webhook (SeedWebhook) and returns it with its project and a bus
// whose webhook consumers insert through client.
func seededBus(t *testing.T, db *store.DB) (uuid.UUID, issue.Subject, *event.Bus, *river.Client[*sql.Tx]) {
	t.Helper()
	hookID := webhook.SeedWebhook(t, db)
	var p issue.Subject
	require.NoError(t, db.Pool.QueryRow(context.Background(),
		"SELECT p.id, p.key FROM webhooks AS w JOIN projects AS p ON p.id = w.project_id WHERE w.id = $1",
		hookID).Scan(&p.ProjectID, &p.ProjectKey))
	client, err := river.NewClient(riverdatabasesql.New(db.SQL), &river.Config{})
	require.NoError(t, err)
	bus := event.NewBus(client)
	webhook.RegisterConsumers(bus, webhook.Config{})
	return hookID, p, bus, client
}

// TestDeletedWebhooksTakeTheirDeliveries: with no foreign key from the records to their
// webhook (migration 0019), the delete trigger removes a webhook's records, whether the
// webhook is deleted itself or with its project, and the key-share lock of the saving
// statement settles both races with a delete: records saved by a transaction the delete
// had to wait for are removed with the webhook, and a save that had to wait for the
// delete saves nothing.
func TestDeletedWebhooksTakeTheirDeliveries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewDB(t)
	count := func(hookID uuid.UUID) (records, jobs int) {
		t.Helper()
		require.NoError(t, db.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM webhook_deliveries WHERE webhook_id = $1),
			(SELECT count(*) FROM river_job WHERE kind = 'webhook.deliver' AND args->>'webhookId' = $1::text)`,
			hookID).Scan(&records, &jobs))
		return records, jobs
	}
	created := func(p issue.Subject) event.Event {
		s := p
		s.IssueID, s.IssueKey, s.Title = uuid.New(), p.ProjectKey+"-1", "t"
		return issue.Created{Subject: s, At: time.Now()}
	}
	emit := func(bus *event.Bus, p issue.Subject) {
		t.Helper()
		tx, err := db.Bun.BeginTx(ctx, nil)
		require.NoError(t, err)
		require.NoError(t, bus.Emit(ctx, tx, created(p), created(p)))
		require.NoError(t, tx.Commit())
	}
	// waitsForLock reports whether the backend running a statement that mentions marker is
	// blocked on a lock.
	waitsForLock := func(marker string) bool {
		var n int
		require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%'`, marker).Scan(&n))
		return n > 0
	}

	t.Run("deleted webhook", func(t *testing.T) {
		hookID, p, bus, _ := seededBus(t, db)
		emit(bus, p)
		records, _ := count(hookID)
		require.Equal(t, 2, records)
		_, err := db.Pool.Exec(ctx, "DELETE FROM webhooks WHERE id = $1", hookID)
		require.NoError(t, err)
		records, _ = count(hookID)
		require.Zero(t, records)
	})

	t.Run("deleted project", func(t *testing.T) {
		hookID, p, bus, _ := seededBus(t, db)
		emit(bus, p)
		_, err := db.Pool.Exec(ctx, "DELETE FROM projects WHERE id = $1", p.ProjectID)
		require.NoError(t, err)
		records, _ := count(hookID)
		require.Zero(t, records)
	})

	t.Run("delete waits for a saving transaction", func(t *testing.T) {
		hookID, p, bus, _ := seededBus(t, db)
		tx, err := db.Bun.BeginTx(ctx, nil)
		require.NoError(t, err)
		defer func() { _ = tx.Rollback() }() // a failed check must not leave the lock held
		require.NoError(t, bus.Emit(ctx, tx, created(p)))
		marker := "/* delete-" + hookID.String() + " */"
		done := make(chan error, 1)
		go func() {
			_, err := db.Pool.Exec(ctx, "DELETE FROM webhooks WHERE id = $1 "+marker, hookID)
			done <- err
		}()
		require.Eventually(t, func() bool { return waitsForLock(marker) }, 5*time.Second, 10*time.Millisecond,
			"the delete waits for the transaction saving records")
		require.NoError(t, tx.Commit())
		require.NoError(t, <-done)
		records, _ := count(hookID)
		require.Zero(t, records, "the committed records went with their webhook")
	})

	t.Run("save waits for a deleting transaction", func(t *testing.T) {
		hookID, p, bus, _ := seededBus(t, db)
		del, err := db.Pool.Begin(ctx)
		require.NoError(t, err)
		defer func() { _ = del.Rollback(ctx) }()
		_, err = del.Exec(ctx, "DELETE FROM webhooks WHERE id = $1", hookID)
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() {
			tx, err := db.Bun.BeginTx(ctx, nil)
			if err != nil {
				done <- err
				return
			}
			if err := bus.Emit(ctx, tx, created(p)); err != nil {
				_ = tx.Rollback()
				done <- err
				return
			}
			done <- tx.Commit()
		}()
		require.Eventually(t, func() bool { return waitsForLock("FOR KEY SHARE") }, 5*time.Second, 10*time.Millisecond,
			"the save waits for the transaction deleting the webhook")
		require.NoError(t, del.Commit(ctx))
		require.NoError(t, <-done)
		records, jobs := count(hookID)
		require.Zero(t, records, "nothing saved for a deleted webhook")
		require.Zero(t, jobs)
	})
}
