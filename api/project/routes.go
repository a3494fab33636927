package project

import (
	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
)

// handlers are the project endpoints: projects, members, API keys, labels,
// organizations and workflows.
type handlers struct{ *core.Env }

// Routes registers the project endpoints on the authenticated /api/v1 router:
// projects, members, API keys, labels, organizations and switch-org, then the workflows.
func Routes(r fiber.Router, env *core.Env) {
	s := &handlers{env}
	r.Get("/projects", s.listProjects)
	r.Post("/projects", s.createProject)
	r.Use("/projects/:key", projectHasNoUpdate)
	r.Get("/projects/:key", s.getProject)
	r.Patch("/projects/:key/organization", s.setProjectOrganization)

	r.Get("/projects/:key/members", s.listMembers)
	r.Post("/projects/:key/members", s.addMember)
	r.Patch("/projects/:key/members/:userId", s.changeMemberRole)
	r.Delete("/projects/:key/members/:userId", s.removeMember)

	r.Get("/projects/:key/api-keys", s.listAPIKeys)
	r.Post("/projects/:key/api-keys", s.createAPIKey)
	r.Delete("/projects/:key/api-keys/:keyId", s.deleteAPIKey)

	r.Get("/projects/:key/labels", s.listLabels)
	r.Post("/projects/:key/labels", s.createLabel)
	r.Put("/projects/:key/labels/:id", s.updateLabel)
	r.Delete("/projects/:key/labels/:id", s.deleteLabel)

	r.Get("/organizations", core.RequireAdmin, s.listOrganizations)
	r.Post("/organizations", core.RequireAdmin, s.createOrganization)
	r.Get("/organizations/mine", s.myOrganizations)
	r.Get("/organizations/:id", s.getOrganization)
	r.Get("/organizations/:id/members", s.listOrgMembers)
	r.Post("/organizations/:id/members", s.addOrgMember)
	r.Patch("/organizations/:id/members/:userId", s.changeOrgMemberRole)
	r.Delete("/organizations/:id/members/:userId", s.removeOrgMember)

	r.Post("/auth/switch-org/:orgId", s.switchOrg)
	s.workflowRoutes(r)
}

// workflowRoutes registers the workflow endpoints on the authenticated /api/v1 router.
// Reads need project role VIEWER or better; every edit needs PROJECT_ADMIN.
func (s *handlers) workflowRoutes(r fiber.Router) {
	r.Get("/projects/:key/workflows", s.listWorkflows)
	r.Get("/projects/:key/workflow", s.getWorkflow)
	r.Post("/projects/:key/workflow/statuses", s.createWorkflowStatus)
	r.Put("/projects/:key/workflow/statuses/:sid", s.updateWorkflowStatus)
	r.Delete("/projects/:key/workflow/statuses/:sid", s.deleteWorkflowStatus)
	r.Post("/projects/:key/workflow/transitions", s.createWorkflowTransition)
	r.Delete("/projects/:key/workflow/transitions/:tid", s.deleteWorkflowTransition)
	r.Put("/projects/:key/workflow/transitions/:tid/guards", s.putWorkflowGuards)
	r.Put("/projects/:key/workflow/layout", s.putWorkflowLayout)
}
