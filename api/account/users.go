package account

import (
	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/user"
)

// userSearchResult is one hit of GET /users/search.
type userSearchResult struct {
	ID          string `json:"id"`
	Email       string `json:"email"`
	DisplayName string `json:"displayName"`
}

func (s *handlers) searchUsers(c *fiber.Ctx) error {
	us, err := user.Search(c.UserContext(), s.DB.Bun, core.Principal(c), c.Query("q"))
	if err != nil {
		return err
	}
	out := make([]userSearchResult, 0, len(us))
	for _, u := range us {
		out = append(out, userSearchResult{ID: u.ID.String(), Email: u.Email, DisplayName: u.DisplayName})
	}
	return c.JSON(out)
}
