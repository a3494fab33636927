package core

import (
	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/store"
)

// UserResponse is UserResponse in api/openapi/00-core.yaml.
type UserResponse struct {
	ID          string  `json:"id"`
	Email       string  `json:"email"`
	DisplayName string  `json:"displayName"`
	AvatarURL   *string `json:"avatarUrl"`
	Role        string  `json:"role"`
	Language    *string `json:"language"`
	OrgID       *string `json:"orgId"`
	CreatedAt   string  `json:"createdAt"`
}

// ToUserResponse is u on the wire.
func ToUserResponse(u *store.User) UserResponse {
	r := UserResponse{ID: u.ID.String(), Email: u.Email, DisplayName: u.DisplayName, AvatarURL: u.AvatarURL,
		Role: u.SystemRole, Language: u.Language, CreatedAt: Instant(u.CreatedAt)}
	if u.OrgID != nil {
		s := u.OrgID.String()
		r.OrgID = &s
	}
	return r
}

// AdminUserResponse is AdminUserResponse in api/openapi/00-core.yaml (systemRole, and
// role too).
type AdminUserResponse struct {
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

// ToAdminUserResponse is u on the wire for a system ADMIN.
func ToAdminUserResponse(u *store.User) AdminUserResponse {
	return AdminUserResponse{ID: u.ID.String(), Email: u.Email, DisplayName: u.DisplayName, SystemRole: u.SystemRole,
		Active: u.Active, AvatarURL: u.AvatarURL, Role: u.SystemRole, Language: u.Language, CreatedAt: Instant(u.CreatedAt)}
}

// UserResponseFor is the caller's own UserResponse: orgId is the organization its token
// is scoped to (switch-org), else the stored one.
func UserResponseFor(c *fiber.Ctx, u *store.User) UserResponse {
	r := ToUserResponse(u)
	if p := Principal(c); p != nil && p.OrgID != nil {
		id := p.OrgID.String()
		r.OrgID = &id
	}
	return r
}
