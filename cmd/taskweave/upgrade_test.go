// An external test package, like the dashboards test: it sees the binary only as an
// operator does, through its subcommands (helpers in process_test.go).
package main_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/migrations"
	"github.com/taskweave/taskweave/store/storetest"
)

// releaseCommit is the last release on River v0.41.0 (River migration 7, Taskweave
// migration 19), whose webhook consumer wrote River's job rows with its own SQL.
const releaseCommit = "9fb6f03557db4d37533dd41ad8b6a5c6d8fd6b6c"

// TestUpgradeFromRelease is the upgrade an operator does (docs/operations.md#upgrades):
// the release binary of releaseCommit migrates an empty database and, through its API,
// queues webhook deliveries, notifications and audit records that no worker runs; then
// this tree's binary migrates the same database and its worker runs every one of those
// jobs. The release binary is built from git history once per machine and cached under
// os.UserCacheDir()/taskweave-test/<commit>/.
func TestUpgradeFromRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the upgrade test builds two binaries and runs them")
	}
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()

	oldBin := releaseBinary(t, releaseCommit)
	newBin := filepath.Join(dir, "taskweave-new")
	if out, err := exec.Command(goCmd(), "build", "-o", newBin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build of this tree: %v\n%s", err, out)
	}

	dbURL, pool := emptyDatabase(t)
	env := map[string]string{
		"TW_DATABASE_URL":          dbURL,
		"TW_JWT_SECRET":            strings.Repeat("upgrade-test-secret-", 3),
		"TW_WEBHOOK_ALLOW_PRIVATE": "true", // the receiver is on loopback
		"TW_ATTACHMENTS_DIR":       filepath.Join(dir, "attachments"),
		"TW_LOG_LEVEL":             "warn",
		"TW_DATABASE_MAX_CONNS":    "8",
	}

	// 1. The release migrates the empty database.
	runToEnd(t, dir, "old-migrate", oldBin, "migrate", env)
	require.Equal(t, 7, queryInt(t, pool, "SELECT max(version) FROM river_migration"), "River v0.41.0's last migration")
	require.Equal(t, 19, queryInt(t, pool, "SELECT max(version) FROM schema_migrations"), "the release's last migration")
	require.Equal(t, "CREATE INDEX river_job_args_index ON public.river_job USING gin (args jsonb_path_ops)",
		indexDef(t, pool, "river_job_args_index"), "the release's migration 0018")

	// 2. The release's API queues jobs; no worker runs.
	rec := &receiver{}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	apiAddr := loopbackAddr(t)
	stopAPI := startProc(t, dir, "old-api", oldBin, []string{"api"}, withSetting(env, "TW_HTTP_ADDR", apiAddr))
	waitFor(t, 30*time.Second, "the release's API answers /healthz", func() (bool, string) {
		res, err := http.Get("http://" + apiAddr + "/healthz")
		if err != nil {
			return false, err.Error()
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK, res.Status
	})
	c := &client{t: t, base: "http://" + apiAddr + "/api/v1"}
	owner := c.do("POST", "/auth/register", "", map[string]any{
		"email": "owner@example.com", "displayName": "Owner", "password": "correct-horse-battery"}, 201)["accessToken"].(string)
	dev := c.do("POST", "/auth/register", "", map[string]any{
		"email": "dev@example.com", "displayName": "Dev", "password": "correct-horse-battery"}, 201)["accessToken"].(string)
	devID := c.do("GET", "/auth/me", dev, nil, 200)["id"].(string)
	c.do("POST", "/projects", owner, map[string]any{"key": "UPG", "name": "Upgrade"}, 201)
	c.do("POST", "/projects/UPG/members", owner, map[string]any{"userId": devID, "role": "MEMBER"}, 201)
	hook := c.do("POST", "/projects/UPG/webhooks", owner, map[string]any{"url": srv.URL + "/hook",
		"events": []string{"issue.created", "issue.status_changed"}}, 201)
	secret := hook["plaintextSecret"].(string)
	require.NotEmpty(t, secret)
	hookID := hook["webhook"].(map[string]any)["id"].(string)
	// Assigned to Dev by Owner: Dev is notified of the assignment and of the move.
	issue := c.do("POST", "/projects/UPG/issues", owner, map[string]any{"title": "Survive the upgrade", "assigneeId": devID}, 201)
	var inProgress string
	for _, s := range c.do("GET", "/projects/UPG/workflow", owner, nil, 200)["statuses"].([]any) {
		if st := s.(map[string]any); st["name"] == "In Progress" {
			inProgress = st["id"].(string)
		}
	}
	require.NotEmpty(t, inProgress, "the default workflow has In Progress")
	c.do("PATCH", "/projects/UPG/board/move", owner, map[string]any{"issueId": issue["id"], "newStatusId": inProgress}, 200)
	c.do("POST", "/projects/UPG/webhooks/"+hookID+"/test", owner, nil, 201)
	stopAPI()

	type job struct {
		ID          int64
		Kind, State string
	}
	rows, err := pool.Query(ctx, "SELECT id, kind, state::text FROM river_job ORDER BY id")
	require.NoError(t, err)
	oldJobs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[job])
	require.NoError(t, err)
	perKind := map[string]int{}
	var oldIDs []int64
	for _, j := range oldJobs {
		require.Equal(t, "available", j.State, "job %d (%s): no worker has run", j.ID, j.Kind)
		perKind[j.Kind]++
		oldIDs = append(oldIDs, j.ID)
	}
	t.Logf("jobs queued by the release: %v", perKind)
	require.Equal(t, 3, perKind["webhook.deliver"], "issue created, status changed, ping: one job each")
	require.Equal(t, 2, perKind["notify.event"], "assignment and status change")
	require.Positive(t, perKind["audit.record"])
	require.Zero(t, rec.count(), "nothing is delivered before a worker runs")
	require.Equal(t, 3, queryInt(t, pool, "SELECT count(*) FROM webhook_deliveries WHERE delivered_at IS NULL"))
	require.Zero(t, queryInt(t, pool, "SELECT count(*) FROM notifications"))

	// 3. This tree's binary migrates.
	runToEnd(t, dir, "new-migrate", newBin, "migrate", env)
	riverVersion, err := migrations.RiverVersion()
	require.NoError(t, err)
	require.GreaterOrEqual(t, riverVersion, 8, "River v0.51's migration 8 at least")
	require.Equal(t, riverVersion, queryInt(t, pool, "SELECT max(version) FROM river_migration"))
	all, err := migrations.All()
	require.NoError(t, err)
	rows, err = pool.Query(ctx, "SELECT version FROM schema_migrations ORDER BY version")
	require.NoError(t, err)
	applied, err := pgx.CollectRows(rows, pgx.RowTo[int])
	require.NoError(t, err)
	var want []int
	for _, m := range all {
		want = append(want, m.Version)
	}
	require.Equal(t, want, applied, "every embedded migration, once")
	require.Equal(t, "CREATE INDEX river_job_args_index ON public.river_job USING gin (args)",
		indexDef(t, pool, "river_job_args_index"), "River's own index again (migration 0020)")
	require.Equal(t, "CREATE INDEX river_job_metadata_index ON public.river_job USING gin (metadata)",
		indexDef(t, pool, "river_job_metadata_index"))
	current, err := migrations.Current(ctx, pool)
	require.NoError(t, err)
	require.True(t, current, "migrations.Current after the new migrate")

	// 4. This tree's worker runs every job the release queued.
	workerAddr := loopbackAddr(t)
	startProc(t, dir, "new-worker", newBin, []string{"worker"}, withSetting(env, "TW_HTTP_ADDR", workerAddr))
	waitFor(t, 60*time.Second, "every job queued by the release completed", func() (bool, string) {
		rows, err := pool.Query(ctx, `SELECT id, kind, state::text, attempt, errors::text
			FROM river_job WHERE id = ANY ($1) AND state <> 'completed' ORDER BY id`, oldIDs)
		require.NoError(t, err)
		type pending struct {
			ID          int64
			Kind, State string
			Attempt     int
			Errors      *string
		}
		left, err := pgx.CollectRows(rows, pgx.RowToStructByPos[pending])
		require.NoError(t, err)
		var b strings.Builder
		for _, j := range left {
			errs := ""
			if j.Errors != nil {
				errs = *j.Errors
			}
			fmt.Fprintf(&b, "\n  job %d %s: %s, attempt %d, errors %s", j.ID, j.Kind, j.State, j.Attempt, errs)
			if j.State == "discarded" || j.State == "cancelled" || j.Attempt > 1 {
				t.Fatalf("a job queued by the release failed under the new worker:%s", b.String())
			}
		}
		return len(left) == 0, b.String()
	})

	// Each delivery record reached the receiver once, as saved, signed with the secret.
	rows, err = pool.Query(ctx, `SELECT id::text, event_type, payload, delivered_at IS NOT NULL, coalesce(response_status, 0)
		FROM webhook_deliveries ORDER BY created_at`)
	require.NoError(t, err)
	type delivery struct {
		ID, Event, Payload string
		Delivered          bool
		Status             int
	}
	saved, err := pgx.CollectRows(rows, pgx.RowToStructByPos[delivery])
	require.NoError(t, err)
	got := rec.all()
	require.Len(t, got, len(saved), "one request per delivery record")
	var events []string
	for _, d := range saved {
		require.True(t, d.Delivered, "delivery %s (%s) marked delivered", d.ID, d.Event)
		require.Equal(t, http.StatusOK, d.Status)
		i := slices.IndexFunc(got, func(r received) bool { return r.delivery == d.ID })
		require.GreaterOrEqual(t, i, 0, "delivery %s (%s) received", d.ID, d.Event)
		r := got[i]
		require.Equal(t, d.Event, r.event)
		require.Equal(t, d.Payload, r.body, "the body is the saved payload")
		require.NotEmpty(t, r.signature, "X-Taskweave-Signature")
		require.Equal(t, sign(r.body, secret), r.signature)
		events = append(events, d.Event)
	}
	require.ElementsMatch(t, []string{"issue.created", "issue.status_changed", "ping"}, events)

	rows, err = pool.Query(ctx, "SELECT type FROM notifications WHERE user_id = $1", devID)
	require.NoError(t, err)
	types, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"ISSUE_ASSIGNED", "STATUS_CHANGED"}, types, "Dev's notifications")
	require.Positive(t, queryInt(t, pool, "SELECT count(*) FROM audit_events"), "the audit records were written")
}

