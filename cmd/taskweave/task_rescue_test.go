package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// TestKilledWorkersImportResumesWithoutDuplicates: a worker SIGKILLed in the middle of
// an import (its job running, some batches committed, the one in flight not) leaves the
// job to River's rescuer; another worker takes it up at the task's committed cursor and
// the import ends SUCCEEDED with exactly one issue per row: none lost, none twice
// (docs/tasks.md#how-a-task-runs).
func TestKilledWorkersImportResumesWithoutDuplicates(t *testing.T) {
	t.Parallel()
	dir, bin, dbURL := binaryOnClone(t)
	const rows = 3000

	env := map[string]string{
		"TW_DATABASE_URL":    dbURL,
		"TW_JWT_SECRET":      strings.Repeat("task-rescue-secret-", 3),
		"TW_ATTACHMENTS_DIR": filepath.Join(dir, "attachments"),
		"TW_LOG_LEVEL":       "warn",
		// A short job timeout gives short slices (a third of it) and, with the rescue
		// horizon at its floor, a killed worker's job is rescued at the rescuer's next pass.
		"TW_JOB_TIMEOUT":      "6s",
		"TW_JOB_RESCUE_AFTER": "6s",
	}
	apiAddr := loopbackAddr(t)
	startProc(t, dir, "api", bin, []string{"api"}, withSetting(env, "TW_HTTP_ADDR", apiAddr))
	waitUntil(t, 30*time.Second, "the api answers", func() bool { return status(apiAddr, "/readyz") == http.StatusOK })
	c := &client{t: t, base: "http://" + apiAddr}
	token := c.do("POST", "/api/v1/auth/register", "", map[string]any{
		"email": "importer@example.com", "displayName": "Importer", "password": "correct-horse-battery"}, 201)["accessToken"].(string)
	c.do("POST", "/api/v1/projects", token, map[string]any{"key": "IMP", "name": "Import"}, 201)

	var csv strings.Builder
	csv.WriteString("Summary,Issue key,Issue Type,Priority,Description\n")
	for i := 1; i <= rows; i++ {
		fmt.Fprintf(&csv, "Row %d,OLD-%d,Task,Medium,\"Line one of %d\nline two\"\n", i, i, i)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	require.NoError(t, mw.WriteField("format", "jira-csv"))
	fw, err := mw.CreateFormFile("file", "jira.csv")
	require.NoError(t, err)
	_, err = io.WriteString(fw, csv.String())
	require.NoError(t, err)
	require.NoError(t, mw.Close())
	req, err := http.NewRequest("POST", c.base+"/api/v1/projects/IMP/import", &body)
	require.NoError(t, err)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusAccepted, res.StatusCode, "%s", raw)
	var accepted struct{ TaskID string }
	require.NoError(t, json.Unmarshal(raw, &accepted))
	id := accepted.TaskID

	pool, err := pgxpool.New(t.Context(), dbURL)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	var jobID int64
	jobState := func() (state string, cursor, total int) {
		err := pool.QueryRow(context.Background(), `SELECT j.id, j.state::text, t.cursor, t.total FROM tasks AS t
			JOIN river_job AS j ON j.args->>'taskId' = t.id::text WHERE t.id = $1`, id).Scan(&jobID, &state, &cursor, &total)
		require.NoError(t, err)
		return state, cursor, total
	}

	// Worker A plans the import and commits some batches; it is killed while its job runs.
	killA := startKillable(t, dir, "workerA", bin, []string{"worker"}, withSetting(env, "TW_HTTP_ADDR", loopbackAddr(t)))
	waitFor(t, 60*time.Second, "worker A is mid-import", func() (bool, string) {
		state, cursor, total := jobState()
		return state == "running" && cursor >= 100 && cursor < total-200, fmt.Sprintf("job %s, cursor %d of %d", state, cursor, total)
	})
	killA()
	state, killedAt, total := jobState()
	require.Equal(t, rows, total)
	require.Equal(t, "running", state, "the dead worker's job is left running, for the rescuer")
	require.Less(t, killedAt, total)
	var issues int
	require.NoError(t, pool.QueryRow(context.Background(), "SELECT count(*) FROM issues").Scan(&issues))
	require.Equal(t, killedAt, issues, "what the committed batches created, the batch in flight rolled back")
	t.Logf("killed at %d of %d items", killedAt, total)

	// Worker B rescues the job and finishes from the cursor.
	startProc(t, dir, "workerB", bin, []string{"worker"}, withSetting(env, "TW_HTTP_ADDR", loopbackAddr(t)))
	var task map[string]any
	waitFor(t, 150*time.Second, "the import finishes on worker B", func() (bool, string) {
		task = c.do("GET", "/api/v1/tasks/"+id, token, nil, 200)
		return task["state"] != "QUEUED" && task["state"] != "RUNNING", fmt.Sprintf("%v %v", task["state"], task["progress"])
	})
	require.Equal(t, "SUCCEEDED", task["state"], "%v", task)
	require.Equal(t, map[string]any{"done": float64(rows), "total": float64(rows), "failed": 0.0}, task["progress"])
	var rescued bool
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT errors::text LIKE '%Stuck job rescued%' FROM river_job
		WHERE id = $1`, jobID).Scan(&rescued))
	require.True(t, rescued, "the job came back through River's rescuer")

	var n, keys, titles, sources int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*), count(DISTINCT i.key), count(DISTINCT i.title),
		count(DISTINCT ii.source_key) FROM issues AS i JOIN issue_imports AS ii ON ii.issue_id = i.id WHERE ii.task_id = $1`, id).
		Scan(&n, &keys, &titles, &sources))
	require.Equal(t, []int{rows, rows, rows, rows}, []int{n, keys, titles, sources}, "one issue per row, none twice")
	var numbers int
	require.NoError(t, pool.QueryRow(context.Background(), "SELECT max(number) FROM issues").Scan(&numbers))
	require.Equal(t, rows, numbers, "no key was taken by the rolled-back batch")
}
