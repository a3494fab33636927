package admin_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

func TestLoginAuditRowsComeFromTheWorker(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	u := h.Register("Audited")
	require.Equal(t, http.StatusOK, h.Do("POST", "/api/v1/auth/login", map[string]any{"email": u.Email, "password": apitest.Password}, "", "User-Agent", "curl/8").Status)
	require.Equal(t, http.StatusForbidden, h.Do("POST", "/api/v1/auth/login", map[string]any{"email": u.Email, "password": "wrong password"}, "").Status)

	// The requests enqueued jobs; no request wrote an audit row itself.
	require.Equal(t, 0, h.Count("SELECT count(*) FROM audit_events"))
	require.Equal(t, 1, h.Count("SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND queue = 'audit' AND args->>'action' = 'LOGIN_SUCCESS'"))
	require.Equal(t, 1, h.Count("SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'action' = 'LOGIN_FAILED'"))

	h.StartWorkers()
	apitest.Eventually(t, 10*time.Second, func() bool {
		return h.Count("SELECT count(*) FROM audit_events WHERE action IN ('LOGIN_SUCCESS', 'LOGIN_FAILED', 'USER_REGISTERED')") == 3
	}, "worker writes the audit rows")

	var level, email, agent string
	var userID *string
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(),
		"SELECT level, user_email, user_id::text, coalesce(user_agent, '') FROM audit_events WHERE action = 'LOGIN_SUCCESS'").Scan(&level, &email, &userID, &agent))
	require.Equal(t, "SECURITY", level)
	require.Equal(t, u.Email, email)
	require.Equal(t, u.ID.String(), *userID)
	require.Equal(t, "curl/8", agent)
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(),
		"SELECT level, user_email FROM audit_events WHERE action = 'LOGIN_FAILED'").Scan(&level, &email))
	require.Equal(t, "SECURITY", level)
	require.Equal(t, u.Email, email)

	_, err := h.DB.Pool.Exec(context.Background(), "UPDATE audit_events SET action = 'X'")
	require.Error(t, err, "audit rows are immutable")
}

// TestRolledBackRequestLeavesNoJobNorRow proves the transactional job pattern: a request
// whose transaction rolls back (deleting the last admin is refused after the change was
// written) leaves neither its audit job nor, after the workers ran, an audit row; the same
// request that commits leaves both.
func TestRolledBackRequestLeavesNoJobNorRow(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	apitest.SetAuditLevel(t, h, "WRITE", true)
	admin := h.Register("Admin")

	r := h.Do("DELETE", "/api/v1/me", nil, admin.Access)
	require.Equal(t, http.StatusConflict, r.Status)
	require.Equal(t, 0, h.Count("SELECT count(*) FROM river_job WHERE args->>'action' = 'USER_DELETED'"), "rolled back: no job")

	other := h.Register("Other")
	h.MakeAdmin(other)
	require.Equal(t, http.StatusNoContent, h.Do("DELETE", "/api/v1/me", nil, admin.Access).Status)
	require.Equal(t, 1, h.Count("SELECT count(*) FROM river_job WHERE args->>'action' = 'USER_DELETED'"), "committed: one job")

	h.StartWorkers()
	apitest.Eventually(t, 10*time.Second, func() bool {
		return h.Count("SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND state <> 'completed'") == 0
	}, "audit jobs drained")
	require.Equal(t, 1, h.Count("SELECT count(*) FROM audit_events WHERE action = 'USER_DELETED' AND level = 'WRITE'"),
		"exactly the committed request's row")
}

func TestWriteLevelToggle(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	u := h.Register("Toggle")
	require.Equal(t, http.StatusCreated, h.Do("POST", "/api/v1/me/tokens", map[string]any{"name": "a"}, u.Access).Status)
	require.Equal(t, 0, h.Count("SELECT count(*) FROM river_job WHERE args->>'action' = 'TOKEN_CREATED'"), "WRITE is off initially")
	apitest.SetAuditLevel(t, h, "WRITE", true)
	require.Equal(t, http.StatusCreated, h.Do("POST", "/api/v1/me/tokens", map[string]any{"name": "b"}, u.Access).Status)
	require.Equal(t, 1, h.Count("SELECT count(*) FROM river_job WHERE args->>'action' = 'TOKEN_CREATED' AND args->>'level' = 'WRITE'"))
	// SECURITY is recorded even with its toggle off.
	apitest.SetAuditLevel(t, h, "SECURITY", false)
	require.Equal(t, http.StatusNoContent, h.Do("POST", "/api/v1/auth/logout", nil, u.Access).Status)
	require.Equal(t, 1, h.Count("SELECT count(*) FROM river_job WHERE args->>'action' = 'LOGOUT' AND args->>'level' = 'SECURITY'"))
	require.Equal(t, []int{1, 0, 0}, []int{
		h.Count("SELECT count(*) FROM audit_config WHERE level = 'WRITE' AND enabled"),
		h.Count("SELECT count(*) FROM audit_config WHERE level = 'ALL' AND enabled"),
		h.Count("SELECT count(*) FROM audit_config WHERE level = 'SECURITY' AND enabled"),
	})
}
