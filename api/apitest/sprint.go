package apitest

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// SprintProject is an issue fixture (owner, MEMBER, VIEWER, outsider, default workflow)
// with helpers for the sprint endpoints.
type SprintProject struct {
	*Project
}

// NewSprintProject builds the fixture on h.
func NewSprintProject(t testing.TB, h *Harness) *SprintProject {
	t.Helper()
	return &SprintProject{NewProject(t, h)}
}

// NewSprint creates a sprint through the API as the MEMBER and returns the reply.
func (f *SprintProject) NewSprint(t testing.TB, body map[string]any) map[string]any {
	t.Helper()
	r := f.H.Do("POST", f.Path("/sprints"), body, f.Member.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	return r.JSON(t)
}

// Call sends method to /sprints/{id}{suffix} as the MEMBER.
func (f *SprintProject) Call(method, id, suffix string, body any) *Response {
	return f.H.Do(method, f.Path("/sprints/"+id+suffix), body, f.Member.Access)
}

// Start starts a sprint and expects 200.
func (f *SprintProject) Start(t testing.TB, id string) map[string]any {
	t.Helper()
	r := f.Call("POST", id, "/start", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	return r.JSON(t)
}

// Put puts an issue (id or key) into a sprint and expects 204.
func (f *SprintProject) Put(t testing.TB, sprintID, issueRef string) {
	t.Helper()
	r := f.Call("PUT", sprintID, "/issues/"+issueRef, nil)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	require.Empty(t, r.Body)
}

// IssueSprint reads an issue's sprint id in SQL ("" = none).
func (f *SprintProject) IssueSprint(t testing.TB, issueID string) string {
	t.Helper()
	var s *string
	require.NoError(t, f.H.DB.Pool.QueryRow(context.Background(), "SELECT sprint_id::text FROM issues WHERE id = $1", issueID).Scan(&s))
	if s == nil {
		return ""
	}
	return *s
}
