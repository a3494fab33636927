package api

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
	workapi "github.com/taskweave/taskweave/api/work"
	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/domain/idempotency"
)

// HeaderIdempotencyKey names the key of a POST a client may retry safely (IETF httpapi
// draft "idempotency-key-header"; docs/api-conventions.md#safe-retries).
const HeaderIdempotencyKey = "Idempotency-Key"

// headerReplayed marks an answer sent again from the key's record.
const headerReplayed = "Idempotent-Replayed"

// maxIdempotencyKey is the longest key accepted.
const maxIdempotencyKey = 255

// leaseMargin is how long past the request deadline a running key stays claimed before
// a retry may take it over (the process that held it presumably died).
const leaseMargin = 5 * time.Second

// idempotent runs a POST sent with an Idempotency-Key at most once per caller and key:
// a retry gets the first answer again (status, body, Location) without the work being
// done again. It runs after requireUser, so only requests with a credential take part;
// uploads (streamed multipart bodies) do not.
func (s *Server) idempotent(c *fiber.Ctx) error {
	raw := c.Get(HeaderIdempotencyKey)
	if c.Method() != fiber.MethodPost || raw == "" || workapi.IsUploadRoute(c) {
		return c.Next()
	}
	key, ok := idempotencyKey(raw)
	if !ok {
		return core.BadRequest("INVALID_IDEMPOTENCY_KEY", "max", "255")
	}
	scope := idempotencyScope(c)
	if scope == "" {
		return c.Next()
	}
	r := idempotency.Request{Scope: scope, Key: key,
		Fingerprint: idempotency.Fingerprint(c.Method(), c.OriginalURL(), c.Body())}
	kept, err := s.keys.Begin(c.UserContext(), r, s.cfg.RequestTimeout+leaseMargin)
	if err != nil {
		return err
	}
	if kept != nil {
		c.Status(kept.Status)
		if kept.ContentType != "" {
			c.Set(fiber.HeaderContentType, kept.ContentType)
		}
		if kept.Location != "" {
			c.Set(fiber.HeaderLocation, kept.Location)
		}
		c.Set(headerReplayed, "true")
		return c.Send(kept.Body)
	}
	defer func() {
		if p := recover(); p != nil {
			ctx, cancel := afterRequest(c)
			defer cancel()
			_ = s.keys.Release(ctx, r)
			panic(p)
		}
	}()
	if err := c.Next(); err != nil {
		s.env.Errors.Write(c, s.failures, err)
	}
	ctx, cancel := afterRequest(c)
	defer cancel()
	resp := c.Response()
	status := resp.StatusCode()
	if status >= 500 || status == http.StatusTooManyRequests || status == http.StatusUnauthorized {
		// Nothing was done, or a retry may well succeed: the key is free again.
		if err := s.keys.Release(ctx, r); err != nil {
			s.log.Error("release idempotency key", "err", err)
		}
		return nil
	}
	done := idempotency.Response{Status: status, ContentType: string(resp.Header.ContentType()),
		Location: string(resp.Header.Peek(fiber.HeaderLocation))}
	if !resp.IsBodyStream() && len(resp.Body()) <= idempotency.MaxBody {
		done.Body, done.Stored = resp.Body(), true
	}
	if err := s.keys.Finish(ctx, r, done); err != nil {
		s.log.Error("keep idempotent answer", "err", err)
	}
	return nil
}

// afterRequest is a context for bookkeeping after the request's work: its deadline may
// have passed, the record is written anyway.
func afterRequest(c *fiber.Ctx) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(c.UserContext()), 5*time.Second)
}

// idempotencyKey is the key sent: 1 to 255 visible ASCII characters, optionally quoted
// as the draft's structured-field string.
func idempotencyKey(raw string) (string, bool) {
	key := strings.TrimSpace(raw)
	if len(key) >= 2 && key[0] == '"' && key[len(key)-1] == '"' {
		key = key[1 : len(key)-1]
	}
	if key == "" || len(key) > maxIdempotencyKey {
		return "", false
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return "", false
		}
	}
	return key, true
}

// idempotencyScope is whose keys a request's key is among: the user and the kind of
// credential (an API key's also its project), so two callers never share a key.
func idempotencyScope(c *fiber.Ctx) string {
	if p := core.Principal(c); p != nil {
		return string(p.Method) + ":" + p.UserID.String() + ":" + p.ProjectKey
	}
	if claims, ok := c.Locals(core.PendingKey).(*auth.AccessClaims); ok {
		return string(auth.MethodJWT) + ":" + claims.UserID.String() + ":"
	}
	return ""
}
