package account

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/store"
)

type tokenResponse struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	TokenPrefix string  `json:"tokenPrefix"`
	Scope       string  `json:"scope"`
	LastUsedAt  *string `json:"lastUsedAt"`
	ExpiresAt   *string `json:"expiresAt"`
	CreatedAt   string  `json:"createdAt"`
}

type tokenCreatedResponse struct {
	tokenResponse
	Plaintext string `json:"plaintext"`
}

func toTokenResponse(t *store.PersonalAccessToken) tokenResponse {
	return tokenResponse{ID: t.ID.String(), Name: t.Name, TokenPrefix: t.TokenPrefix, Scope: t.Scope,
		LastUsedAt: core.InstantPtr(t.LastUsedAt), ExpiresAt: core.InstantPtr(t.ExpiresAt), CreatedAt: core.Instant(t.CreatedAt)}
}

type createTokenRequest struct {
	Name      *string    `json:"name"`
	Scope     *string    `json:"scope"`
	ExpiresAt *time.Time `json:"expiresAt"`
}

func parseCreateToken(body core.Body, now time.Time) (auth.NewToken, error) {
	var r createTokenRequest
	if err := body.Decode(&r); err != nil {
		return auth.NewToken{}, err
	}
	if r.Name == nil {
		return auth.NewToken{}, core.Required("name")
	}
	scope := auth.ScopeReadWrite
	if r.Scope != nil {
		if *r.Scope != auth.ScopeReadOnly && *r.Scope != auth.ScopeReadWrite {
			return auth.NewToken{}, core.BadRequest("", "field", "scope")
		}
		scope = *r.Scope
	}
	var f core.Fields
	f.Text("name", *r.Name, true, core.MaxName)
	if r.ExpiresAt != nil && !r.ExpiresAt.After(now) {
		f.Add("expiresAt", "PAST", "field.PAST")
	}
	return auth.NewToken{Name: *r.Name, Scope: scope, ExpiresAt: r.ExpiresAt}, f.Err()
}

func (s *handlers) listTokens(c *fiber.Ctx) error {
	ts, err := s.Auth.ListPATs(c.UserContext(), core.Principal(c))
	if err != nil {
		return err
	}
	out := make([]tokenResponse, 0, len(ts))
	for i := range ts {
		out = append(out, toTokenResponse(&ts[i]))
	}
	return c.JSON(out)
}

func (s *handlers) createToken(c *fiber.Ctx) error {
	in, err := parseCreateToken(core.BodyOf(c), time.Now())
	if err != nil {
		return err
	}
	t, plain, err := s.Auth.CreatePAT(c.UserContext(), core.Principal(c), in, core.Meta(c))
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(tokenCreatedResponse{tokenResponse: toTokenResponse(t), Plaintext: plain})
}

func (s *handlers) revokeToken(c *fiber.Ctx) error {
	id, err := core.PathUUID(c, "id")
	if err != nil {
		return err
	}
	if err := s.Auth.RevokePAT(c.UserContext(), core.Principal(c), id, core.Meta(c)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
