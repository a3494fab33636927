package admin_test

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

func TestAuditExportCSVQuotingAndHeaders(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	admin := auditAdmin(h)
	// One row per tricky resourceId, a minute apart; the export lists newest first.
	cells := []string{"=cmd", "+1", "-1", "@x", "\tx", "\rx", "a@b", "a,b", `say "hi"`, "line\nbreak", "plain"}
	var rows []auditRow
	for i, c := range cells {
		rows = append(rows, auditRow{ID: auditID(i + 1), At: auditT0.Add(-time.Duration(i) * time.Minute), Action: "ISSUE_UPDATED",
			Level: "WRITE", ResourceType: auditStr("ISSUE"), ResourceID: auditStr(c)})
	}
	// An email and an ip address starting with a formula character are quoted too; empty
	// values are empty cells.
	rows = append(rows, auditRow{ID: auditID(99), At: auditT0.Add(-time.Hour), Email: "=evil@example.com", Action: "LOGIN_FAILED",
		Level: "SECURITY", IP: auditStr("-1.2.3.4")})
	auditSeed(t, h, rows...)

	r := h.Do("GET", "/api/v1/admin/audit/export?format=csv", nil, admin.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, "text/csv; charset=utf-8", r.Header.Get("Content-Type"))
	require.Equal(t, "attachment; filename=audit.csv", r.Header.Get("Content-Disposition"))
	body := string(r.Body)
	require.True(t, strings.HasPrefix(body, "id,timestamp,userEmail,action,level,resourceType,resourceId,ipAddress\n"), body)

	want := []string{"'=cmd", "'+1", "'-1", "'@x", "'\tx", "'\rx", "a@b", "a,b", `say "hi"`, "line\nbreak", "plain"}
	records, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	require.NoError(t, err)
	require.Len(t, records, 1+len(cells)+1)
	for i, w := range want {
		rec := records[1+i]
		require.Equal(t, []string{auditID(i + 1).String(), auditT0.Add(-time.Duration(i) * time.Minute).Format(time.RFC3339),
			"system", "ISSUE_UPDATED", "WRITE", "ISSUE", w, ""}, rec, "row %d", i)
	}
	require.Equal(t, []string{auditID(99).String(), "2026-03-01T09:00:00Z", "'=evil@example.com", "LOGIN_FAILED", "SECURITY", "", "", "'-1.2.3.4"},
		records[len(records)-1])

	// The bytes themselves: RFC 4180 quoting only where needed, the quote prefix outside
	// the quotes' content rules, a lone carriage return kept.
	for _, line := range []string{
		",ISSUE,'=cmd,\n", ",ISSUE,'+1,\n", ",ISSUE,'-1,\n", ",ISSUE,'@x,\n", ",ISSUE,'\tx,\n", ",ISSUE,\"'\rx\",\n",
		",ISSUE,a@b,\n", ",ISSUE,\"a,b\",\n", ",ISSUE,\"say \"\"hi\"\"\",\n", ",ISSUE,\"line\nbreak\",\n", ",ISSUE,plain,\n",
	} {
		require.Contains(t, body, line)
	}

	// Filters apply to the export.
	r = h.Do("GET", "/api/v1/admin/audit/export?format=csv&level=SECURITY", nil, admin.Access)
	records, err = csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
	require.NoError(t, err)
	require.Len(t, records, 2)
	require.Equal(t, auditID(99).String(), records[1][0])
	r = h.Do("GET", "/api/v1/admin/audit/export?format=csv&action=NOTHING", nil, admin.Access)
	require.Equal(t, "id,timestamp,userEmail,action,level,resourceType,resourceId,ipAddress\n", string(r.Body), "header only")
}

