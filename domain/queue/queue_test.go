package queue_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/queue"
	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/store/storetest"
)

// testJob is the part of a river_job row these tests set.
type testJob struct {
	kind, queue, state string
	args               string
	ago                string // scheduled_at = now() - ago
}

func insertJobs(t *testing.T, db *store.DB, js ...testJob) []int64 {
	t.Helper()
	var ids []int64
	for _, j := range js {
		if j.args == "" {
			j.args = "{}"
		}
		if j.ago == "" {
			j.ago = "0 seconds"
		}
		var id int64
		err := db.Pool.QueryRow(context.Background(), `
			INSERT INTO river_job (args, kind, queue, state, max_attempts, priority, scheduled_at, finalized_at, attempted_at, attempt)
			VALUES ($1::jsonb, $2, $3, $4::river_job_state, 5, 1, now() - $5::interval,
				CASE WHEN $4 IN ('completed', 'cancelled', 'discarded') THEN now() END,
				CASE WHEN $4 = 'running' THEN now() END, CASE WHEN $4 = 'running' THEN 1 ELSE 0 END)
			RETURNING id`, j.args, j.kind, j.queue, j.state, j.ago).Scan(&id)
		require.NoError(t, err)
		ids = append(ids, id)
	}
	return ids
}

func newService(t *testing.T, db *store.DB) *queue.Service {
	t.Helper()
	client, err := river.NewClient(riverdatabasesql.New(db.SQL), &river.Config{})
	require.NoError(t, err)
	return queue.NewService(db.Bun, client, audit.NewRecorder(event.NewBus(client)))
}

func TestListMatchesArgsByContainment(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	p, i := uuid.New(), uuid.New()
	ids := insertJobs(t, db,
		testJob{kind: "k", queue: "default", state: "available", args: `{"projectId":"` + p.String() + `","issueId":"` + i.String() + `"}`},
		testJob{kind: "k", queue: "default", state: "available", args: `{"projectId":"` + p.String() + `","issueId":null}`},
		testJob{kind: "k", queue: "default", state: "available", args: `{"projectId":"` + uuid.NewString() + `"}`},
		testJob{kind: "k", queue: "default", state: "available", args: `{"nested":{"projectId":"` + p.String() + `"}}`},
	)
	svc := newService(t, db)
	ctx := context.Background()

	js, total, exact, err := svc.List(ctx, queue.Filter{ProjectID: &p}, nil, 0, 10)
	require.NoError(t, err)
	require.Equal(t, 2, total)
	require.True(t, exact)
	require.Equal(t, []int64{ids[1], ids[0]}, []int64{js[0].ID, js[1].ID}, "top-level members only, newest first")

	js, total, _, err = svc.List(ctx, queue.Filter{ProjectID: &p, IssueID: &i}, nil, 0, 10)
	require.NoError(t, err)
	require.Equal(t, 1, total)
	require.Equal(t, ids[0], js[0].ID)
	require.Nil(t, js[0].Errors, "the list leaves the error history out")

	// Unknown keys short-cut to an empty result.
	js, total, _, err = svc.List(ctx, queue.Filter{ProjectKey: "NOPE", IssueKey: "NOPE-1"}, nil, 0, 10)
	require.NoError(t, err)
	require.Zero(t, total)
	require.Empty(t, js)
}

