package api

import (
	"time"

	"github.com/gofiber/fiber/v2"

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
		LastUsedAt: instantPtr(t.LastUsedAt), ExpiresAt: instantPtr(t.ExpiresAt), CreatedAt: instant(t.CreatedAt)}
}

type createTokenRequest struct {
	Name      *string    `json:"name"`
	Scope     *string    `json:"scope"`
	ExpiresAt *time.Time `json:"expiresAt"`
}

func parseCreateToken(body []byte, now time.Time) (auth.NewToken, error) {
	var r createTokenRequest
	if err := decodeJSON(body, &r); err != nil {
		return auth.NewToken{}, err
	}
	if r.Name == nil {
		return auth.NewToken{}, required("name")
	}
	scope := auth.ScopeReadWrite
	if r.Scope != nil {
		if *r.Scope != auth.ScopeReadOnly && *r.Scope != auth.ScopeReadWrite {
			return auth.NewToken{}, badRequest("", "field", "scope")
		}
		scope = *r.Scope
	}
	var f fields
	f.text("name", *r.Name, true, 255)
	if r.ExpiresAt != nil && !r.ExpiresAt.After(now) {
		f.add("expiresAt", "PAST", "field.PAST")
	}
	return auth.NewToken{Name: *r.Name, Scope: scope, ExpiresAt: r.ExpiresAt}, f.err()
}

func (s *Server) listTokens(c *fiber.Ctx) error {
	ts, err := s.auth.ListPATs(c.UserContext(), principal(c))
	if err != nil {
		return err
	}
	out := make([]tokenResponse, 0, len(ts))
	for i := range ts {
		out = append(out, toTokenResponse(&ts[i]))
	}
	return c.JSON(out)
}

func (s *Server) createToken(c *fiber.Ctx) error {
	in, err := parseCreateToken(c.Body(), time.Now())
	if err != nil {
		return err
	}
	t, plain, err := s.auth.CreatePAT(c.UserContext(), principal(c), in, meta(c))
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(tokenCreatedResponse{tokenResponse: toTokenResponse(t), Plaintext: plain})
}

func (s *Server) revokeToken(c *fiber.Ctx) error {
	id, err := pathUUID(c, "id")
	if err != nil {
		return err
	}
	if err := s.auth.RevokePAT(c.UserContext(), principal(c), id, meta(c)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
