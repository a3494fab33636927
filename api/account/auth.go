package account

import (
	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/auth"
)

type registerRequest struct {
	Email       *string `json:"email"`
	DisplayName *string `json:"displayName"`
	Password    *string `json:"password"`
}

// parseRegister decodes and validates POST /auth/register.
func parseRegister(body core.Body) (auth.Registration, error) {
	var r registerRequest
	if err := body.Decode(&r); err != nil {
		return auth.Registration{}, err
	}
	switch {
	case r.Email == nil:
		return auth.Registration{}, core.Required("email")
	case r.DisplayName == nil:
		return auth.Registration{}, core.Required("displayName")
	case r.Password == nil:
		return auth.Registration{}, core.Required("password")
	}
	var f core.Fields
	f.Email("email", *r.Email)
	f.Text("displayName", *r.DisplayName, true, core.MaxName)
	f.Password("password", *r.Password)
	if err := f.Err(); err != nil {
		return auth.Registration{}, err
	}
	return auth.Registration{Email: *r.Email, DisplayName: *r.DisplayName, Password: *r.Password}, nil
}

type loginRequest struct {
	Email    *string `json:"email"`
	Password *string `json:"password"`
}

// parseLogin decodes POST /auth/login; a malformed email is simply a failed login.
func parseLogin(body core.Body) (email, password string, err error) {
	var r loginRequest
	if err := body.Decode(&r); err != nil {
		return "", "", err
	}
	if r.Email == nil {
		return "", "", core.Required("email")
	}
	if r.Password == nil {
		return "", "", core.Required("password")
	}
	return *r.Email, *r.Password, nil
}

type refreshRequest struct {
	RefreshToken *string `json:"refreshToken"`
}

func parseRefresh(body core.Body) (string, error) {
	var r refreshRequest
	if err := body.Decode(&r); err != nil {
		return "", err
	}
	if r.RefreshToken == nil {
		return "", core.Required("refreshToken")
	}
	return *r.RefreshToken, nil
}

// authResponse is the token pair of register, login and refresh.
type authResponse struct {
	AccessToken  string `json:"accessToken"`
	RefreshToken string `json:"refreshToken"`
	TokenType    string `json:"tokenType"`
	ExpiresIn    int64  `json:"expiresIn"`
}

func toAuthResponse(p auth.TokenPair) authResponse {
	return authResponse{AccessToken: p.AccessToken, RefreshToken: p.RefreshToken, TokenType: "Bearer", ExpiresIn: int64(p.ExpiresIn.Seconds())}
}

func (s *handlers) register(c *fiber.Ctx) error {
	in, err := parseRegister(core.BodyOf(c))
	if err != nil {
		return err
	}
	_, pair, err := s.Auth.Register(c.UserContext(), in, core.Meta(c))
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(toAuthResponse(pair))
}

func (s *handlers) login(c *fiber.Ctx) error {
	email, password, err := parseLogin(core.BodyOf(c))
	if err != nil {
		return err
	}
	_, pair, err := s.Auth.Login(c.UserContext(), email, password, core.Meta(c))
	if err != nil {
		return err
	}
	return c.JSON(toAuthResponse(pair))
}

func (s *handlers) refresh(c *fiber.Ctx) error {
	token, err := parseRefresh(core.BodyOf(c))
	if err != nil {
		return err
	}
	pair, err := s.Auth.Refresh(c.UserContext(), token, core.Meta(c))
	if err != nil {
		return err
	}
	return c.JSON(toAuthResponse(pair))
}

func (s *handlers) logout(c *fiber.Ctx) error {
	if err := s.Auth.Logout(c.UserContext(), core.Principal(c), core.Meta(c)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *handlers) me(c *fiber.Ctx) error {
	p := core.Principal(c)
	u, err := s.Auth.User(c.UserContext(), p.UserID)
	if err != nil {
		return err
	}
	return c.JSON(core.UserResponseFor(c, u))
}
