package core

import (
	"errors"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/project"
)

// ProjectAccess loads the project named by the :key path parameter with the caller's
// effective role and requires at least min: unknown key 404, not a member 403.
// Every project endpoint goes through it.
func (s *Env) ProjectAccess(c *fiber.Ctx, min project.Role) (*project.Access, error) {
	return s.ProjectAccessWith(c, min, nil)
}

// ProjectAccessWith is ProjectAccess reading extra in the same statement when the
// credential is checked with the project (extra.Scanned says whether it was).
func (s *Env) ProjectAccessWith(c *fiber.Ctx, min project.Role, extra *project.Extra) (*project.Access, error) {
	a, err := s.loadAccess(c, extra)
	if err != nil {
		return nil, err
	}
	if a.Role == project.None {
		return nil, Forbidden("NOT_A_MEMBER")
	}
	if err := a.Require(min); err != nil {
		return nil, err
	}
	return a, nil
}

// loadAccess loads the project of the path with the caller's roles. A caller whose
// token's user row is still to be read (deferredAuth) is authenticated here, in the same
// statement (with whether the token's login session lives): an unknown, inactive or
// revoked user, or an ended session, is 401 as in authenticate, and then
// the principal is set for the rest of the request.
func (s *Env) loadAccess(c *fiber.Ctx, extra *project.Extra) (*project.Access, error) {
	ctx, key := c.UserContext(), c.Params("key")
	if pc, ok := c.Locals(PendingCredentialKey).(*auth.PendingCredential); ok {
		c.Locals(PendingCredentialKey, nil)
		return s.loadAccessWithCredential(c, pc, extra)
	}
	claims, pending := c.Locals(PendingKey).(*auth.AccessClaims)
	if !pending {
		// A credential checked already (a personal access token, an API key, any
		// request deferredAuth leaves out) still reads extra in the access statement.
		if p := Principal(c); extra != nil && p != nil {
			a, _, _, err := project.LoadWithLogin(ctx, s.DB.Pool, key, p.UserID, nil, extra)
			return a, err
		}
		return project.Load(ctx, s.DB.Bun, key, Principal(c))
	}
	c.Locals(PendingKey, nil)
	a, u, live, err := project.LoadWithLogin(ctx, s.DB.Pool, key, claims.UserID, claims.Family(), extra)
	if errors.Is(err, project.ErrNotFound) {
		// No project to read the user with: the credential is checked alone, so a bad
		// one is still 401, not 404.
		p, aerr := s.Authn.AccessUser(ctx, claims)
		if aerr != nil {
			return nil, aerr
		}
		c.Locals(PrincipalKey, p)
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	p, err := claims.Principal(u, live)
	if err != nil {
		return nil, err
	}
	c.Locals(PrincipalKey, p)
	return a, nil
}

// loadAccessWithCredential is loadAccess for a personal access token or API key not
// checked yet: its row is read with the project and judged as the middleware judges it
// (401), then an API key outside its project is 403 API_KEY_SCOPE, as requireUser
// answers; deferredAuth defers only reads, so a read-only token passes.
func (s *Env) loadAccessWithCredential(c *fiber.Ctx, pc *auth.PendingCredential, extra *project.Extra) (*project.Access, error) {
	ctx, key := c.UserContext(), c.Params("key")
	var cred auth.CredentialScan
	a, u, err := project.LoadWithCredential(ctx, s.DB.Pool, key, pc, &cred, extra)
	var p *auth.Principal
	switch {
	case errors.Is(err, project.ErrNotFound):
		// No project to read the credential with: it is checked alone, so a bad one is
		// still 401 and a key of another project 403, not 404.
		p, err = s.Authn.Authenticate(ctx, pc.Token)
		if err == nil {
			err = project.ErrNotFound
		}
	case err == nil:
		p, err = s.Authn.PendingPrincipal(ctx, pc, &cred, u)
	}
	if p != nil {
		c.Locals(PrincipalKey, p)
		if p.Method == auth.MethodAPIKey && p.ProjectKey != key {
			return nil, Forbidden("API_KEY_SCOPE")
		}
	}
	if err != nil {
		return nil, err
	}
	return a, nil
}

// IssueAccess is ProjectAccess followed by the :issueKey path segment (a key or a UUID):
// the preamble of every endpoint under /projects/:key/issues/:issueKey. The issue itself
// is found by the domain call, in the project access returned.
func (s *Env) IssueAccess(c *fiber.Ctx, min project.Role) (*project.Access, issue.Ref, error) {
	a, err := s.ProjectAccess(c, min)
	if err != nil {
		return nil, issue.Ref{}, err
	}
	ref, err := IssueRef(c)
	if err != nil {
		return nil, issue.Ref{}, err
	}
	return a, ref, nil
}

// ProjectAccessOrAdmin is ProjectAccess for the calls a system ADMIN may make on any
// project (a project's audit, its deletion): the ADMIN passes with whatever role it has
// in it, possibly none. Unknown key 404, else as ProjectAccess.
func (s *Env) ProjectAccessOrAdmin(c *fiber.Ctx, min project.Role) (*project.Access, error) {
	if p := Principal(c); p.IsAdmin() {
		return project.Load(c.UserContext(), s.DB.Bun, c.Params("key"), p)
	}
	return s.ProjectAccess(c, min)
}

// ProjectItem is ProjectAccess followed by the UUID in path parameter param: the
// preamble of the endpoints on one thing of a project (a sprint, label, webhook ...).
// Whether the thing belongs to the project is the domain call's to check.
func (s *Env) ProjectItem(c *fiber.Ctx, min project.Role, param string) (*project.Access, uuid.UUID, error) {
	a, err := s.ProjectAccess(c, min)
	if err != nil {
		return nil, uuid.Nil, err
	}
	id, err := PathUUID(c, param)
	if err != nil {
		return nil, uuid.Nil, err
	}
	return a, id, nil
}

// IssueRef reads the :issueKey path segment, an issue key (ABC-12) or a UUID.
func IssueRef(c *fiber.Ctx) (issue.Ref, error) {
	ref, ok := issue.ParseRef(c.Params("issueKey"))
	if !ok {
		return ref, BadRequest("INVALID_ISSUE_REF")
	}
	return ref, nil
}
