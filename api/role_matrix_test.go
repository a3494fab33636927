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

// matrixRaw is a call body sent as is with its own Content-Type (the matrix sends every
// other body as JSON).
type matrixRaw struct {
	body        []byte
	contentType string
}

// matrixMultipart is a multipart/form-data body of parts.
func matrixMultipart(t *testing.T, parts ...atPart) matrixRaw {
	body, ct := atBody(t, parts...)
	return matrixRaw{body: body, contentType: ct}
}

// TestEveryProjectEndpointRoleMatrix walks every registered /projects/{key}/… endpoint with
// every kind of caller and checks the exact status: anonymous 401; non-member and system
// ADMIN 403 (system ADMINs are not implicit members); VIEWER reads; MEMBER reads and
// writes; ADMIN, the owner and an organization ADMIN administer; a READ_ONLY token reads
// only; an API key of another project is refused everywhere. A route missing from the
// table fails the test, so new endpoints must join it.
func TestEveryProjectEndpointRoleMatrix(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	owner, sys := h.Register("Owner"), h.Register("Sys")
	h.MakeAdmin(sys)
	key := apitest.PostProject(t, h, owner.Access)
	base := "/api/v1/projects/" + key

	users := map[string]string{}
	for _, role := range []string{"ADMIN", "MEMBER", "VIEWER"} {
		u := h.Register(role)
		apitest.PostMember(t, h, owner.Access, key, u.ID, role)
		users[role] = u.Access
	}
	target := h.Register("Target")
	apitest.PostMember(t, h, owner.Access, key, target.ID, "VIEWER")

	// An organization ADMIN inherits ADMIN on the organization's projects.
	org := apitest.PostOrganization(t, h, sys.Access)
	orgAdmin := h.Register("OrgAdmin")
	apitest.PostOrgMember(t, h, sys.Access, org, orgAdmin.ID, "ADMIN")
	apitest.PostOrgMember(t, h, sys.Access, org, owner.ID, "ADMIN")
	require.Equal(t, http.StatusOK, h.Do("PATCH", base+"/organization", map[string]any{"orgId": org}, sys.Access).Status)

	readOnly := h.Do("POST", "/api/v1/me/tokens", map[string]any{"name": "ro", "scope": "READ_ONLY"}, owner.Access).JSON(t)["plaintext"].(string)
	otherKey := apitest.PostProject(t, h, owner.Access)
	foreignKey := h.Do("POST", "/api/v1/projects/"+otherKey+"/api-keys", map[string]any{"name": "other"}, owner.Access).JSON(t)["plaintext"].(string)

	// Fixtures the calls work on.
	issue := h.Do("POST", base+"/issues", map[string]any{"title": "Matrix"}, owner.Access).JSON(t)
	label := h.Do("POST", base+"/labels", map[string]any{"name": "matrix", "color": "#102030"}, owner.Access).JSON(t)
	version := h.Do("POST", base+"/versions", map[string]any{"name": "v-matrix"}, owner.Access).JSON(t)
	wf := h.Do("GET", base+"/workflow", nil, owner.Access).JSON(t)
	status := wf["statuses"].([]any)[0].(map[string]any)["id"].(string)
	transition := h.Do("POST", base+"/workflow/transitions", map[string]any{"fromStatusId": nil, "toStatusId": status}, owner.Access).JSON(t)
	require.NotEmpty(t, transition["id"])
	sprint := h.Do("POST", base+"/sprints", map[string]any{"name": "Matrix"}, owner.Access).JSON(t)
	hook := h.Do("POST", base+"/webhooks", map[string]any{"url": "http://[3ffe::10]/hook", "events": []string{"issue.created"}}, owner.Access).JSON(t)["webhook"].(map[string]any)
	ping := h.Do("POST", base+"/webhooks/"+hook["id"].(string)+"/test", nil, owner.Access).JSON(t)
	reportSprintID := reportMatrixSprint(t, h, key)
	dashWidget := h.Do("POST", base+"/dashboard/widgets", map[string]any{"type": "VELOCITY"}, owner.Access).JSON(t)
	autoRule := h.Do("POST", base+"/automation/rules", map[string]any{"name": "Matrix", "triggerType": "ISSUE_CREATED"}, owner.Access).JSON(t)
	autoRuleAt := base + "/automation/rules/" + autoRule["id"].(string)
	field := h.Do("POST", base+"/custom-fields", map[string]any{"name": "Matrix text", "type": "TEXT"}, owner.Access).JSON(t)
	dropdown := h.Do("POST", base+"/custom-fields", map[string]any{"name": "Matrix dropdown", "type": "DROPDOWN"}, owner.Access).JSON(t)
	dropdownAt := base + "/custom-fields/" + dropdown["id"].(string)
	option := h.Do("POST", dropdownAt+"/options", map[string]any{"label": "first"}, owner.Access).JSON(t)
	// The service desk's fixtures: an enabled desk (its reads answer 404 without one).
	require.Equal(t, http.StatusOK, h.Do("POST", base+"/service-desk/enable", map[string]any{"emailAddress": nil}, owner.Access).Status)
	upload := func() any { return matrixMultipart(t, atFile("m.txt", "text/plain", "matrix")) }
	fileAt := base + "/issues/" + issue["key"].(string) + "/attachments"
	first := upload().(matrixRaw)
	file := h.Do("POST", fileAt, first.body, owner.Access, "Content-Type", first.contentType).JSON(t)
	unique := func(p string) string { return p + strings.ToLower(uuid.NewString()[:8]) }
	random := uuid.NewString()

	type call struct {
		method, route, path string
		body                func() any
		min                 string
		ok                  int
	}
	calls := []call{
		{"GET", "", base, nil, "VIEWER", 200},
		{"GET", "/members", base + "/members", nil, "VIEWER", 200},
		{"POST", "/members", base + "/members", func() any { return map[string]any{"userId": h.Register("New").ID, "role": "VIEWER"} }, "ADMIN", 201},
		{"PATCH", "/members/:userId", base + "/members/" + target.ID.String(), func() any { return map[string]any{"role": "VIEWER"} }, "ADMIN", 200},
		{"DELETE", "/members/:userId", base + "/members/" + random, nil, "ADMIN", 404},
		{"PATCH", "/organization", base + "/organization", func() any { return map[string]any{"orgId": org} }, "ADMIN", 200},
		{"GET", "/api-keys", base + "/api-keys", nil, "VIEWER", 200},
		{"POST", "/api-keys", base + "/api-keys", func() any { return map[string]any{"name": "k"} }, "MEMBER", 201},
		{"DELETE", "/api-keys/:keyId", base + "/api-keys/" + random, nil, "ADMIN", 404},
		{"GET", "/labels", base + "/labels", nil, "VIEWER", 200},
		{"POST", "/labels", base + "/labels", func() any { return map[string]any{"name": unique("l"), "color": "#112233"} }, "MEMBER", 201},
		{"PUT", "/labels/:id", base + "/labels/" + label["id"].(string), func() any { return map[string]any{"name": unique("l"), "color": "#112233"} }, "MEMBER", 200},
		{"DELETE", "/labels/:id", base + "/labels/" + random, nil, "MEMBER", 404},
		{"GET", "/versions", base + "/versions", nil, "VIEWER", 200},
		{"POST", "/versions", base + "/versions", func() any { return map[string]any{"name": unique("v")} }, "MEMBER", 201},
		{"PUT", "/versions/:id", base + "/versions/" + version["id"].(string), func() any { return map[string]any{"name": unique("v")} }, "MEMBER", 200},
		{"DELETE", "/versions/:id", base + "/versions/" + random, nil, "MEMBER", 404},
		{"GET", "/issues", base + "/issues", nil, "VIEWER", 200},
		{"POST", "/issues", base + "/issues", func() any { return map[string]any{"title": "t"} }, "MEMBER", 201},
		// Tasks (docs/tasks.md): queued, never run (no workers on the shared database).
		{"POST", "/issues/bulk", base + "/issues/bulk", func() any {
			return map[string]any{"issueKeys": []string{issue["key"].(string)}, "changes": map[string]any{"priority": "LOW"}}
		}, "MEMBER", 202},
		{"POST", "/export", base + "/export", nil, "ADMIN", 202},
		{"POST", "/import", base + "/import", func() any {
			return matrixMultipart(t, atPart{"format", "", "", "github-json"}, atFile("i.json", "application/json", "[]"))
		}, "ADMIN", 202},
		{"GET", "/issues/:issueKey", base + "/issues/" + issue["key"].(string), nil, "VIEWER", 200},
		{"PATCH", "/issues/:issueKey", base + "/issues/" + issue["id"].(string), func() any { return map[string]any{"title": unique("t")} }, "MEMBER", 200},
		{"DELETE", "/issues/:issueKey", base + "/issues/" + random, nil, "MEMBER", 404},
		{"GET", "/workflows", base + "/workflows", nil, "VIEWER", 200},
		{"GET", "/workflow", base + "/workflow", nil, "VIEWER", 200},
		{"POST", "/workflow/statuses", base + "/workflow/statuses", func() any { return map[string]any{"name": unique("s"), "category": "TODO"} }, "ADMIN", 201},
		{"PUT", "/workflow/statuses/:sid", base + "/workflow/statuses/" + status, func() any { return map[string]any{"color": "#445566"} }, "ADMIN", 200},
		{"DELETE", "/workflow/statuses/:sid", base + "/workflow/statuses/" + random, nil, "ADMIN", 404},
		{"POST", "/workflow/transitions", base + "/workflow/transitions", func() any { return map[string]any{"fromStatusId": nil, "toStatusId": status} }, "ADMIN", 201},
		{"DELETE", "/workflow/transitions/:tid", base + "/workflow/transitions/" + random, nil, "ADMIN", 404},
		{"PUT", "/workflow/transitions/:tid/guards", base + "/workflow/transitions/" + transition["id"].(string) + "/guards", func() any { return map[string]any{"guards": []any{}} }, "ADMIN", 200},
		{"PUT", "/workflow/layout", base + "/workflow/layout", func() any { return map[string]any{"positions": []any{}} }, "ADMIN", 204},

		{"GET", "/webhooks", base + "/webhooks", nil, "VIEWER", 200},
		{"POST", "/webhooks", base + "/webhooks", func() any {
			return map[string]any{"url": "http://[3ffe::10]/hook", "events": []string{"issue.created"}}
		}, "ADMIN", 201},
		{"PUT", "/webhooks/:webhookId", base + "/webhooks/" + hook["id"].(string), func() any { return map[string]any{"enabled": true} }, "ADMIN", 200},
		{"DELETE", "/webhooks/:webhookId", base + "/webhooks/" + random, nil, "ADMIN", 404},
		{"GET", "/webhooks/:webhookId/deliveries", base + "/webhooks/" + hook["id"].(string) + "/deliveries", nil, "VIEWER", 200},
		{"POST", "/webhooks/:webhookId/test", base + "/webhooks/" + hook["id"].(string) + "/test", nil, "ADMIN", 201},
		{"POST", "/webhooks/:webhookId/deliveries/:deliveryId/redeliver", base + "/webhooks/" + hook["id"].(string) + "/deliveries/" + ping["id"].(string) + "/redeliver", nil, "ADMIN", 202},

		{"GET", "/integrations", base + "/integrations", nil, "VIEWER", 200},
		{"POST", "/integrations", base + "/integrations", func() any {
			// One integration per provider and project: drop the previous caller's so every admin gets 201.
			h.Count("WITH d AS (DELETE FROM project_integrations WHERE project_id = (SELECT id FROM projects WHERE key = $1) RETURNING 1) SELECT count(*) FROM d", key)
			return map[string]any{"provider": "github"}
		}, "ADMIN", 201},
		{"DELETE", "/integrations/:integrationId", base + "/integrations/" + random, nil, "ADMIN", 404},
		{"GET", "/issues/:issueKey/refs", base + "/issues/" + issue["key"].(string) + "/refs", nil, "VIEWER", 200},

		{"GET", "/issues/:issueKey/comments", base + "/issues/" + issue["key"].(string) + "/comments", nil, "VIEWER", 200},
		{"POST", "/issues/:issueKey/comments", base + "/issues/" + issue["key"].(string) + "/comments", func() any { return map[string]any{"body": "matrix"} }, "MEMBER", 201},
		// Editing and deleting need WRITE before the comment is looked up (then author or admin rules apply).
		{"PUT", "/issues/:issueKey/comments/:commentId", base + "/issues/" + issue["key"].(string) + "/comments/" + random, func() any { return map[string]any{"body": "x"} }, "MEMBER", 404},
		{"DELETE", "/issues/:issueKey/comments/:commentId", base + "/issues/" + issue["key"].(string) + "/comments/" + random, nil, "MEMBER", 404},
		{"GET", "/issues/:issueKey/activity", base + "/issues/" + issue["id"].(string) + "/activity", nil, "VIEWER", 200},

		{"GET", "/audit", base + "/audit", nil, "ADMIN", 200},

		{"GET", "/sprints", base + "/sprints", nil, "VIEWER", 200},
		{"POST", "/sprints", base + "/sprints", func() any { return map[string]any{"name": unique("s")} }, "MEMBER", 201},
		{"PATCH", "/sprints/:sprintId", base + "/sprints/" + sprint["id"].(string), func() any { return map[string]any{"name": unique("s")} }, "MEMBER", 200},
		{"POST", "/sprints/:sprintId/start", base + "/sprints/" + random + "/start", nil, "MEMBER", 404},
		{"POST", "/sprints/:sprintId/complete", base + "/sprints/" + random + "/complete", nil, "MEMBER", 404},
		{"PUT", "/sprints/:sprintId/issues/:issueId", base + "/sprints/" + sprint["id"].(string) + "/issues/" + issue["key"].(string), nil, "MEMBER", 204},
		{"DELETE", "/sprints/:sprintId/issues/:issueId", base + "/sprints/" + random + "/issues/" + issue["key"].(string), nil, "MEMBER", 404},
		{"GET", "/board", base + "/board", nil, "VIEWER", 204},
		{"PATCH", "/board/move", base + "/board/move", func() any { return map[string]any{"issueId": issue["id"], "newStatusId": status} }, "MEMBER", 200},
		{"GET", "/backlog", base + "/backlog", nil, "VIEWER", 200},

		{"GET", "/reports/burndown", base + "/reports/burndown?sprintId=" + reportSprintID, nil, "VIEWER", 200},
		{"GET", "/reports/velocity", base + "/reports/velocity", nil, "VIEWER", 200},
		{"GET", "/reports/cycle-time", base + "/reports/cycle-time?sprintId=" + reportSprintID, nil, "VIEWER", 200},
		{"GET", "/dashboard", base + "/dashboard", nil, "VIEWER", 200},
		{"PUT", "/dashboard/layout", base + "/dashboard/layout", func() any { return []any{map[string]any{"widgetId": dashWidget["id"], "gridX": 1}} }, "ADMIN", 200},
		{"POST", "/dashboard/widgets", base + "/dashboard/widgets", func() any { return map[string]any{"type": "ISSUE_COUNT"} }, "ADMIN", 201},
		{"DELETE", "/dashboard/widgets/:widgetId", base + "/dashboard/widgets/" + random, nil, "ADMIN", 404},

		// Automation rules: any project role reads, the project ADMIN writes.
		{"GET", "/automation/rules", base + "/automation/rules", nil, "VIEWER", 200},
		{"POST", "/automation/rules", base + "/automation/rules", func() any {
			return map[string]any{"name": unique("r"), "triggerType": "ISSUE_CREATED"}
		}, "ADMIN", 201},
		{"GET", "/automation/rules/:rid", autoRuleAt, nil, "VIEWER", 200},
		{"PUT", "/automation/rules/:rid", autoRuleAt, func() any { return map[string]any{"name": unique("r")} }, "ADMIN", 200},
		{"DELETE", "/automation/rules/:rid", base + "/automation/rules/" + random, nil, "ADMIN", 404},
		{"PATCH", "/automation/rules/:rid/toggle", autoRuleAt + "/toggle", nil, "ADMIN", 200},
		{"POST", "/automation/rules/:rid/take-over", autoRuleAt + "/take-over", nil, "ADMIN", 200},
		{"GET", "/automation/rules/:rid/executions", autoRuleAt + "/executions", nil, "VIEWER", 200},
		{"GET", "/automation/rules/:rid/deliveries", autoRuleAt + "/deliveries", nil, "ADMIN", 200},
		{"GET", "/automation/rules/:rid/runs", autoRuleAt + "/runs", nil, "VIEWER", 200},

		{"POST", "/issues/:issueKey/attachments", fileAt, upload, "MEMBER", 201},
		{"GET", "/issues/:issueKey/attachments", fileAt, nil, "VIEWER", 200},
		{"GET", "/issues/:issueKey/attachments/:attachmentId/download", fileAt + "/" + file["id"].(string) + "/download", nil, "VIEWER", 200},
		// Uploader or PROJECT_ADMIN: TestAttachmentDeleteRules; here an unknown id, 404 for anyone with WRITE.
		{"DELETE", "/issues/:issueKey/attachments/:attachmentId", fileAt + "/" + random, nil, "MEMBER", 404},

		{"GET", "/custom-fields", base + "/custom-fields", nil, "VIEWER", 200},
		{"POST", "/custom-fields", base + "/custom-fields", func() any { return map[string]any{"name": unique("cf"), "type": "TEXT"} }, "MEMBER", 201},
		{"PUT", "/custom-fields/reorder", base + "/custom-fields/reorder", func() any { return []any{map[string]any{"id": field["id"], "sortOrder": 1}} }, "MEMBER", 204},
		{"PUT", "/custom-fields/:id", base + "/custom-fields/" + field["id"].(string), func() any { return map[string]any{"name": unique("cf")} }, "MEMBER", 200},
		{"DELETE", "/custom-fields/:id", base + "/custom-fields/" + random, nil, "MEMBER", 404},
		{"POST", "/custom-fields/:id/options", dropdownAt + "/options", func() any { return map[string]any{"label": unique("o")} }, "MEMBER", 201},
		{"PUT", "/custom-fields/:id/options/:optionId", dropdownAt + "/options/" + option["id"].(string), func() any { return map[string]any{"label": unique("o")} }, "MEMBER", 200},
		{"DELETE", "/custom-fields/:id/options/:optionId", dropdownAt + "/options/" + random, nil, "MEMBER", 404},

		{"POST", "/service-desk/enable", base + "/service-desk/enable", func() any { return map[string]any{"emailAddress": nil} }, "ADMIN", 200},
		{"GET", "/service-desk", base + "/service-desk", nil, "VIEWER", 200},
		// The matrix's desk has no address: past the role check, nothing is pending.
		{"POST", "/service-desk/email/verify", base + "/service-desk/email/verify", func() any { return map[string]any{"code": "WRONG"} }, "ADMIN", 409},
		{"POST", "/service-desk/email/resend", base + "/service-desk/email/resend", nil, "ADMIN", 409},
		// PUBLIC: every caller may submit a ticket, whatever credentials it carries.
		{"POST", "/service-desk/tickets", base + "/service-desk/tickets", func() any { return map[string]any{"title": "Matrix ticket"} }, "PUBLIC", 201},
		{"GET", "/service-desk/tickets", base + "/service-desk/tickets", nil, "VIEWER", 200},
		// Creating a policy changes the desk for good (one per priority): a body without a
		// name shows the caller got past the role check.
		{"POST", "/service-desk/sla-policies", base + "/service-desk/sla-policies", func() any { return map[string]any{"priority": "HIGH"} }, "ADMIN", 400},
		{"GET", "/service-desk/sla-policies", base + "/service-desk/sla-policies", nil, "VIEWER", 200},
		{"GET", "/service-desk/calendars", base + "/service-desk/calendars", nil, "VIEWER", 200},
		{"POST", "/service-desk/calendars", base + "/service-desk/calendars", func() any { return map[string]any{"name": "C"} }, "ADMIN", 400},
		{"PUT", "/service-desk/calendars/:id", base + "/service-desk/calendars/" + random, func() any { return map[string]any{"name": "C"} }, "ADMIN", 400},
		{"DELETE", "/service-desk/calendars/:id", base + "/service-desk/calendars/" + random, nil, "ADMIN", 404},
		{"DELETE", "/service-desk/sla-policies/:id", base + "/service-desk/sla-policies/" + random, nil, "ADMIN", 404},
		{"POST", "/service-desk/sla-policies/:id/escalation-rules", base + "/service-desk/sla-policies/" + random + "/escalation-rules",
			func() any { return map[string]any{"escalateAfterMinutes": 5, "notifyUserIds": []string{}} }, "ADMIN", 404},
		{"POST", "/incidents", base + "/incidents", func() any { return map[string]any{"issueId": random, "severity": "P3", "onCallAssigneeId": nil} }, "MEMBER", 404},
		{"GET", "/incidents", base + "/incidents", nil, "VIEWER", 200},
		{"PATCH", "/incidents/:id", base + "/incidents/" + random, func() any { return map[string]any{"postmortemBody": nil} }, "MEMBER", 404},
	}

	// Every registered project route is in the table.
	covered := map[string]bool{}
	for _, c := range calls {
		covered[c.method+" /api/v1/projects/:key"+c.route] = true
	}
	for _, r := range h.Server.App.GetRoutes(true) {
		if r.Method != "HEAD" && strings.HasPrefix(r.Path, "/api/v1/projects/:key") {
			require.True(t, covered[r.Method+" "+r.Path], "route %s %s is missing from the role matrix", r.Method, r.Path)
		}
	}

	rank := map[string]int{"VIEWER": 1, "MEMBER": 2, "ADMIN": 3}
	type caller struct {
		name, token string
		role        string // effective role, "" for none
	}
	// sys created the organization and so is its OWNER; the system ADMIN caller is another.
	sysCaller := h.Register("Sys2")
	h.MakeAdmin(sysCaller)
	callers := []caller{
		{"anonymous", "", ""}, {"non-member", h.Register("Outsider").Access, ""}, {"system ADMIN", sysCaller.Access, ""},
		{"VIEWER", users["VIEWER"], "VIEWER"}, {"MEMBER", users["MEMBER"], "MEMBER"}, {"ADMIN", users["ADMIN"], "ADMIN"},
		{"owner", owner.Access, "ADMIN"}, {"org ADMIN", orgAdmin.Access, "ADMIN"},
		{"READ_ONLY token", readOnly, "ADMIN"}, {"foreign API key", foreignKey, ""},
	}
	for _, c := range calls {
		for _, who := range callers {
			var body any
			if c.body != nil {
				body = c.body()
			}
			var r *apitest.Response
			if raw, ok := body.(matrixRaw); ok {
				r = h.Do(c.method, c.path, raw.body, who.token, "Content-Type", raw.contentType)
			} else {
				r = h.Do(c.method, c.path, body, who.token)
			}
			want, reason := 403, ""
			switch {
			case c.min == "PUBLIC":
				want = c.ok
			case who.name == "anonymous":
				want = 401
			case who.name == "foreign API key":
				reason = "API_KEY_SCOPE"
			case who.name == "READ_ONLY token" && c.method != "GET":
				reason = "READ_ONLY_TOKEN"
			case who.name == "system ADMIN" && c.route == "/audit":
				want = c.ok // the project audit is for a system ADMIN or the project's ADMIN
			case who.name == "system ADMIN" && c.route == "/organization":
				want = c.ok // system ADMINs may move any project between organizations
			case who.name == "ADMIN" && c.route == "/organization":
				// A project ADMIN must also administer the target organization.
			case who.role != "" && rank[who.role] >= rank[c.min]:
				want = c.ok
			case who.role == "":
				reason = "NOT_A_MEMBER"
			}
			require.Equal(t, want, r.Status, "%s %s as %s: %s", c.method, c.path, who.name, r.Body)
			if reason != "" {
				require.Equal(t, reason, r.JSON(t)["reason"], "%s %s as %s", c.method, c.path, who.name)
			}
		}
	}
}

// reportMatrixSprint inserts a PLANNED sprint of the project with key, for the role
// matrix's report rows.
func reportMatrixSprint(t *testing.T, h *apitest.Harness, key string) string {
	t.Helper()
	var id uuid.UUID
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(), `INSERT INTO sprints (project_id, name, start_date)
		SELECT id, 'Matrix', current_date FROM projects WHERE key = $1 RETURNING id`, key).Scan(&id))
	return id.String()
}
