package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/store"
)

// userResponse is UserResponse in api/openapi/00-core.yaml.
type userResponse struct {
	ID          string  `json:"id"`
	Email       string  `json:"email"`
	DisplayName string  `json:"displayName"`
	AvatarURL   *string `json:"avatarUrl"`
	Role        string  `json:"role"`
	Language    *string `json:"language"`
	OrgID       *string `json:"orgId"`
	CreatedAt   string  `json:"createdAt"`
}

func toUserResponse(u *store.User) userResponse {
	r := userResponse{ID: u.ID.String(), Email: u.Email, DisplayName: u.DisplayName, AvatarURL: u.AvatarURL,
		Role: u.SystemRole, Language: u.Language, CreatedAt: instant(u.CreatedAt)}
	if u.OrgID != nil {
		s := u.OrgID.String()
		r.OrgID = &s
	}
	return r
}

// adminUserResponse is AdminUserResponse in api/openapi/00-core.yaml (systemRole, and
// role too).
type adminUserResponse struct {
	ID          string  `json:"id"`
	Email       string  `json:"email"`
	DisplayName string  `json:"displayName"`
	SystemRole  string  `json:"systemRole"`
	Active      bool    `json:"active"`
	AvatarURL   *string `json:"avatarUrl"`
	Role        string  `json:"role"`
	Language    *string `json:"language"`
	CreatedAt   string  `json:"createdAt"`
}

func toAdminUserResponse(u *store.User) adminUserResponse {
	return adminUserResponse{ID: u.ID.String(), Email: u.Email, DisplayName: u.DisplayName, SystemRole: u.SystemRole,
		Active: u.Active, AvatarURL: u.AvatarURL, Role: u.SystemRole, Language: u.Language, CreatedAt: instant(u.CreatedAt)}
}

// userResponseFor is the caller's own UserResponse: orgId is the organization its token
// is scoped to (switch-org), else the stored one.
func userResponseFor(c *fiber.Ctx, u *store.User) userResponse {
	r := toUserResponse(u)
	if p := principal(c); p != nil && p.OrgID != nil {
		id := p.OrgID.String()
		r.OrgID = &id
	}
	return r
}
