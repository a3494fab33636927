package apitest

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// Project is a project made through POST /projects (owner = ADMIN member, default
// workflow) with a MEMBER, a VIEWER and an outsider.
type Project struct {
	H         *Harness
	Key       string
	ProjectID uuid.UUID
	// owner created the project; member and viewer have member rows; outsider has none.
	Owner, Member, Viewer, Outsider User
	Todo, Prog, Done                uuid.UUID
}

// NewProject builds the fixture on h.
func NewProject(t testing.TB, h *Harness) *Project {
	t.Helper()
	f := &Project{H: h, Owner: h.Register("Owner"), Member: h.Register("Mia"), Viewer: h.Register("Viv"),
		Outsider: h.Register("Otto")}
	f.Key, f.ProjectID = CreateProject(t, h, f.Owner)
	f.AddMember(t, f.Member, "MEMBER")
	f.AddMember(t, f.Viewer, "VIEWER")
	rows, err := h.DB.Pool.Query(context.Background(), `SELECT s.id FROM workflow_statuses AS s
		JOIN projects AS p ON p.workflow_id = s.workflow_id WHERE p.id = $1 ORDER BY s.position`, f.ProjectID)
	require.NoError(t, err)
	var ids []uuid.UUID
	for rows.Next() {
		var id uuid.UUID
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	require.NoError(t, rows.Err())
	require.Len(t, ids, 3)
	f.Todo, f.Prog, f.Done = ids[0], ids[1], ids[2]
	return f
}

// CreateProject creates a project of owner through the API.
func CreateProject(t testing.TB, h *Harness, owner User) (string, uuid.UUID) {
	t.Helper()
	key := "I" + strings.ToUpper(strings.ReplaceAll(uuid.NewString(), "-", "")[:7])
	r := h.Do("POST", "/api/v1/projects", map[string]any{"key": key, "name": "Issues " + key}, owner.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	return key, uuid.MustParse(r.JSON(t)["id"].(string))
}

// AddMember gives u role in the project, as the owner.
func (f *Project) AddMember(t testing.TB, u User, role string) {
	t.Helper()
	r := f.H.Do("POST", f.Path("/members"), map[string]any{"userId": u.ID, "role": role}, f.Owner.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
}

// Path is /api/v1/projects/{key} followed by suffix.
func (f *Project) Path(suffix string) string { return "/api/v1/projects/" + f.Key + suffix }

// Create posts an issue as the owner and returns the reply.
func (f *Project) Create(t testing.TB, body map[string]any) map[string]any {
	t.Helper()
	r := f.H.Do("POST", f.Path("/issues"), body, f.Owner.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	return r.JSON(t)
}

// Patch changes an issue as the owner and expects 200.
func (f *Project) Patch(t testing.TB, ref string, body map[string]any) map[string]any {
	t.Helper()
	r := f.H.Do("PATCH", f.Path("/issues/"+ref), body, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	return r.JSON(t)
}

// Get reads an issue as the owner and expects 200.
func (f *Project) Get(t testing.TB, ref string) map[string]any {
	t.Helper()
	r := f.H.Do("GET", f.Path("/issues/"+ref), nil, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	return r.JSON(t)
}

// Label creates a label through the API and returns its id.
func (f *Project) Label(t testing.TB, name string) string {
	t.Helper()
	r := f.H.Do("POST", f.Path("/labels"), map[string]any{"name": name, "color": "#112233"}, f.Owner.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	return r.JSON(t)["id"].(string)
}

// Version creates a version through the API and returns its id.
func (f *Project) Version(t testing.TB, name string) string {
	t.Helper()
	r := f.H.Do("POST", f.Path("/versions"), map[string]any{"name": name}, f.Owner.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	return r.JSON(t)["id"].(string)
}

// Sprint inserts a sprint in SQL, without the sprint endpoints' rules.
func (f *Project) Sprint(t testing.TB, name, status string) string {
	t.Helper()
	var id uuid.UUID
	require.NoError(t, f.H.DB.Pool.QueryRow(context.Background(),
		"INSERT INTO sprints (project_id, name, status) VALUES ($1, $2, $3) RETURNING id", f.ProjectID, name, status).Scan(&id))
	return id.String()
}

// Activity lists an issue's activity entries as type:old→new, oldest first.
func (f *Project) Activity(t testing.TB, issueID string) []string {
	t.Helper()
	rows, err := f.H.DB.Pool.Query(context.Background(), `SELECT type || ':' || coalesce(old_value, '∅') || '→' || coalesce(new_value, '∅')
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
