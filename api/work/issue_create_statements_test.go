package work_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// statementLog records the first words of every statement sent to Postgres while on.
type statementLog struct {
	mu  sync.Mutex
	on  bool
	sql []string
}

func (l *statementLog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.on {
		l.sql = append(l.sql, strings.Join(strings.Fields(d.SQL), " "))
	}
	return ctx
}

func (l *statementLog) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// during runs fn and returns the statements sent meanwhile.
func (l *statementLog) during(fn func()) []string {
	l.mu.Lock()
	l.on, l.sql = true, nil
	l.mu.Unlock()
	fn()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.on = false
	return l.sql
}

// TestIssueCreateStatements pins the statements of POST /issues: the project access
// with the credential's user row and, in the same statement, everything the create and
// its event consumers need (default status, custom fields, audit toggle, automation
// triggers, whether the project has webhooks), then in the transaction the insert that
// takes the key counter, and the commit. Nothing runs between the counter and the commit unless the event has
// something to write (here: an enabled webhook's delivery records).
func TestIssueCreateStatements(t *testing.T) {
	t.Parallel()
	log := &statementLog{}
	h := apitest.TracedHarness(t, log)
	f := cfFixtureOn(t, h)
	f.Create(t, map[string]any{"title": "warm"})

	words := func(stmts []string) []string {
		out := make([]string, len(stmts))
		for i, s := range stmts {
			switch {
			case strings.HasPrefix(s, "WITH seq AS ( UPDATE projects"):
				out[i] = "insert"
			case strings.HasPrefix(s, "SELECT ds.id, ds.name, ds.category"):
				out[i] = "context"
			case strings.HasPrefix(s, "WITH m AS ("):
				out[i] = "webhook"
			case strings.Contains(s, "JobInsertFastMany"):
				out[i] = "jobs"
			case strings.Contains(s, "PGNotifyMany"):
				out[i] = "notify"
			case strings.HasPrefix(s, "SELECT p.id, p.key") && strings.Contains(s, "AS ds ON true"):
				out[i] = "access+context"
			case strings.HasPrefix(s, "SELECT p.id, p.key"):
				out[i] = "access"
			default:
				out[i] = s[:min(len(s), 40)]
			}
		}
		return out
	}
	create := func() []string {
		return words(log.during(func() {
			r := f.H.Do("POST", f.Path("/issues"), map[string]any{"title": "x", "customFieldValues": []any{cfv(f.number, "1")}}, f.Owner.Access)
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		}))
	}
	require.Equal(t, []string{"access+context", "begin", "insert", "INSERT INTO \"custom_field_values\" AS \"cf", "commit"},
		create(), "values are written after the insert (their key needs the issue); nothing reads under the counter")
	r := f.H.Do("POST", f.Path("/issues"), map[string]any{"title": "plain"}, f.Owner.Access)
	require.Equal(t, http.StatusCreated, r.Status)
	got := words(log.during(func() {
		require.Equal(t, http.StatusCreated, f.H.Do("POST", f.Path("/issues"), map[string]any{"title": "y"}, f.Owner.Access).Status)
	}))
	require.Equal(t, []string{"access+context", "begin", "insert", "commit"}, got)

	// An enabled webhook: its records are written under the counter, as they must be.
	apitest.CreateWebhook(t, h, f.Key, f.Owner.Access, map[string]any{"url": apitest.PublicWebhookURL, "events": []string{"issue.created"}})
	got = words(log.during(func() {
		require.Equal(t, http.StatusCreated, f.H.Do("POST", f.Path("/issues"), map[string]any{"title": "z"}, f.Owner.Access).Status)
	}))
	require.Equal(t, []string{"access+context", "begin", "insert", "webhook", "jobs", "notify", "commit"}, got,
		"the records, their jobs and River's insert notification")
	require.Equal(t, 1, h.Count("SELECT count(*) FROM webhook_deliveries"))
}
