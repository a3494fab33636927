package api

import (
	"github.com/gofiber/fiber/v2"
)

func (s *Server) listUsers(c *fiber.Ctx) error {
	users, err := s.auth.ListUsers(c.UserContext())
	if err != nil {
		return err
	}
	out := make([]adminUserResponse, 0, len(users))
	for i := range users {
		out = append(out, toAdminUserResponse(&users[i]))
	}
	return c.JSON(out)
}

func (s *Server) deactivateUser(c *fiber.Ctx) error {
	id, err := pathUUID(c, "id")
	if err != nil {
		return err
	}
	if err := s.auth.Deactivate(c.UserContext(), principal(c), id, meta(c)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *Server) activateUser(c *fiber.Ctx) error {
	id, err := pathUUID(c, "id")
	if err != nil {
		return err
	}
	if err := s.auth.Activate(c.UserContext(), principal(c), id, meta(c)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *Server) deleteUser(c *fiber.Ctx) error {
	id, err := pathUUID(c, "id")
	if err != nil {
		return err
	}
	if err := s.auth.Delete(c.UserContext(), principal(c), id, meta(c)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
