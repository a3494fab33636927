package main_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/store/storetest"
)

// pgTool finds a Postgres client program: PATH, then Debian's versioned directories.
func pgTool(t *testing.T, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name); len(found) > 0 {
		return found[len(found)-1]
	}
	if os.Getenv("TW_REQUIRE_PG_TOOLS") == "1" {
		t.Fatalf("%s not found but TW_REQUIRE_PG_TOOLS=1: install the Postgres client (scripts/pg.sh does)", name)
	}
	t.Skipf("%s not found: the backup restore is not tested (make test requires it)", name)
	return ""
}

// upload posts one file to an issue and returns the attachment's id.
func upload(t *testing.T, base, token, issue, name string) string {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	part, err := w.CreateFormFile("file", name)
	require.NoError(t, err)
	_, _ = part.Write(bytes.Repeat([]byte(name), 500))
	require.NoError(t, w.Close())
	req, err := http.NewRequest("POST", base+"/api/v1/projects/BAK/issues/"+issue+"/attachments", &body)
	require.NoError(t, err)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	require.Equal(t, http.StatusCreated, res.StatusCode, "%s", raw)
	return string(bytes.Split(bytes.Split(raw, []byte(`"id":"`))[1], []byte(`"`))[0])
}

// TestBackupTakenDuringWritesRestoresEveryFile follows docs/operations.md#backups: the
// database is dumped while uploads and deletes go on, the attachment directory is copied
// after the dump (with more deletes in between), the dump is restored into a new
// database, and `taskweave backup verify` finds the file of every attachment row. A
// file removed from the copy is reported, and verify exits non-zero.
func TestBackupTakenDuringWritesRestoresEveryFile(t *testing.T) {
	t.Parallel()
	pgDump, pgRestore := pgTool(t, "pg_dump"), pgTool(t, "pg_restore")
	dir, bin, dbURL := binaryOnClone(t)
	ctx := context.Background()

	files := filepath.Join(dir, "attachments")
	env := map[string]string{
		"TW_DATABASE_URL":    dbURL,
		"TW_JWT_SECRET":      strings.Repeat("backup-test-secret-", 3),
		"TW_ATTACHMENTS_DIR": files,
		"TW_LOG_LEVEL":       "warn",
	}
	apiAddr := loopbackAddr(t)
	startProc(t, dir, "api", bin, []string{"api"}, withSetting(env, "TW_HTTP_ADDR", apiAddr))
	waitUntil(t, 30*time.Second, "the api answers", func() bool { return status(apiAddr, "/readyz") == http.StatusOK })
	base := "http://" + apiAddr
	c := &client{t: t, base: base}
	token := c.do("POST", "/api/v1/auth/register", "", map[string]any{
		"email": "backup@example.com", "displayName": "Backup", "password": "correct-horse-battery"}, 201)["accessToken"].(string)
	c.do("POST", "/api/v1/projects", token, map[string]any{"key": "BAK", "name": "Backups"}, 201)
	var issues []string
	for i := range 3 {
		issues = append(issues, c.do("POST", "/api/v1/projects/BAK/issues", token, map[string]any{"title": fmt.Sprintf("Issue %d", i)}, 201)["key"].(string))
	}
	var ids []string
	for i := range 12 {
		ids = append(ids, upload(t, base, token, issues[i%3], fmt.Sprintf("f%02d.txt", i)))
	}

	// Writes go on while the dump runs.
	stop := make(chan struct{})
	wrote := make(chan int)
	go func() {
		n := 0
		defer func() { wrote <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			id := upload(t, base, token, issues[0], fmt.Sprintf("during%03d.txt", n))
			if n%2 == 0 {
				c2 := &client{t: t, base: base}
				c2.do("DELETE", "/api/v1/projects/BAK/issues/"+issues[0]+"/attachments/"+id, token, nil, 204)
			}
			n++
		}
	}()
	time.Sleep(300 * time.Millisecond)
	dump := filepath.Join(dir, "taskweave.dump")
	out, err := exec.Command(pgDump, "--format=custom", "--file="+dump, "--dbname="+dbURL).CombinedOutput()
	require.NoError(t, err, "pg_dump: %s", out)
	close(stop)
	require.Positive(t, <-wrote, "uploads ran during the dump")

	// Between the dump and the copy of the files, attachments and a whole issue go.
	for _, id := range ids[:4] {
		c.do("DELETE", "/api/v1/projects/BAK/issues/"+issues[id2issue(ids, id)]+"/attachments/"+id, token, nil, 204)
	}
	c.do("DELETE", "/api/v1/projects/BAK/issues/"+issues[2], token, nil, 204)
	copied := filepath.Join(dir, "attachments-backup")
	out, err = exec.Command("cp", "-a", files, copied).CombinedOutput()
	require.NoError(t, err, "cp: %s", out)

	// Restore into a new database and verify against the copied files.
	restored := "tw_restore_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:12]
	admin, err := pgx.Connect(ctx, storetest.AdminURL())
	require.NoError(t, err)
	_, err = admin.Exec(ctx, "CREATE DATABASE "+restored)
	require.NoError(t, err)
	admin.Close(ctx)
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	u.Path = "/" + restored
	restoredURL := u.String()
	t.Cleanup(func() { storetest.Drop(restoredURL) })
	out, err = exec.Command(pgRestore, "--exit-on-error", "--no-owner", "--dbname="+restoredURL, dump).CombinedOutput()
	require.NoError(t, err, "pg_restore: %s", out)

	verify := func() (string, error) {
		cmd := exec.Command(bin, "backup", "verify")
		venv := map[string]string{}
		for k, v := range env {
			venv[k] = v
		}
		venv["TW_DATABASE_URL"], venv["TW_ATTACHMENTS_DIR"] = restoredURL, copied
		cmd.Dir, cmd.Env = dir, processEnv(venv)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	report, err := verify()
	require.NoError(t, err, "%s", report)
	require.Contains(t, report, " 0 without their file")
	require.NotContains(t, report, "missing file")
	var rows int
	var lost string
	conn, err := pgx.Connect(ctx, restoredURL)
	require.NoError(t, err)
	require.NoError(t, conn.QueryRow(ctx, "SELECT count(*), min(stored_name) FROM attachments").Scan(&rows, &lost))
	conn.Close(ctx)
	require.Greater(t, rows, 12, "the dump holds the rows written during it")
	require.Contains(t, report, fmt.Sprintf("%d attachment rows checked", rows))

	// A file lost from the copy is reported by its row, and verify fails.
	require.NoError(t, os.Remove(filepath.Join(copied, lost)))
	report, err = verify()
	require.Error(t, err)
	require.Contains(t, report, "missing file: attachment ")
	require.Contains(t, report, lost)
	require.Contains(t, report, " 1 without their file")
}

// id2issue is the index of the issue an initial upload went to (round robin over 3).
func id2issue(ids []string, id string) int {
	for i, x := range ids {
		if x == id {
			return i % 3
		}
	}
	return 0
}
