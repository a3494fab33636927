package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// sprintFixture is an issue fixture (owner, MEMBER, VIEWER, outsider, default workflow)
// with helpers for the sprint endpoints.
type sprintFixture struct {
	*issueFixture
}

func sprintFixtureNew(t *testing.T) *sprintFixture {
	t.Helper()
	return &sprintFixture{issueFixtureNew(t)}
}

func sprintFixtureOn(t *testing.T, h *apitest.Harness) *sprintFixture {
	t.Helper()
	return &sprintFixture{issueFixtureOn(t, h)}
}

// newSprint creates a sprint through the API as the MEMBER and returns the reply.
func (f *sprintFixture) newSprint(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	r := f.h.Do("POST", f.path("/sprints"), body, f.member.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	return r.JSON(t)
}

// call sends method to /sprints/{id}{suffix} as the MEMBER.
func (f *sprintFixture) call(method, id, suffix string, body any) *apitest.Response {
	return f.h.Do(method, f.path("/sprints/"+id+suffix), body, f.member.Access)
}

// start starts a sprint and expects 200.
func (f *sprintFixture) start(t *testing.T, id string) map[string]any {
	t.Helper()
	r := f.call("POST", id, "/start", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	return r.JSON(t)
}

// put puts an issue (id or key) into a sprint and expects 204.
func (f *sprintFixture) put(t *testing.T, sprintID, issueRef string) {
	t.Helper()
	r := f.call("PUT", sprintID, "/issues/"+issueRef, nil)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	require.Empty(t, r.Body)
}

// issueSprint reads an issue's sprint id in SQL ("" = none).
func (f *sprintFixture) issueSprint(t *testing.T, issueID string) string {
	t.Helper()
	var s *string
	require.NoError(t, f.h.DB.Pool.QueryRow(context.Background(), "SELECT sprint_id::text FROM issues WHERE id = $1", issueID).Scan(&s))
	if s == nil {
		return ""
	}
	return *s
}

// sprintAuditJobs lists the audit actions enqueued for a resource id, oldest first.
func sprintAuditJobs(t *testing.T, h *apitest.Harness, resourceID string) []string {
	t.Helper()
	return issueAuditJobs(t, h, resourceID)
}

// sprintAuditLevel switches an audit level of h's database (use a fresh database).
func sprintAuditLevel(t *testing.T, h *apitest.Harness, level string, on bool) {
	t.Helper()
	_, err := h.DB.Pool.Exec(context.Background(), "UPDATE audit_config SET enabled = $1 WHERE level = $2", on, level)
	require.NoError(t, err)
}
