package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// issueFixture is a project made through POST /projects (owner = ADMIN member, default
// workflow) with a MEMBER, a VIEWER and an outsider.
type issueFixture struct {
	h         *apitest.Harness
	key       string
	projectID uuid.UUID
	// owner created the project; member and viewer have member rows; outsider has none.
	owner, member, viewer, outsider apitest.User
	todo, prog, done                uuid.UUID
}

// issueFixtureNew builds the fixture on the package's shared database.
func issueFixtureNew(t *testing.T) *issueFixture {
	t.Helper()
	return issueFixtureOn(t, shared(t))
}

// issueFixtureOn builds the fixture on h.
func issueFixtureOn(t *testing.T, h *apitest.Harness) *issueFixture {
	t.Helper()
	f := &issueFixture{h: h, owner: h.Register("Owner"), member: h.Register("Mia"), viewer: h.Register("Viv"),
		outsider: h.Register("Otto")}
	f.key, f.projectID = issueFixtureProject(t, h, f.owner)
	f.addMember(t, f.member, "MEMBER")
	f.addMember(t, f.viewer, "VIEWER")
	rows, err := h.DB.Pool.Query(context.Background(), `SELECT s.id FROM workflow_statuses AS s
		JOIN projects AS p ON p.workflow_id = s.workflow_id WHERE p.id = $1 ORDER BY s.position`, f.projectID)
	require.NoError(t, err)
	var ids []uuid.UUID
	for rows.Next() {
		var id uuid.UUID
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	require.NoError(t, rows.Err())
	require.Len(t, ids, 3)
	f.todo, f.prog, f.done = ids[0], ids[1], ids[2]
	return f
}

// issueFixtureProject creates a project of owner through the API.
func issueFixtureProject(t *testing.T, h *apitest.Harness, owner apitest.User) (string, uuid.UUID) {
	t.Helper()
	key := "I" + strings.ToUpper(strings.ReplaceAll(uuid.NewString(), "-", "")[:7])
	r := h.Do("POST", "/api/v1/projects", map[string]any{"key": key, "name": "Issues " + key}, owner.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	return key, uuid.MustParse(r.JSON(t)["id"].(string))
}

func (f *issueFixture) addMember(t *testing.T, u apitest.User, role string) {
	t.Helper()
	r := f.h.Do("POST", f.path("/members"), map[string]any{"userId": u.ID, "role": role}, f.owner.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
}

// path is /api/v1/projects/{key} followed by suffix.
func (f *issueFixture) path(suffix string) string { return "/api/v1/projects/" + f.key + suffix }

// create posts an issue as the owner and returns the reply.
func (f *issueFixture) create(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	r := f.h.Do("POST", f.path("/issues"), body, f.owner.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	return r.JSON(t)
}

// patch changes an issue as the owner and expects 200.
func (f *issueFixture) patch(t *testing.T, ref string, body map[string]any) map[string]any {
	t.Helper()
	r := f.h.Do("PATCH", f.path("/issues/"+ref), body, f.owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	return r.JSON(t)
}

func (f *issueFixture) get(t *testing.T, ref string) map[string]any {
	t.Helper()
	r := f.h.Do("GET", f.path("/issues/"+ref), nil, f.owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	return r.JSON(t)
}

// label creates a label through the API and returns its id.
func (f *issueFixture) label(t *testing.T, name string) string {
	t.Helper()
	r := f.h.Do("POST", f.path("/labels"), map[string]any{"name": name, "color": "#112233"}, f.owner.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	return r.JSON(t)["id"].(string)
}

// version creates a version through the API and returns its id.
func (f *issueFixture) version(t *testing.T, name string) string {
	t.Helper()
	r := f.h.Do("POST", f.path("/versions"), map[string]any{"name": name}, f.owner.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	return r.JSON(t)["id"].(string)
}

// sprint inserts a sprint in SQL (there are no sprint endpoints yet).
func (f *issueFixture) sprint(t *testing.T, name, status string) string {
	t.Helper()
	var id uuid.UUID
	require.NoError(t, f.h.DB.Pool.QueryRow(context.Background(),
		"INSERT INTO sprints (project_id, name, status) VALUES ($1, $2, $3) RETURNING id", f.projectID, name, status).Scan(&id))
	return id.String()
}

// activity lists an issue's activity entries as type:old→new, oldest first.
func (f *issueFixture) activity(t *testing.T, issueID string) []string {
	t.Helper()
	rows, err := f.h.DB.Pool.Query(context.Background(), `SELECT type || ':' || coalesce(old_value, '∅') || '→' || coalesce(new_value, '∅')
		FROM issue_activities WHERE issue_id = $1 ORDER BY created_at, id`, issueID)
	require.NoError(t, err)
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	require.NoError(t, rows.Err())
	return out
}

// issueFixtureAudit switches the WRITE audit level of h's database.
func issueFixtureAudit(t *testing.T, h *apitest.Harness, on bool) {
	t.Helper()
	_, err := h.DB.Pool.Exec(context.Background(), "UPDATE audit_config SET enabled = $1 WHERE level = 'WRITE'", on)
	require.NoError(t, err)
}