func TestAuditExportJSON(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	admin := auditAdmin(h)
	user := h.Register("Exported")
	auditSeed(t, h,
		auditRow{ID: auditID(1), At: auditT0, UserID: &user.ID, Email: user.Email, Action: "LOGIN_SUCCESS", Level: "SECURITY", IP: auditStr("198.51.100.1")},
		auditRow{ID: auditID(2), At: auditT0.Add(time.Minute), Action: "ISSUE_CREATED", Level: "WRITE", Details: auditStr(`{"a":"=b"}`)},
		auditRow{ID: auditID(3), At: auditT0.Add(2 * time.Minute), Action: "ISSUE_VIEWED", Level: "ALL"},
	)
	for _, q := range []string{"", "?format=json"} {
		r := h.Do("GET", "/api/v1/admin/audit/export"+q, nil, admin.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.Equal(t, "application/json", r.Header.Get("Content-Type"))
		a := r.Array(t)
		require.Len(t, a, 3)
		require.Equal(t, auditID(3).String(), a[0].(map[string]any)["id"], "newest first")
		require.Equal(t, map[string]any{
			"id": auditID(1).String(), "timestamp": "2026-03-01T10:00:00Z", "userEmail": user.Email, "userId": user.ID.String(),
			"projectId": nil, "action": "LOGIN_SUCCESS", "level": "SECURITY", "resourceType": nil, "resourceId": nil,
			"ipAddress": "198.51.100.1", "orgId": nil, "details": nil, "userAgent": nil,
		}, a[2])
		require.Equal(t, `{"a":"=b"}`, a[1].(map[string]any)["details"], "JSON is not CSV-quoted")
	}
	r := h.Do("GET", "/api/v1/admin/audit/export?userId="+user.ID.String(), nil, admin.Access)
	require.Len(t, r.Array(t), 1)
	r = h.Do("GET", "/api/v1/admin/audit/export?from=2026-03-01T10:01:00Z&to=2026-03-01T10:02:00Z", nil, admin.Access)
	require.Len(t, r.Array(t), 1)
	r = h.Do("GET", "/api/v1/admin/audit/export?action=NOTHING", nil, admin.Access)
	require.Equal(t, "[]", string(r.Body))

	for query, reason := range map[string]string{
		"format=xml": "UNKNOWN_EXPORT_FORMAT", "format=CSV": "UNKNOWN_EXPORT_FORMAT", "level=NOPE": "UNKNOWN_AUDIT_LEVEL",
		"from=x": "INVALID_INSTANT", "userId=1": "INVALID_UUID", "action=a-b": "INVALID_QUERY",
	} {
		apitest.RequireProblem(t, h.Do("GET", "/api/v1/admin/audit/export?"+query, nil, admin.Access), http.StatusBadRequest, "BAD_REQUEST", apitest.ReasonOrNone(reason))
	}
}

// auditServe serves the harness's app on a real socket: app.Test reads a reply only
// once it is complete, so it cannot show bytes arriving while the export still runs.
func auditServe(t *testing.T, h *apitest.Harness) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = h.Server.App.Listener(ln) }()
	t.Cleanup(func() { _ = h.Server.App.ShutdownWithTimeout(5 * time.Second) })
	return "http://" + ln.Addr().String()
}

// auditExportsOpen counts the export's open transactions on the harness's database (the
// export is the only statement that selects every audit column without a LIMIT; parallel
// workers of its plan are not counted).
func auditExportsOpen(h *apitest.Harness) int {
	return h.Count(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
		AND backend_type = 'client backend' AND xact_start IS NOT NULL AND query LIKE 'SELECT id, "timestamp", user_id%' AND query NOT LIKE '%LIMIT%'`)
}

// TestAuditExportStreams proves the export is streamed: with 20,000 events of about
// 1.6 kB each (over 30 MB of JSON, more than socket and pipe buffers hold), the client
// has the first 64 kB while the export's database transaction is still open, i.e.
// before the server has read all rows. A handler that built the reply first would have
// read every row (and closed its transaction) before sending a byte. The reply is
// chunked (no Content-Length). It also shows the connection is given back at the end
// and when the client goes away early. It does not measure memory; that follows from
// rows being written as they are read, which is what the open transaction shows.
func TestAuditExportStreams(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	admin := auditAdmin(h)
	const n = 20000
	_, err := h.DB.Pool.Exec(context.Background(), `INSERT INTO audit_events (id, "timestamp", user_email, action, level, details, user_agent)
		SELECT gen_random_uuid(), $1::timestamptz - i * interval '1 second', 'bulk@example.com', 'ISSUE_CREATED', 'WRITE',
			repeat(md5(i::text), 40), 'agent ' || i
		FROM generate_series(1, $2::int) AS i`, auditT0, n)
	require.NoError(t, err)
	base := auditServe(t, h)

	get := func(format string) *http.Response {
		t.Helper()
		req, err := http.NewRequest("GET", base+"/api/v1/admin/audit/export?format="+format, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+admin.Access)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		// Runs before the server's shutdown (cleanups run last first): an export left
		// unread by a failed assertion must not hold its connection until its time limit.
		t.Cleanup(func() { _ = resp.Body.Close() })
		require.Equal(t, http.StatusOK, resp.StatusCode)
		return resp
	}

	resp := get("json")
	require.Equal(t, int64(-1), resp.ContentLength, "no Content-Length: the body is streamed")
	require.Equal(t, []string{"chunked"}, resp.TransferEncoding)
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	head, err := br.Peek(64 << 10)
	require.NoError(t, err)
	require.Equal(t, byte('['), head[0])
	require.Equal(t, 1, auditExportsOpen(h), "the first bytes arrived while the export was still reading rows")

	var events []map[string]any
	require.NoError(t, json.NewDecoder(br).Decode(&events))
	require.NoError(t, resp.Body.Close())
	require.Len(t, events, n)
	require.Equal(t, "agent 1", events[0]["userAgent"], "newest first")
	require.Equal(t, "agent 20000", events[n-1]["userAgent"])
	apitest.Eventually(t, 5*time.Second, func() bool { return auditExportsOpen(h) == 0 }, "the export's transaction ends with the body")

	// A client that leaves early: the server stops, cancels the query and gives the
	// connection back well before the 10-minute export limit.
	resp = get("csv")
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "id,timestamp,userEmail,action,level,resourceType,resourceId,ipAddress\n", line)
	require.Equal(t, 1, auditExportsOpen(h))
	require.NoError(t, resp.Body.Close())
	apitest.Eventually(t, 10*time.Second, func() bool { return auditExportsOpen(h) == 0 }, "an abandoned export is released")

	// The full CSV, read to the end, has every row.
	resp = get("csv")
	records, err := csv.NewReader(resp.Body).ReadAll()
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Len(t, records, n+1)
	_, err = uuid.Parse(records[n][0])
	require.NoError(t, err)
}
