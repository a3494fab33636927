package api

import (
	"github.com/gofiber/fiber/v2"
	"github.com/taskweave/taskweave/api/core"
)

// projectRoutes registers the project endpoints on the authenticated /api/v1 router:
// projects, members, API keys, labels, organizations and switch-org.
func (s *Server) projectRoutes(r fiber.Router) {
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
}
