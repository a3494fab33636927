package api

import (
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/project"
)

// projectAccess loads the project named by the :key path parameter with the caller's
// effective role and requires at least min: unknown key 404, not a member 403.
// Every project endpoint goes through it.
func (s *Server) projectAccess(c *fiber.Ctx, min project.Role) (*project.Access, error) {
	a, err := project.Load(c.UserContext(), s.db.Bun, c.Params("key"), principal(c))
	if err != nil {
		return nil, err
	}
	if a.Role == project.None {
		return nil, forbidden("NOT_A_MEMBER")
	}
	if err := a.Require(min); err != nil {
		return nil, err
	}
	return a, nil
}

// issueAccess is projectAccess followed by the :issueKey path segment (a key or a UUID):
// the preamble of every endpoint under /projects/:key/issues/:issueKey. The issue itself
// is found by the domain call, in the project access returned.
func (s *Server) issueAccess(c *fiber.Ctx, min project.Role) (*project.Access, issue.Ref, error) {
	a, err := s.projectAccess(c, min)
	if err != nil {
		return nil, issue.Ref{}, err
	}
	ref, err := issueRef(c)
	if err != nil {
		return nil, issue.Ref{}, err
	}
	return a, ref, nil
}

// projectItem is projectAccess followed by the UUID in path parameter param: the
// preamble of the endpoints on one thing of a project (a sprint, label, webhook ...).
// Whether the thing belongs to the project is the domain call's to check.
func (s *Server) projectItem(c *fiber.Ctx, min project.Role, param string) (*project.Access, uuid.UUID, error) {
	a, err := s.projectAccess(c, min)
	if err != nil {
		return nil, uuid.Nil, err
	}
	id, err := pathUUID(c, param)
	if err != nil {
		return nil, uuid.Nil, err
	}
	return a, id, nil
}