// TestArgsFilterUsesTheGINIndex checks the plan of the list's containment filter: with
// sequential scans priced out (the test table is tiny), Postgres must be able to answer
// it from River's own GIN index on river_job.args, as River's migrations make it.
// Taskweave adds no second one: every job insert (a webhook delivery is one) would then
// maintain two GIN indexes. Both shapes of the issue filter are checked: an issueId
// member and an issueIds array.
func TestArgsFilterUsesTheGINIndex(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	ctx := context.Background()
	var def string
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT indexdef FROM pg_indexes WHERE indexname = 'river_job_args_index'`).Scan(&def))
	require.Contains(t, def, "USING gin (args)")

	tx, err := db.Pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	_, err = tx.Exec(ctx, "SET LOCAL enable_seqscan = off")
	require.NoError(t, err)
	id := uuid.NewString()
	rows, err := tx.Query(ctx, `EXPLAIN SELECT count(*) FROM river_job
		WHERE args @> '{"projectId":"`+id+`","issueId":"`+id+`"}'::jsonb OR args @> '{"issueIds":["`+id+`"]}'::jsonb`)
	require.NoError(t, err)
	var plan []string
	for rows.Next() {
		var line string
		require.NoError(t, rows.Scan(&line))
		plan = append(plan, line)
	}
	require.NoError(t, rows.Err())
	require.Regexp(t, `(?s)Bitmap Index Scan on river_job_args_index.*Bitmap Index Scan on river_job_args_index`, strings.Join(plan, "\n"))
}

func TestCollectorExportsDepthAndAge(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	insertJobs(t, db,
		testJob{kind: "webhook.deliver", queue: "webhooks", state: "available", ago: "2 minutes"},
		testJob{kind: "webhook.deliver", queue: "webhooks", state: "available", ago: "10 seconds"},
		testJob{kind: "webhook.deliver", queue: "webhooks", state: "discarded"},
		testJob{kind: "audit.record", queue: "audit", state: "running"},
	)
	// A job finished more than an hour ago is left out, with its (queue, kind).
	old := insertJobs(t, db, testJob{kind: "notify.mail", queue: "mail", state: "completed"})
	_, err := db.Pool.Exec(context.Background(), "UPDATE river_job SET finalized_at = now() - interval '2 hours' WHERE id = $1", old[0])
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	reg.MustRegister(queue.NewCollector(db.Pool, slog.New(slog.NewTextHandler(io.Discard, nil))))
	mfs, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		got[mf.GetName()] = mf
	}
	labels := func(m *dto.Metric) map[string]string {
		out := map[string]string{}
		for _, l := range m.GetLabel() {
			out[l.GetName()] = l.GetValue()
		}
		return out
	}
	depth := map[string]float64{}
	for _, m := range got["taskweave_river_jobs"].GetMetric() {
		l := labels(m)
		depth[l["queue"]+"/"+l["kind"]+"/"+l["state"]] = m.GetGauge().GetValue()
	}
	// Every state of every (queue, kind) present is exported, 0 when it has no job, so
	// the dashboards' available and retryable panels read 0, not no data.
	want := map[string]float64{}
	for _, qk := range []string{"webhooks/webhook.deliver", "audit/audit.record"} {
		for _, s := range queue.States {
			want[qk+"/"+s] = 0
		}
	}
	want["webhooks/webhook.deliver/available"] = 2
	want["webhooks/webhook.deliver/discarded"] = 1
	want["audit/audit.record/running"] = 1
	require.Equal(t, want, depth)
	ages := map[string]float64{}
	for _, m := range got["taskweave_river_oldest_available_job_age_seconds"].GetMetric() {
		l := labels(m)
		ages[l["queue"]+"/"+l["kind"]] = m.GetGauge().GetValue()
	}
	require.Len(t, ages, 2)
	require.InDelta(t, 120, ages["webhooks/webhook.deliver"], 30)
	require.Zero(t, ages["audit/audit.record"], "no job waiting: age 0")
	require.Contains(t, ages, "audit/audit.record")
}

// dashboardMetrics are the series the jobs dashboard may use, with their labels: the
// queue collector's gauges, the worker's JobMetrics, the webhook worker's, the service
// desk's and the automation worker's metrics.
var dashboardMetrics = map[string][]string{
	"taskweave_river_jobs":                             {"queue", "kind", "state"},
	"taskweave_river_oldest_available_job_age_seconds": {"queue", "kind"},
	"taskweave_river_job_run_duration_seconds":         {"queue", "kind", "outcome", "le"},
	"taskweave_river_job_failures_total":               {"queue", "kind", "state"},
	"taskweave_river_job_queue_wait_seconds":           {"queue", "kind", "le"},
	"taskweave_webhook_deliveries_total":               {"outcome"},
	"taskweave_webhook_delivery_latency_seconds":       {"le"},
	// The service desk's (domain/servicedesk.Metrics).
	"taskweave_servicedesk_tickets_total":  {"channel"},
	"taskweave_sla_breaches_total":         {"kind"},
	"taskweave_sla_escalations_total":      {},
	"taskweave_sla_scan_duration_seconds":  {"le"},
	"taskweave_sla_scans_total":            {"outcome"},
	"taskweave_mail_ingest_polls_total":    {"outcome"},
	"taskweave_mail_ingest_messages_total": {"outcome"},
	"taskweave_mail_ingest_failures_total": {"reason"},
	// The automation worker's (workers.newAutomationMetrics).
	"taskweave_automation_evaluations_total":     {"trigger", "outcome"},
	"taskweave_automation_actions_total":         {"type", "outcome"},
	"taskweave_automation_event_latency_seconds": {"le"},
	"taskweave_automation_scheduled_runs_total":  {"outcome"},
	// The SEND_WEBHOOK worker's (workers/automation_webhook_worker.go).
	"taskweave_automation_webhook_deliveries_total": {"outcome"},
	// The task runner's (domain/task.Metrics).
	"taskweave_tasks_finished_total": {"kind", "state"},
	"taskweave_task_items_total":     {"kind", "outcome"},
}

var (
	metricName = regexp.MustCompile(`taskweave_[a-z_]+`)
	// byClause and selector find the label names an expression groups or filters by.
	byClause = regexp.MustCompile(`by \(([^)]*)\)`)
	selector = regexp.MustCompile(`(taskweave_[a-z_]+)\{([^}]*)\}`)
	matcher  = regexp.MustCompile(`([a-z_]+)\s*(=~|!~|!=|=)`)
)

// baseMetric strips the histogram series suffixes.
func baseMetric(name string) string {
	for _, s := range []string{"_bucket", "_count", "_sum"} {
		if _, ok := dashboardMetrics[name]; !ok && strings.HasSuffix(name, s) {
			return strings.TrimSuffix(name, s)
		}
	}
	return name
}

func TestJobsDashboardNamesRealMetrics(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../dashboards/jobs-and-webhooks.json")
	require.NoError(t, err)
	var d struct {
		UID        string `json:"uid"`
		Title      string `json:"title"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
		Panels []struct {
			ID         int    `json:"id"`
			Type       string `json:"type"`
			Title      string `json:"title"`
			Datasource *struct {
				UID string `json:"uid"`
			} `json:"datasource"`
			GridPos *struct{ H, W, X, Y int } `json:"gridPos"`
			Targets []struct {
				Expr       string `json:"expr"`
				Datasource struct {
					UID string `json:"uid"`
				} `json:"datasource"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(raw, &d))
	require.Equal(t, "taskweave-jobs", d.UID)
	require.Equal(t, "Jobs and webhooks", d.Title)

	used := map[string]bool{}
	ids := map[int]bool{}
	check := func(where, expr string) {
		names := metricName.FindAllString(expr, -1)
		require.NotEmpty(t, names, "%s: %s names no metric", where, expr)
		for _, n := range names {
			base := baseMetric(n)
			_, ok := dashboardMetrics[base]
			require.True(t, ok, "%s: %s is not an exported metric", where, n)
			used[base] = true
		}
		// Every label grouped by must exist on every metric of the expression.
		for _, m := range byClause.FindAllStringSubmatch(expr, -1) {
			for _, l := range strings.Split(m[1], ",") {
				for _, n := range names {
					require.Contains(t, dashboardMetrics[baseMetric(n)], strings.TrimSpace(l), "%s: %s has no label %q", where, n, l)
				}
			}
		}
		for _, m := range selector.FindAllStringSubmatch(expr, -1) {
			for _, l := range matcher.FindAllStringSubmatch(m[2], -1) {
				require.Contains(t, dashboardMetrics[baseMetric(m[1])], l[1], "%s: %s has no label %q", where, m[1], l[1])
			}
		}
	}
	for _, p := range d.Panels {
		require.False(t, ids[p.ID], "panel id %d twice", p.ID)
		ids[p.ID] = true
		require.NotNil(t, p.GridPos, p.Title)
		if p.Type == "row" {
			continue
		}
		require.NotNil(t, p.Datasource, p.Title)
		require.Equal(t, "prometheus", p.Datasource.UID, p.Title)
		require.NotEmpty(t, p.Targets, p.Title)
		for _, tg := range p.Targets {
			require.Equal(t, "prometheus", tg.Datasource.UID, p.Title)
			check(p.Title, tg.Expr)
		}
	}
	for _, v := range d.Templating.List {
		check("variable "+v.Name, v.Definition)
	}
	for m := range dashboardMetrics {
		require.True(t, used[m], "no panel shows %s", m)
	}

	// Grafana's file provider loads every JSON of the folder compose.yaml mounts.
	prov, err := os.ReadFile("../../dashboards/provisioning/dashboards/taskweave.yaml")
	require.NoError(t, err)
	require.Contains(t, string(prov), "path: /etc/taskweave/dashboards")
	compose, err := os.ReadFile("../../compose.yaml")
	require.NoError(t, err)
	require.Contains(t, string(compose), "./dashboards:/etc/taskweave/dashboards")
}

// gauges gathers the collector's taskweave_river_jobs as queue/kind/state → value.
func gauges(t *testing.T, c *queue.Collector) map[string]float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "taskweave_river_jobs" {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			out[l["queue"]+"/"+l["kind"]+"/"+l["state"]] = m.GetGauge().GetValue()
		}
	}
	return out
}

// TestCollectorCountsFinishedJobsAtMostEveryInterval: the unfinished jobs are counted at
// every scrape; the finished ones come from queue_finished_counts, counted by the first
// scrape and then again only once the counts are older than the collector's interval,
// in the background, so a scrape never waits for it. The counts live in Postgres: a
// second collector (another replica) exports them without counting.
func TestCollectorCountsFinishedJobsAtMostEveryInterval(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	insertJobs(t, db,
		testJob{kind: "notify.event", queue: "notifications", state: "completed"},
		testJob{kind: "notify.event", queue: "notifications", state: "available"},
	)
	slow := queue.NewCollector(db.Pool, log).WithRefresh(time.Hour)
	got := gauges(t, slow)
	require.Equal(t, 1.0, got["notifications/notify.event/completed"], "the first scrape counts")
	require.Equal(t, 1.0, got["notifications/notify.event/available"])

	insertJobs(t, db,
		testJob{kind: "notify.event", queue: "notifications", state: "completed"},
		testJob{kind: "notify.event", queue: "notifications", state: "discarded"},
		testJob{kind: "notify.event", queue: "notifications", state: "available"},
		testJob{kind: "notify.event", queue: "notifications", state: "retryable"},
	)
	for _, c := range []*queue.Collector{slow, queue.NewCollector(db.Pool, log).WithRefresh(time.Hour)} {
		got = gauges(t, c)
		require.Equal(t, 2.0, got["notifications/notify.event/available"], "unfinished jobs: counted at every scrape")
		require.Equal(t, 1.0, got["notifications/notify.event/retryable"])
		require.Equal(t, 1.0, got["notifications/notify.event/completed"], "finished jobs: the counts of the last count")
		require.Zero(t, got["notifications/notify.event/discarded"])
	}
	var counted time.Time
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT refreshed_at FROM queue_finished_counts_state").Scan(&counted))

	// Older than the interval: a scrape starts a count in the background, a later one
	// exports it.
	fast := queue.NewCollector(db.Pool, log).WithRefresh(50 * time.Millisecond)
	time.Sleep(60 * time.Millisecond)
	require.Eventually(t, func() bool {
		got := gauges(t, fast)
		return got["notifications/notify.event/completed"] == 2 && got["notifications/notify.event/discarded"] == 1
	}, 10*time.Second, 20*time.Millisecond)
	var again time.Time
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT refreshed_at FROM queue_finished_counts_state").Scan(&again))
	require.True(t, again.After(counted))

	// A job finished more than an hour ago is not counted, and its (queue, kind) leaves.
	_, err := db.Pool.Exec(ctx, "UPDATE river_job SET finalized_at = now() - interval '2 hours' WHERE finalized_at IS NOT NULL")
	require.NoError(t, err)
	_, err = db.Pool.Exec(ctx, "DELETE FROM river_job WHERE finalized_at IS NULL")
	require.NoError(t, err)
	require.Empty(t, gauges(t, queue.NewCollector(db.Pool, log).WithRefresh(0)))
}
