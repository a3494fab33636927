package webhook_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/webhook"
	"github.com/taskweave/taskweave/store/storetest"
)

// TestOneTransactionsEventsShareOneLookup emits events of two projects in one
// transaction to webhooks subscribed to different types (one disabled) and checks each
// subscriber gets exactly the deliveries it asked for, with one job each, whatever the
// batching of the consumer.
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

	rows, err := db.Pool.Query(ctx, `SELECT d.id::text, d.webhook_id, d.event_type, d.payload, j.args->>'deliveryId' = d.id::text
		FROM webhook_deliveries AS d LEFT JOIN river_job AS j ON j.kind = 'webhook.deliver' AND j.args->>'deliveryId' = d.id::text
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
	var jobs int
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*) FROM river_job WHERE kind = 'webhook.deliver'").Scan(&jobs))
	require.Equal(t, 4, jobs)
}