// releaseBinary returns the taskweave binary of commit, building it from git history
// (git archive, go build) unless the cache already holds it.
func releaseBinary(t *testing.T, commit string) string {
	t.Helper()
	cacheDir, err := os.UserCacheDir()
	require.NoError(t, err, "a cache directory for the release binary")
	bin := filepath.Join(cacheDir, "taskweave-test", commit, "taskweave")
	if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o100 != 0 {
		return bin
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("the upgrade test builds release %s from git history, but git is not installed: %v", commit, err)
	}
	if out, err := exec.Command(git, "-C", root, "cat-file", "-e", commit+"^{commit}").CombinedOutput(); err != nil {
		t.Fatalf("the upgrade test builds release %s from git history, but %s has no such commit "+
			"(a shallow clone? run `git fetch --unshallow`): %v %s", commit, root, err, out)
	}
	src := t.TempDir()
	archive := exec.Command(git, "-C", root, "archive", commit)
	untar := exec.Command("tar", "-x", "-C", src)
	untar.Stdin, err = archive.StdoutPipe()
	require.NoError(t, err)
	var archiveErr, untarOut bytes.Buffer
	archive.Stderr = &archiveErr
	untar.Stdout, untar.Stderr = &untarOut, &untarOut
	require.NoError(t, untar.Start(), "tar")
	require.NoError(t, archive.Run(), "git archive %s: %s", commit, &archiveErr)
	require.NoError(t, untar.Wait(), "tar: %s", &untarOut)

	require.NoError(t, os.MkdirAll(filepath.Dir(bin), 0o755))
	// Built beside its final name and renamed: a concurrent run sees no half-written file.
	tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid())
	build := exec.Command(goCmd(), "build", "-o", tmp, "./cmd/taskweave")
	build.Dir = src
	// The release's own go.mod decides its modules (River v0.41.0), whatever workspace
	// the test runs in.
	build.Env = append(os.Environ(), "GOWORK=off")
	start := time.Now()
	if out, err := build.CombinedOutput(); err != nil {
		_ = os.Remove(tmp)
		t.Fatalf("go build of release %s: %v\n%s", commit, err, out)
	}
	require.NoError(t, os.Rename(tmp, bin))
	t.Logf("built release %s in %s, cached as %s", commit[:7], time.Since(start).Round(time.Second), bin)
	return bin
}

