package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/taskweave/taskweave/domain/attachment"
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
	export                     exportResult
}

// benchAttachmentsDir is where the bench's server and workers keep attachment files.
var benchAttachmentsDir = filepath.Join(os.TempDir(), "taskweave-bench-attachments")

// targetExportHeapMiB is the most the heap may grow while a project is exported and its
// zip downloaded, whatever the attachments weigh: both stream.
const targetExportHeapMiB = 64

// runTasks runs the task workers in this process (one worker client, as a worker
// process has) and times a bulk transition of up to 10,000 of the seeded issues, then
// the import of an n-row Jira CSV into a new project.
func runTasks(ctx context.Context, db *store.DB, c *client, s *seeded, n, exportMiB int) (tasksResult, error) {
	var r tasksResult
	inserter, err := jobs.NewInserter(db.SQL, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return r, err
	}
	bus := pipeline.New(inserter, pipeline.Config{}).Bus
	files, err := attachment.NewLocal(benchAttachmentsDir)
	if err != nil {
		return r, err
	}
	client, err := workers.NewClient(workers.Config{}, workers.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		DB: db, Registry: prometheus.NewRegistry(), Bus: bus, Attachments: attachment.NewStores(files)})
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
	if exportMiB > 0 {
		r.export, err = runExportMemory(ctx, db, c, s, files, exportMiB)
	}
	return r, err
}

// exportResult is the export part of the tasks phase: a project with exportMiB of
// attachments exported and downloaded, with the peak heap of this process (API and
// worker both) above the heap before it.
type exportResult struct {
	mib                   int
	elapsed, download     time.Duration
	size                  int64
	state                 string
	base, peak, peakFetch uint64
}

// runExportMemory attaches files of 16 MiB (random bytes, written to storage and
// recorded in SQL) to an issue of a new project until there are mib of them, exports
// the project and downloads the zip, sampling the heap every 20 ms.
func runExportMemory(ctx context.Context, db *store.DB, c *client, s *seeded, files attachment.Storage, mib int) (exportResult, error) {
	r := exportResult{mib: mib}
	key := "EXP" + strings.ToUpper(fmt.Sprintf("%04d", time.Now().UnixNano()%10000))
	pbody, _ := json.Marshal(map[string]string{"key": key, "name": "Export bench"})
	if _, err := c.do(ctx, http.MethodPost, "/api/v1/projects", s.token, pbody, http.StatusCreated, false); err != nil {
		return r, err
	}
	raw, err := c.do(ctx, http.MethodPost, "/api/v1/projects/"+key+"/issues", s.token, []byte(`{"title":"Files"}`), http.StatusCreated, true)
	if err != nil {
		return r, err
	}
	var issue struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(raw, &issue); err != nil {
		return r, err
	}
	const fileMiB = 16
	var stored []string
	defer func() {
		for _, name := range stored {
			_ = files.Remove(context.Background(), name)
		}
	}()
	for i := 0; i < mib/fileMiB; i++ {
		name := attachment.NewStoredName("blob.bin")
		size, err := files.Put(ctx, name, io.LimitReader(rand.NewChaCha8([32]byte{byte(i), byte(i >> 8)}), fileMiB<<20))
		if err != nil {
			return r, err
		}
		stored = append(stored, name)
		if _, err := db.Pool.Exec(ctx, `INSERT INTO attachments (issue_id, uploader_id, filename, stored_name, content_type, size)
			VALUES ($1, $2, $3, $4, 'application/octet-stream', $5)`, issue.ID, s.userID, fmt.Sprintf("blob-%d.bin", i), name, size); err != nil {
			return r, err
		}
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	r.base = ms.HeapInuse
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				if m.HeapInuse > peak.Load() {
					peak.Store(m.HeapInuse)
				}
			}
		}
	}()
	start := time.Now()
	raw, err = c.do(ctx, http.MethodPost, "/api/v1/projects/"+key+"/export", s.token, nil, http.StatusAccepted, true)
	if err == nil {
		r.state, err = awaitTask(ctx, c, s.token, raw)
	}
	r.elapsed = time.Since(start)
	r.peak = peak.Load()
	if err == nil && r.state == "SUCCEEDED" {
		var a struct {
			TaskID string `json:"taskId"`
		}
		_ = json.Unmarshal(raw, &a)
		start = time.Now()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/api/v1/tasks/"+a.TaskID+"/result", nil)
		req.Header.Set("Authorization", "Bearer "+s.token)
		resp, derr := c.http.Do(req)
		if derr == nil {
			r.size, derr = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		r.download, err = time.Since(start), derr
	}
	close(stop)
	<-sampled
	r.peakFetch = peak.Load()
	return r, err
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
	if e := r.export; e.mib > 0 {
		grow := func(p uint64) float64 { return float64(int64(p)-int64(e.base)) / (1 << 20) }
		fmt.Printf("tasks: export of %d MiB of attachments %s in %s, zip of %d MiB downloaded in %s\n", e.mib, e.state,
			e.elapsed.Round(time.Millisecond), e.size>>20, e.download.Round(time.Millisecond))
		fmt.Printf("tasks: heap growth while exporting %.0f MiB, while downloading %.0f MiB (target ≤ %d MiB): %s\n",
			grow(e.peak), grow(e.peakFetch), targetExportHeapMiB, verdict(grow(e.peakFetch) <= targetExportHeapMiB))
	}
}
