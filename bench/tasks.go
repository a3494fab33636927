package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/taskweave/taskweave/domain/pipeline"
	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/workers"
)

// tasksResult is what the tasks phase measured: a bulk transition of the seeded issues
// and an import of a generated Jira CSV, each from its 202 to its SUCCEEDED.
type tasksResult struct {
	bulkItems, importItems     int
	bulkElapsed, importElapsed time.Duration
	bulkState, importState     string
}

// runTasks runs the task workers in this process (one worker client, as a worker
// process has) and times a bulk transition of up to 10,000 of the seeded issues, then
// the import of an n-row Jira CSV into a new project.
func runTasks(ctx context.Context, db *store.DB, c *client, s *seeded, n int) (tasksResult, error) {
	var r tasksResult
	inserter, err := jobs.NewInserter(db.SQL, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return r, err
	}
	bus := pipeline.New(inserter, pipeline.Config{}).Bus
	client, err := workers.NewClient(workers.Config{}, workers.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		DB: db, Registry: prometheus.NewRegistry(), Bus: bus})
	if err != nil {
		return r, err
	}
	if err := client.Start(ctx); err != nil {
		return r, err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(sctx)
	}()

	// The bulk transition: the first n issues to the project's IN_PROGRESS status.
	var keys []string
	var target string
	if err := db.Pool.QueryRow(ctx, `SELECT coalesce(array_agg(key ORDER BY number), '{}') FROM
		(SELECT key, number FROM issues WHERE project_id = $1 ORDER BY number LIMIT $2) x`, s.projectID, min(n, 10_000)).Scan(&keys); err != nil {
		return r, err
	}
	if err := db.Pool.QueryRow(ctx, `SELECT s.id::text FROM workflow_statuses s JOIN projects p ON p.workflow_id = s.workflow_id
		WHERE p.id = $1 AND s.category = 'IN_PROGRESS' ORDER BY s.position LIMIT 1`, s.projectID).Scan(&target); err != nil {
		return r, err
	}
	body, _ := json.Marshal(map[string]any{"issueKeys": keys, "changes": map[string]any{"statusId": target}})
	start := time.Now()
	raw, err := c.do(ctx, http.MethodPost, "/api/v1/projects/"+s.key+"/issues/bulk", s.token, body, http.StatusAccepted, true)
	if err != nil {
		return r, err
	}
	if r.bulkState, err = awaitTask(ctx, c, s.token, raw); err != nil {
		return r, err
	}
	r.bulkItems, r.bulkElapsed = len(keys), time.Since(start)

	// The import: a new project, an n-row CSV with labels, a comment and a sprint.
	key := "IMP" + strings.ToUpper(fmt.Sprintf("%04d", time.Now().UnixNano()%10000))
	pbody, _ := json.Marshal(map[string]string{"key": key, "name": "Import bench"})
	if _, err := c.do(ctx, http.MethodPost, "/api/v1/projects", s.token, pbody, http.StatusCreated, false); err != nil {
		return r, err
	}
	var csv bytes.Buffer
	csv.WriteString("Summary,Issue key,Issue Type,Status,Priority,Created,Description,Labels,Labels,Comment,Sprint\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&csv, "\"Imported issue %d\",OLD-%d,Bug,In Progress,High,12/Mar/24 9:15 AM,\"Line one\nline two\",l%d,shared,"+
			"\"13/Mar/24 10:00 AM;someone;a comment\",Sprint %d\n", i, i, i%20, i%5)
	}
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	_ = mw.WriteField("format", "jira-csv")
	fw, _ := mw.CreateFormFile("file", "jira.csv")
	_, _ = fw.Write(csv.Bytes())
	_ = mw.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/api/v1/projects/"+key+"/import", &form)
	if err != nil {
		return r, err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+s.token)
	start = time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		return r, err
	}
	raw, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusAccepted {
		return r, fmt.Errorf("import: status %d: %.200s (%v)", resp.StatusCode, raw, err)
	}
	if r.importState, err = awaitTask(ctx, c, s.token, raw); err != nil {
		return r, err
	}
	r.importItems, r.importElapsed = n, time.Since(start)
	return r, nil
}

// awaitTask polls the task of a 202 answer until it finishes and returns its state.
func awaitTask(ctx context.Context, c *client, token string, accepted []byte) (string, error) {
	var a struct {
		TaskID string `json:"taskId"`
	}
	if err := json.Unmarshal(accepted, &a); err != nil {
		return "", err
	}
	deadline := time.Now().Add(30 * time.Minute)
	for time.Now().Before(deadline) {
		raw, err := c.do(ctx, http.MethodGet, "/api/v1/tasks/"+a.TaskID, token, nil, http.StatusOK, true)
		if err != nil {
			return "", err
		}
		var t struct {
			State string `json:"state"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			return "", err
		}
		if t.State == "SUCCEEDED" || t.State == "FAILED" || t.State == "CANCELLED" {
			return t.State, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return "", fmt.Errorf("task %s did not finish within 30 minutes", a.TaskID)
}

// printTasks reports the tasks phase beside the create ceiling of the same run (0: the
// create phase did not run).
func printTasks(r tasksResult, createRPS float64) {
	fmt.Println()
	bulk := float64(r.bulkItems) / r.bulkElapsed.Seconds()
	imp := float64(r.importItems) / r.importElapsed.Seconds()
	fmt.Printf("tasks: bulk transition of %d issues %s in %s: %.0f issues/s\n", r.bulkItems, r.bulkState,
		r.bulkElapsed.Round(time.Millisecond), bulk)
	fmt.Printf("tasks: import of a %d-row Jira CSV %s in %s: %.0f issues/s\n", r.importItems, r.importState,
		r.importElapsed.Round(time.Millisecond), imp)
	if createRPS > 0 {
		fmt.Printf("tasks: beside POST /issues at %.0f/s (the create phase): bulk %.2f×, import %.2f× (one task, one worker)\n",
			createRPS, bulk/createRPS, imp/createRPS)
	}
}
