package automation_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// TestAutomationRuleActsOnlyWhileItsCreatorMay: for each way a creator loses the right
// (demotion to VIEWER, removal from the project, deactivation, deletion):
//   - through the API, in the change's transaction, the creator's rule is disabled
//     with the reason, shown in the rule list and audited with the admin as actor;
//   - when the right went some other way (here straight in the database), the rule's
//     next run is SKIPPED with the reason, and the rule is disabled and audited then;
//   - a disabled rule stays off: enabling it is 409 RULE_CREATOR_INELIGIBLE, an admin
//     taking it over becomes its creator and it acts again.
func TestAutomationRuleActsOnlyWhileItsCreatorMay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		reason string
		api    func(f *apitest.SprintProject, admin, u apitest.User) *apitest.Response
		raw    string
	}{
		{"demoted to VIEWER", "the rule's creator has the role VIEWER in the project, below MEMBER",
			func(f *apitest.SprintProject, _, u apitest.User) *apitest.Response {
				return f.H.Do("PATCH", f.Path("/members/"+u.ID.String()), map[string]any{"role": "VIEWER"}, f.Owner.Access)
			}, "UPDATE project_members SET role = 'VIEWER' WHERE user_id = $1"},
		{"removed from the project", "the rule's creator is no longer a member of the project",
			func(f *apitest.SprintProject, _, u apitest.User) *apitest.Response {
				return f.H.Do("DELETE", f.Path("/members/"+u.ID.String()), nil, f.Owner.Access)
			}, "DELETE FROM project_members WHERE user_id = $1"},
		{"deactivated", "the rule's creator is deactivated",
			func(f *apitest.SprintProject, admin, u apitest.User) *apitest.Response {
				return f.H.Do("POST", "/api/v1/admin/users/"+u.ID.String()+"/deactivate", nil, admin.Access)
			}, "UPDATE users SET active = false WHERE id = $1"},
		{"deleted", "the rule's creator was deleted",
			func(f *apitest.SprintProject, admin, u apitest.User) *apitest.Response {
				return f.H.Do("DELETE", "/api/v1/admin/users/"+u.ID.String(), nil, admin.Access)
			}, "UPDATE users SET active = false, deleted_at = now() WHERE id = $1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := autoFixture(t)
			h := f.H
			apitest.SetAuditLevel(t, h, "WRITE", true)
			admin := h.Register("Root")
			h.MakeAdmin(admin)
			ari, bea := h.Register("Ari"), h.Register("Bea")
			f.AddMember(t, ari, "ADMIN")
			f.AddMember(t, bea, "ADMIN")
			rule := func(u apitest.User, name string) string {
				r := h.Do("POST", autoRules(f.Project, ""), map[string]any{"name": name, "triggerType": "ISSUE_CREATED",
					"actions": []any{autoAction("SET_PRIORITY", map[string]any{"priority": "HIGH"})}}, u.Access)
				require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
				return r.JSON(t)["id"].(string)
			}
			viaAPI, viaDB := rule(ari, "Ari's"), rule(bea, "Bea's")
			listed := func(id string) map[string]any {
				for _, r := range h.Do("GET", autoRules(f.Project, "?size=200"), nil, f.Viewer.Access).JSON(t)["content"].([]any) {
					if r := r.(map[string]any); r["id"] == id {
						return r
					}
				}
				t.Fatalf("rule %s not listed", id)
				return nil
			}
			disabledAudit := func(id, email string) int {
				return h.Count(`SELECT count(*) FROM audit_events WHERE action = 'AUTOMATION_RULE_DISABLED' AND resource_id = $1
					AND user_email = $2 AND details::jsonb->>'reason' = $3`, id, email, tc.reason)
			}

			// Through the API: disabled at once, in the same transaction.
			r := tc.api(f, admin, ari)
			require.Less(t, r.Status, 300, "%s", r.Body)
			got := listed(viaAPI)
			require.Equal(t, false, got["enabled"])
			require.Equal(t, tc.reason, got["disabledReason"])
			require.NotNil(t, got["disabledAt"])
			autoDrain(t, h)
			by := admin.Email
			if tc.name == "demoted to VIEWER" || tc.name == "removed from the project" {
				by = f.Owner.Email
			}
			require.Equal(t, 1, disabledAudit(viaAPI, by))
			require.Equal(t, true, listed(viaDB)["enabled"], "Bea's rule is untouched")

			// Some other way: the next run is skipped, and the rule disabled then.
			_, err := h.DB.Pool.Exec(context.Background(), tc.raw, bea.ID)
			require.NoError(t, err)
			id, key := autoIssue(f.Project, t, f.Owner, map[string]any{"title": "Nobody's rule acts"})
			autoDrain(t, h)
			require.Equal(t, []string{"SKIPPED " + id + " not run: " + tc.reason +
				"; the rule is disabled until an admin re-enables it or takes it over"}, autoOutcomes(autoExecutions(f.Project, t, viaDB)))
			require.Empty(t, autoExecutions(f.Project, t, viaAPI), "a disabled rule is not evaluated")
			require.Equal(t, "MEDIUM", f.Get(t, key)["priority"])
			got = listed(viaDB)
			require.Equal(t, false, got["enabled"])
			require.Equal(t, tc.reason, got["disabledReason"])
			require.Equal(t, 1, disabledAudit(viaDB, "system"))
			require.Equal(t, float64(1), autoMetric(t, h.WorkerRegistry, "taskweave_automation_limited_total", map[string]string{"limit": "creator"}))

			// Off until an admin takes it over.
			r = h.Do("PATCH", autoRules(f.Project, "/"+viaAPI+"/toggle"), nil, f.Owner.Access)
			require.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
			require.Equal(t, "RULE_CREATOR_INELIGIBLE", r.JSON(t)["reason"])
			r = h.Do("POST", autoRules(f.Project, "/"+viaAPI+"/take-over"), nil, f.Member.Access)
			require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
			r = h.Do("POST", autoRules(f.Project, "/"+viaAPI+"/take-over"), nil, f.Owner.Access)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			got = r.JSON(t)
			require.Equal(t, true, got["enabled"])
			require.Equal(t, f.Owner.ID.String(), got["createdBy"])
			require.Nil(t, got["disabledReason"])
			require.Nil(t, got["disabledAt"])
			id, key = autoIssue(f.Project, t, f.Owner, map[string]any{"title": "The owner's rule acts"})
			autoDrain(t, h)
			require.Equal(t, []string{"SUCCESS " + id + " ran SET_PRIORITY"}, autoOutcomes(autoExecutions(f.Project, t, viaAPI)))
			require.Equal(t, "HIGH", f.Get(t, key)["priority"])
			require.Equal(t, 1, h.Count(`SELECT count(*) FROM audit_events WHERE action = 'AUTOMATION_RULE_TAKEN_OVER'
				AND resource_id = $1 AND user_id = $2 AND details::jsonb->>'formerCreatorId' = $3`, viaAPI, f.Owner.ID, ari.ID.String()))

			if tc.name != "deactivated" {
				return
			}
			// A creator who may again: an admin re-enables the rule as it is.
			r = h.Do("POST", "/api/v1/admin/users/"+bea.ID.String()+"/activate", nil, admin.Access)
			require.Less(t, r.Status, 300, "%s", r.Body)
			r = h.Do("PATCH", autoRules(f.Project, "/"+viaDB+"/toggle"), nil, f.Owner.Access)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			got = r.JSON(t)
			require.Equal(t, true, got["enabled"])
			require.Equal(t, bea.ID.String(), got["createdBy"])
			require.Nil(t, got["disabledReason"])
			autoDrain(t, h)
			require.Equal(t, 1, h.Count(`SELECT count(*) FROM audit_events WHERE action = 'AUTOMATION_RULE_ENABLED'
				AND resource_id = $1 AND user_id = $2`, viaDB, f.Owner.ID))
		})
	}
}

