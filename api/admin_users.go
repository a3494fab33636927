package api

import (
	"github.com/gofiber/fiber/v2"
	"github.com/taskweave/taskweave/api/core"
)

func (s *Server) listUsers(c *fiber.Ctx) error {
	users, err := s.auth.ListUsers(c.UserContext())
	if err != nil {
		return err
	}
	out := make([]core.AdminUserResponse, 0, len(users))
	for i := range users {
		out = append(out, core.ToAdminUserResponse(&users[i]))
	}
	return c.JSON(out)
}

func (s *Server) deactivateUser(c *fiber.Ctx) error {
	id, err := core.PathUUID(c, "id")
	if err != nil {
		return err
	}
	if err := s.auth.Deactivate(c.UserContext(), core.Principal(c), id, core.Meta(c)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *Server) activateUser(c *fiber.Ctx) error {
	id, err := core.PathUUID(c, "id")
	if err != nil {
		return err
	}
	if err := s.auth.Activate(c.UserContext(), core.Principal(c), id, core.Meta(c)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *Server) deleteUser(c *fiber.Ctx) error {
	id, err := core.PathUUID(c, "id")
	if err != nil {
		return err
	}
	if err := s.auth.Delete(c.UserContext(), core.Principal(c), id, core.Meta(c)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
