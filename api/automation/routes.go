package automation

import (
	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
)

// handlers are the automation rule endpoints.
type handlers struct{ *core.Env }

// Routes registers the automation rule endpoints: project rules under
// /projects/:key/automation/rules (reads any project role, writes project ADMIN) and
// SYSTEM rules under /admin/automation/rules (the admin group's system ADMIN check).
func Routes(r fiber.Router, admin fiber.Router, env *core.Env) {
	s := &handlers{env}
	for _, g := range []struct {
		r     fiber.Router
		path  string
		scope ruleScope
	}{
		{r, "/projects/:key/automation/rules", s.projectRules},
		{admin, "/automation/rules", systemRules},
	} {
		g.r.Get(g.path, s.listRules(g.scope))
		g.r.Post(g.path, s.createRule(g.scope))
		g.r.Get(g.path+"/:rid", s.getRule(g.scope))
		g.r.Put(g.path+"/:rid", s.updateRule(g.scope))
		g.r.Delete(g.path+"/:rid", s.deleteRule(g.scope))
		g.r.Patch(g.path+"/:rid/toggle", s.toggleRule(g.scope))
		g.r.Post(g.path+"/:rid/take-over", s.takeOverRule(g.scope))
		g.r.Get(g.path+"/:rid/executions", s.listRuleExecutions(g.scope))
		g.r.Get(g.path+"/:rid/deliveries", s.listRuleDeliveries(g.scope))
		g.r.Get(g.path+"/:rid/runs", s.listRuleRuns(g.scope))
	}
}
