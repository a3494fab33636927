package report_test

import (
	"math"
	"net/http"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// dashboardWidget adds a widget as the owner (an ADMIN) and returns the reply.
func dashboardWidget(t *testing.T, f *apitest.Project, body map[string]any) map[string]any {
	t.Helper()
	r := f.H.Do("POST", f.Path("/dashboard/widgets"), body, f.Owner.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	return r.JSON(t)
}

// dashboardOf reads the dashboard as token and expects 200.
func dashboardOf(t *testing.T, f *apitest.Project, token string) map[string]any {
	t.Helper()
	r := f.H.Do("GET", f.Path("/dashboard"), nil, token)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	return r.JSON(t)
}

func TestDashboardCreatedOnFirstRead(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	require.Zero(t, f.H.Count("SELECT count(*) FROM dashboards WHERE project_id = $1", f.ProjectID))

	// Concurrent first reads agree on one dashboard.
	ids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := f.H.Do("GET", f.Path("/dashboard"), nil, f.Viewer.Access)
			if r.Status == http.StatusOK {
				ids[i], _ = r.JSON(t)["id"].(string)
			}
		}()
	}
	wg.Wait()
	first := dashboardOf(t, f, f.Viewer.Access)
	require.Equal(t, map[string]any{"id": first["id"], "projectId": f.ProjectID.String(), "widgets": []any{}}, first)
	for _, id := range ids {
		require.Equal(t, first["id"], id)
	}
	require.Equal(t, first, dashboardOf(t, f, f.Member.Access), "the same dashboard on the next read")
	require.Equal(t, 1, f.H.Count("SELECT count(*) FROM dashboards WHERE project_id = $1", f.ProjectID))

	other := apitest.NewProject(t, f.H)
	require.NotEqual(t, first["id"], dashboardOf(t, other, other.Owner.Access)["id"], "one dashboard per project")
}