// emptyDatabase creates a database with nothing in it, dropped when the test ends.
func emptyDatabase(t *testing.T) (string, *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, storetest.AdminURL())
	require.NoError(t, err)
	defer admin.Close(ctx)
	name := "tw_upgrade_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:12]
	_, err = admin.Exec(ctx, "CREATE DATABASE "+name)
	require.NoError(t, err)
	// Registered before the processes start, so it runs after their cleanups stop them.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		admin, err := pgx.Connect(ctx, storetest.AdminURL())
		if err != nil {
			t.Errorf("drop %s: %v", name, err)
			return
		}
		defer admin.Close(ctx)
		if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
	u, err := url.Parse(storetest.AdminURL())
	require.NoError(t, err, "TW_TEST_DATABASE_URL must be a postgres:// URL")
	u.Path = "/" + name
	dbURL := u.String()
	// The processes get only the URL: it must name the new database, never the admin one.
	cfg, err := pgxpool.ParseConfig(dbURL)
	require.NoError(t, err)
	require.Equal(t, name, cfg.ConnConfig.Database, "the test database's URL names it")
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return dbURL, pool
}

func queryInt(t *testing.T, pool *pgxpool.Pool, sql string) int {
	t.Helper()
	var n *int
	require.NoError(t, pool.QueryRow(context.Background(), sql).Scan(&n), sql)
	require.NotNil(t, n, "%s: NULL", sql)
	return *n
}

func indexDef(t *testing.T, pool *pgxpool.Pool, name string) string {
	t.Helper()
	var def string
	require.NoError(t, pool.QueryRow(context.Background(),
		"SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND indexname = $1", name).Scan(&def), name)
	return def
}

// receiver records every webhook request and answers 200.
type receiver struct {
	mu  sync.Mutex
	got []received
}

type received struct {
	event, delivery, signature, body string
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.got = append(r.got, received{event: req.Header.Get("X-Taskweave-Event"), delivery: req.Header.Get("X-Taskweave-Delivery"),
		signature: req.Header.Get("X-Taskweave-Signature"), body: string(body)})
	r.mu.Unlock()
	_, _ = w.Write([]byte("ok"))
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

func (r *receiver) all() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// sign is the documented signature: sha256= and the hex HMAC-SHA256 of the body.
func sign(body, secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(body))
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}
