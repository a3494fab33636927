package admin

import (
	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
)

func (s *handlers) listUsers(c *fiber.Ctx) error {
	users, err := s.Auth.ListUsers(c.UserContext())
	if err != nil {
		return err
	}
	out := make([]core.AdminUserResponse, 0, len(users))
	for i := range users {
		out = append(out, core.ToAdminUserResponse(&users[i]))
	}
	return c.JSON(out)
}

func (s *handlers) deactivateUser(c *fiber.Ctx) error {
	id, err := core.PathUUID(c, "id")
	if err != nil {
		return err
	}
	if err := s.Auth.Deactivate(c.UserContext(), core.Principal(c), id, core.Meta(c)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *handlers) activateUser(c *fiber.Ctx) error {
	id, err := core.PathUUID(c, "id")
	if err != nil {
		return err
	}
	if err := s.Auth.Activate(c.UserContext(), core.Principal(c), id, core.Meta(c)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *handlers) deleteUser(c *fiber.Ctx) error {
	id, err := core.PathUUID(c, "id")
	if err != nil {
		return err
	}
	if err := s.Auth.Delete(c.UserContext(), core.Principal(c), id, core.Meta(c)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// signOutUser is a system ADMIN's "sign out everywhere" for a user (POST
// /admin/users/{id}/sign-out).
func (s *handlers) signOutUser(c *fiber.Ctx) error {
	id, err := core.PathUUID(c, "id")
	if err != nil {
		return err
	}
	if err := s.Auth.SignOutEverywhere(c.UserContext(), core.Principal(c), id, core.Meta(c)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