func TestDashboardWidgets(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))

	// Adding a widget creates the dashboard when nobody read it yet.
	w := dashboardWidget(t, f, map[string]any{"type": "BURNDOWN"})
	require.Equal(t, map[string]any{"id": w["id"], "type": "BURNDOWN", "config": nil,
		"gridX": 0.0, "gridY": 0.0, "gridW": 4.0, "gridH": 4.0}, w, "grid defaults 0/0/4/4")
	cfg := `{"sprintId":"` + uuid.NewString() + `"}`
	w2 := dashboardWidget(t, f, map[string]any{"type": "ISSUE_LIST", "config": cfg, "gridX": 4, "gridY": 2, "gridW": 8, "gridH": 1})
	require.Equal(t, map[string]any{"id": w2["id"], "type": "ISSUE_LIST", "config": cfg,
		"gridX": 4.0, "gridY": 2.0, "gridW": 8.0, "gridH": 1.0}, w2)
	d := dashboardOf(t, f, f.Viewer.Access)
	require.Equal(t, []any{w, w2}, d["widgets"], "creation order")
	require.Equal(t, 1, f.H.Count("SELECT count(*) FROM dashboards WHERE project_id = $1", f.ProjectID))

	for _, c := range []struct {
		body           map[string]any
		code, reason   string
		validatedField string
	}{
		{map[string]any{}, "BAD_REQUEST", "MISSING_FIELD", ""},
		{map[string]any{"type": "PIE"}, "BAD_REQUEST", "INVALID_ENUM", ""},
		{map[string]any{"type": "burndown"}, "BAD_REQUEST", "INVALID_ENUM", ""},
		{map[string]any{"type": "VELOCITY", "config": map[string]any{"a": 1}}, "BAD_REQUEST", "WRONG_TYPE", ""},
		{map[string]any{"type": "VELOCITY", "gridX": "1"}, "BAD_REQUEST", "WRONG_TYPE", ""},
		{map[string]any{"type": "VELOCITY", "gridW": 1.5}, "BAD_REQUEST", "WRONG_TYPE", ""},
		{map[string]any{"type": "VELOCITY", "gridX": -1}, "VALIDATION_ERROR", "", "gridX"},
		{map[string]any{"type": "VELOCITY", "gridH": 0}, "VALIDATION_ERROR", "", "gridH"},
		{map[string]any{"type": "VELOCITY", "gridW": 1001}, "VALIDATION_ERROR", "", "gridW"},
		{map[string]any{"type": "VELOCITY", "gridY": 1 << 40}, "VALIDATION_ERROR", "", "gridY"},
		{map[string]any{"type": "VELOCITY", "gridY": 1 << 31}, "VALIDATION_ERROR", "", "gridY"},
		{map[string]any{"type": "VELOCITY", "gridX": 1 << 31}, "VALIDATION_ERROR", "", "gridX"},
		{map[string]any{"type": "VELOCITY", "gridH": 1001}, "VALIDATION_ERROR", "", "gridH"},
	} {
		r := f.H.Do("POST", f.Path("/dashboard/widgets"), c.body, f.Owner.Access)
		require.Equal(t, http.StatusBadRequest, r.Status, "%v: %s", c.body, r.Body)
		m := r.JSON(t)
		require.Equal(t, c.code, m["code"], "%v", c.body)
		if c.reason != "" {
			require.Equal(t, c.reason, m["reason"], "%v", c.body)
		}
		if c.validatedField != "" {
			require.Contains(t, m["details"], c.validatedField, "%v", c.body)
		}
	}
	apitest.RequireProblem(t, f.H.Do("POST", f.Path("/dashboard/widgets"), "[]", f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("MALFORMED_JSON"))
	require.Equal(t, 2, f.H.Count(`SELECT count(*) FROM dashboard_widgets AS w JOIN dashboards AS d ON d.id = w.dashboard_id
		WHERE d.project_id = $1`, f.ProjectID), "refused bodies add nothing")

	// Delete: a widget of another project's dashboard is not found and stays.
	other := apitest.NewProject(t, f.H)
	foreign := dashboardWidget(t, other, map[string]any{"type": "VELOCITY"})
	apitest.RequireProblem(t, f.H.Do("DELETE", f.Path("/dashboard/widgets/"+foreign["id"].(string)), nil, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("WIDGET_NOT_FOUND"))
	require.Len(t, dashboardOf(t, other, other.Owner.Access)["widgets"], 1)
	apitest.RequireProblem(t, f.H.Do("DELETE", f.Path("/dashboard/widgets/x"), nil, f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))

	r := f.H.Do("DELETE", f.Path("/dashboard/widgets/"+w["id"].(string)), nil, f.Owner.Access)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	require.Empty(t, r.Body)
	apitest.RequireProblem(t, f.H.Do("DELETE", f.Path("/dashboard/widgets/"+w["id"].(string)), nil, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("WIDGET_NOT_FOUND"))
	require.Equal(t, []any{w2}, dashboardOf(t, f, f.Viewer.Access)["widgets"])
}

func TestDashboardLayout(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	a := dashboardWidget(t, f, map[string]any{"type": "BURNDOWN"})
	b := dashboardWidget(t, f, map[string]any{"type": "VELOCITY", "gridX": 4})
	c := dashboardWidget(t, f, map[string]any{"type": "CYCLE_TIME", "gridY": 4})
	grid := func(w map[string]any, x, y, width, height float64) map[string]any {
		return map[string]any{"id": w["id"], "type": w["type"], "config": nil, "gridX": x, "gridY": y, "gridW": width, "gridH": height}
	}

	r := f.H.Do("PUT", f.Path("/dashboard/layout"), []any{
		map[string]any{"widgetId": a["id"], "gridX": 6, "gridY": 1, "gridW": 6, "gridH": 2},
		map[string]any{"widgetId": b["id"], "gridX": 0},                                     // absent members keep their value
		map[string]any{"widgetId": a["id"], "gridX": 7, "gridY": 1, "gridW": 5, "gridH": 2}, // the last entry wins
	}, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	want := map[string]any{"id": r.JSON(t)["id"], "projectId": f.ProjectID.String(), "widgets": []any{
		grid(a, 7, 1, 5, 2), grid(b, 0, 0, 4, 4), grid(c, 0, 4, 4, 4),
	}}
	require.Equal(t, want, r.JSON(t), "c was left out and keeps its place")
	require.Equal(t, want, dashboardOf(t, f, f.Viewer.Access))

	// One foreign (or unknown) widget refuses the whole layout: nothing moves.
	other := apitest.NewProject(t, f.H)
	foreign := dashboardWidget(t, other, map[string]any{"type": "VELOCITY"})
	for _, stranger := range []any{foreign["id"], uuid.NewString()} {
		r = f.H.Do("PUT", f.Path("/dashboard/layout"), []any{
			map[string]any{"widgetId": a["id"], "gridX": 0, "gridY": 0},
			map[string]any{"widgetId": stranger, "gridX": 9},
		}, f.Owner.Access)
		apitest.RequireProblem(t, r, 404, "NOT_FOUND", apitest.Reason("WIDGET_NOT_FOUND"))
		require.Equal(t, want, dashboardOf(t, f, f.Viewer.Access))
	}
	require.Equal(t, []any{grid(foreign, 0, 0, 4, 4)}, dashboardOf(t, other, other.Owner.Access)["widgets"])

	// An empty layout changes nothing and answers the dashboard.
	r = f.H.Do("PUT", f.Path("/dashboard/layout"), []any{}, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, want, r.JSON(t))

	for _, c := range []struct {
		body         any
		code, reason string
	}{
		{map[string]any{"widgetId": a["id"]}, "BAD_REQUEST", "LAYOUT_NOT_ARRAY"},
		{"null", "BAD_REQUEST", "LAYOUT_NOT_ARRAY"},
		{"[", "BAD_REQUEST", "MALFORMED_JSON"},
		{[]any{1}, "BAD_REQUEST", "MALFORMED_JSON"},
		{[]any{map[string]any{"gridX": 1}}, "BAD_REQUEST", "MISSING_FIELD"},
		{[]any{map[string]any{"widgetId": "x"}}, "BAD_REQUEST", "INVALID_UUID"},
		{[]any{map[string]any{"widgetId": a["id"], "gridX": "1"}}, "BAD_REQUEST", "WRONG_TYPE"},
		{[]any{map[string]any{"widgetId": a["id"], "gridW": 0}}, "VALIDATION_ERROR", ""},
	} {
		r := f.H.Do("PUT", f.Path("/dashboard/layout"), c.body, f.Owner.Access)
		require.Equal(t, http.StatusBadRequest, r.Status, "%v: %s", c.body, r.Body)
		m := r.JSON(t)
		require.Equal(t, c.code, m["code"], "%v", c.body)
		if c.reason != "" {
			require.Equal(t, c.reason, m["reason"], "%v", c.body)
		} else {
			require.Contains(t, m["details"], "[0].gridW")
		}
	}
	require.Equal(t, want, dashboardOf(t, f, f.Viewer.Access))
}

func TestDashboardRoles(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	w := dashboardWidget(t, f, map[string]any{"type": "ISSUE_COUNT"})
	for _, u := range []struct {
		name, token string
	}{{"viewer", f.Viewer.Access}, {"member", f.Member.Access}} {
		dashboardOf(t, f, u.token)
		apitest.RequireProblem(t, f.H.Do("POST", f.Path("/dashboard/widgets"), map[string]any{"type": "VELOCITY"}, u.token), 403, "FORBIDDEN", apitest.NoReason)
		apitest.RequireProblem(t, f.H.Do("PUT", f.Path("/dashboard/layout"), []any{map[string]any{"widgetId": w["id"], "gridX": 3}}, u.token), 403, "FORBIDDEN", apitest.NoReason)
		apitest.RequireProblem(t, f.H.Do("DELETE", f.Path("/dashboard/widgets/"+w["id"].(string)), nil, u.token), 403, "FORBIDDEN", apitest.NoReason)
	}
	apitest.RequireProblem(t, f.H.Do("GET", f.Path("/dashboard"), nil, f.Outsider.Access), 403, "FORBIDDEN", apitest.Reason("NOT_A_MEMBER"))
	apitest.RequireProblem(t, f.H.Do("GET", "/api/v1/projects/NOPE0/dashboard", nil, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("PROJECT_NOT_FOUND"))
	require.Equal(t, []any{w}, dashboardOf(t, f, f.Owner.Access)["widgets"], "refused calls changed nothing")
}

// TestDashboardWidgetAtTheBottom is the web client's "add at the bottom": gridY 9999 is
// accepted and kept, as are the largest positions; the layout moves widgets there too.
func TestDashboardWidgetAtTheBottom(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	w := dashboardWidget(t, f, map[string]any{"type": "ISSUE_COUNT", "gridX": 0, "gridY": 9999, "gridW": 1000, "gridH": 1000})
	require.Equal(t, []any{9999.0, 1000.0, 1000.0}, []any{w["gridY"], w["gridW"], w["gridH"]})
	far := dashboardWidget(t, f, map[string]any{"type": "VELOCITY", "gridX": math.MaxInt32, "gridY": math.MaxInt32})
	require.Equal(t, []any{float64(math.MaxInt32), float64(math.MaxInt32)}, []any{far["gridX"], far["gridY"]})
	d := dashboardOf(t, f, f.Member.Access)
	require.Equal(t, []any{w, far}, d["widgets"], "stored where the client asked")

	r := f.H.Do("PUT", f.Path("/dashboard/layout"), []map[string]any{{"widgetId": w["id"], "gridY": 123456789}}, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, 123456789.0, r.JSON(t)["widgets"].([]any)[0].(map[string]any)["gridY"])
	r = f.H.Do("PUT", f.Path("/dashboard/layout"), []map[string]any{{"widgetId": w["id"], "gridY": int64(math.MaxInt32) + 1}}, f.Owner.Access)
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	require.Contains(t, r.JSON(t)["details"], "[0].gridY")
}