// TestAutomationSystemRuleNeedsAnAdminCreator: a SYSTEM rule acts only while its
// creator is a system ADMIN: once they are not, its run is SKIPPED with the reason and
// it is disabled; another system ADMIN takes it over and it acts again.
func TestAutomationSystemRuleNeedsAnAdminCreator(t *testing.T) {
	t.Parallel()
	f := autoFixture(t)
	h := f.H
	ada, bob := h.Register("Ada"), h.Register("Bob")
	h.MakeAdmin(ada)
	h.MakeAdmin(bob)
	r := h.Do("POST", "/api/v1/admin/automation/rules", map[string]any{"name": "Everywhere", "triggerType": "ISSUE_CREATED",
		"actions": []any{autoAction("SET_PRIORITY", map[string]any{"priority": "HIGH"})}}, ada.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	rule := "/api/v1/admin/automation/rules/" + r.JSON(t)["id"].(string)

	h.SetSystemRole(ada, "MEMBER")
	id, key := autoIssue(f.Project, t, f.Owner, map[string]any{"title": "Not Ada's any more"})
	autoDrain(t, h)
	r = h.Do("GET", rule+"/executions", nil, bob.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var execs []map[string]any
	for _, e := range r.JSON(t)["content"].([]any) {
		execs = append(execs, e.(map[string]any))
	}
	require.Equal(t, []string{"SKIPPED " + id + " not run: the SYSTEM rule's creator is no longer a system ADMIN" +
		"; the rule is disabled until an admin re-enables it or takes it over"}, autoOutcomes(execs))
	require.Equal(t, "MEDIUM", f.Get(t, key)["priority"])
	got := h.Do("GET", rule, nil, bob.Access).JSON(t)
	require.Equal(t, false, got["enabled"])
	require.Equal(t, "the SYSTEM rule's creator is no longer a system ADMIN", got["disabledReason"])

	r = h.Do("PATCH", rule+"/toggle", nil, bob.Access)
	require.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
	r = h.Do("POST", rule+"/take-over", nil, bob.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, bob.ID.String(), r.JSON(t)["createdBy"])
	_, key = autoIssue(f.Project, t, f.Owner, map[string]any{"title": "Bob's now"})
	autoDrain(t, h)
	require.Equal(t, "HIGH", f.Get(t, key)["priority"])
}
