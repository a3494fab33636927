package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/auth"
)

// authErrKey holds why a sent credential was refused, for requireUser's 401 (an
// expired access token's carries reason TOKEN_EXPIRED).
const authErrKey = "authError"

// edge runs first for every request: the security headers, a deadline on the request
// context, panic recovery without a stack trace in the reply, error rendering and the
// HTTP metrics.
func (s *Server) edge(c *fiber.Ctx) (err error) {
	start := time.Now()
	secureHeaders(c)
	// Prefer: handling=strict is applied by the body decoding (core.Decode); the reply
	// says so, on errors too, and only when it was asked (RFC 7240).
	if core.PrefersStrict(c) {
		c.Set(core.HeaderPreferenceApplied, core.PreferenceStrict)
	}
	core.SetCursorKey(c, s.cfg.CursorKey)
	s.closeWhileDraining(c)
	ctx, cancel := context.WithTimeout(c.UserContext(), s.cfg.RequestTimeout)
	defer cancel()
	c.SetUserContext(ctx)
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("panic in handler", "method", c.Method(), "path", c.Path(), "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", r)
		}
		if err != nil {
			s.env.Errors.Write(c, s.failures, err)
			err = nil
		}
		s.metrics.observe(c, time.Since(start))
	}()
	return c.Next()
}

// authenticate resolves a bearer credential when one is sent. It never refuses: public
// routes ignore a bad token, protected ones answer 401 in requireUser.
func (s *Server) authenticate(c *fiber.Ctx) error {
	h := c.Get(fiber.HeaderAuthorization)
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		token := strings.TrimSpace(h[7:])
		if deferredAuth(c, token) {
			if pc := auth.Pending(token); pc != nil {
				c.Locals(core.PendingCredentialKey, pc)
				return c.Next()
			}
			claims, err := s.authn.VerifyAccessToken(token)
			switch {
			case err == nil:
				c.Locals(core.PendingKey, claims)
			case !core.IsUnauthenticated(err):
				return err
			default:
				c.Locals(authErrKey, err)
			}
			return c.Next()
		}
		p, err := s.authn.Authenticate(c.UserContext(), token)
		switch {
		case err == nil:
			c.Locals(core.PrincipalKey, p)
		case !core.IsUnauthenticated(err):
			return err
		default:
			c.Locals(authErrKey, err)
		}
	}
	return c.Next()
}

// deferredAuth picks the requests whose access token's user row is read with the
// project of the path, in the statement core.Env.ProjectAccess makes anyway: the issue
// list and issue creation, the busiest calls, and the board (GET), which clients poll
// and which reads its head in that statement too (board.HeadRead); their handlers call
// core.Env.ProjectAccess before anything else. A personal access token or API key is
// deferred so for the two reads only (its row is read in that statement, then judged:
// auth.PendingCredential): a write's idempotency key is scoped by the credential's
// user, which must be known before the handler. Every other request is authenticated
// here in full.
func deferredAuth(c *fiber.Ctx, token string) bool {
	m := c.Method()
	if strings.HasPrefix(token, auth.PATPrefix) || strings.HasPrefix(token, auth.APIKeyPrefix) {
		if m != http.MethodGet {
			return false
		}
	}
	rest, ok := strings.CutPrefix(c.Path(), "/api/v1/projects/")
	key, tail, _ := strings.Cut(rest, "/")
	if !ok || key == "" {
		return false
	}
	switch tail {
	case "issues":
		return m == http.MethodGet || m == http.MethodPost
	case "board":
		return m == http.MethodGet
	}
	return false
}

// requireUser guards every protected route: 401 without a valid credential, 403 for a
// read-only token that writes or an API key outside its project.
func (s *Server) requireUser(c *fiber.Ctx) error {
	p := core.Principal(c)
	if p == nil {
		if _, pending := c.Locals(core.PendingKey).(*auth.AccessClaims); pending {
			return c.Next() // core.Env.ProjectAccess checks the user row
		}
		if _, pending := c.Locals(core.PendingCredentialKey).(*auth.PendingCredential); pending {
			return c.Next() // core.Env.ProjectAccess checks the credential's row
		}
		if err, ok := c.Locals(authErrKey).(error); ok {
			return err // an ErrUnauthenticated: 401, TOKEN_EXPIRED for an expired token
		}
		return core.ErrUnauthorized
	}
	if p.Method == auth.MethodPAT && p.Scope == auth.ScopeReadOnly {
		switch c.Method() {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
		default:
			return core.Forbidden("READ_ONLY_TOKEN")
		}
	}
	if p.Method == auth.MethodAPIKey && !apiKeyMayUse(p, c.Path()) {
		return core.Forbidden("API_KEY_SCOPE")
	}
	return c.Next()
}

// apiRateLimited counts every protected request against its credential's limit per
// minute (TW_API_RATE_LIMIT; off when it is 0), answering the RateLimit headers.
func (s *Server) apiRateLimited(c *fiber.Ctx) error {
	if probe, _ := c.Locals(probeKey).(bool); s.deps.APILimiter == nil || probe {
		return c.Next()
	}
	if bucket := apiBucket(c); bucket != "" {
		if err := core.Limit(c, s.deps.APILimiter, "api", bucket); err != nil {
			return err
		}
	}
	return c.Next()
}

// apiBucket is the credential a request is counted against: a personal access token or
// API key by itself, a login's access tokens (renewed every few minutes) by their user.
func apiBucket(c *fiber.Ctx) string {
	if claims, ok := c.Locals(core.PendingKey).(*auth.AccessClaims); ok {
		return "api:user:" + claims.UserID.String()
	}
	_, pendingCredential := c.Locals(core.PendingCredentialKey).(*auth.PendingCredential)
	switch p := core.Principal(c); {
	case pendingCredential: // counted by itself, as below
	case p == nil:
		return ""
	case p.Method == auth.MethodJWT:
		return "api:user:" + p.UserID.String()
	}
	token := strings.TrimSpace(c.Get(fiber.HeaderAuthorization))
	sum := sha256.Sum256([]byte(token))
	return "api:token:" + hex.EncodeToString(sum[:16])
}

// apiKeyMayUse keeps a project API key inside /api/v1/projects/{its key}.
func apiKeyMayUse(p *auth.Principal, path string) bool {
	if p.ProjectKey == "" {
		return false
	}
	base := "/api/v1/projects/" + p.ProjectKey
	return path == base || strings.HasPrefix(path, base+"/")
}
