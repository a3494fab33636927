package api

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/taskweave/taskweave/api/core"
)

// Conditional requests (docs/api-conventions.md#conditional-requests): the replies
// clients poll carry an ETag, and If-None-Match answers 304 when nothing changed; a
// change of an issue, comment, automation rule or workflow sent with If-Match is 412
// when the resource changed since the client read it.

// tagged are the GET replies that carry an ETag: projects, issues, the board, comments
// and automation rules, one or a list, and the workflow (whose changes If-Match guards).
var tagged = regexp.MustCompile(`^/api/v1/(projects(/[^/]+(/issues(/[^/]+(/comments)?)?|/board|/workflow|/automation/rules(/[^/]+)?)?)?|admin/automation/rules(/[^/]+)?)$`)

// guardedResource is, for a change If-Match may guard, the GET whose reply is the
// resource's current state, and for a comment its id (its state is its item in the
// issue's comment list).
type guardedResource struct {
	get     string
	comment string
}

var (
	issuePath    = regexp.MustCompile(`^(/api/v1/projects/[^/]+/issues/[^/]+)$`)
	commentPath  = regexp.MustCompile(`^(/api/v1/projects/[^/]+/issues/[^/]+/comments)/([^/]+)$`)
	rulePath     = regexp.MustCompile(`^(/api/v1/(?:projects/[^/]+|admin)/automation/rules/[^/]+)(?:/toggle)?$`)
	workflowPath = regexp.MustCompile(`^(/api/v1/projects/[^/]+/workflow)/.+$`)
)

// guarded is the resource a PATCH, PUT or DELETE of path changes, if If-Match may
// guard it.
func guarded(method, path string) (guardedResource, bool) {
	switch method {
	case fiber.MethodPatch, fiber.MethodPut, fiber.MethodDelete:
	default:
		return guardedResource{}, false
	}
	if m := commentPath.FindStringSubmatch(path); m != nil && method != fiber.MethodPatch {
		return guardedResource{get: m[1], comment: m[2]}, true
	}
	for _, re := range []*regexp.Regexp{issuePath, rulePath, workflowPath} {
		if m := re.FindStringSubmatch(path); m != nil {
			return guardedResource{get: m[1]}, true
		}
	}
	return guardedResource{}, false
}

// probeKey marks the in-process GET that reads a guarded resource's state; it is not
// counted against the caller's rate limit.
const probeKey = "conditionalProbe"

// conditional adds ETags to the tagged GET replies (304 for a matching If-None-Match)
// and checks If-Match on guarded changes. Conditional changes of one resource are
// serialized under a Postgres advisory lock from the check to the end of the change, so
// of two clients changing what they both read, the second is 412 on any replica.
func (s *Server) conditional(c *fiber.Ctx) error {
	method, path := c.Method(), strings.TrimSuffix(c.Path(), "/")
	if (method == fiber.MethodGet || method == fiber.MethodHead) && tagged.MatchString(path) {
		if err := c.Next(); err != nil {
			return err
		}
		return s.tagReply(c)
	}
	ifMatch := c.Get(fiber.HeaderIfMatch)
	res, ok := guarded(method, path)
	if ifMatch == "" || !ok {
		if err := c.Next(); err != nil {
			return err
		}
		return tagComment(c, method, path)
	}
	conn, err := s.db.Pool.Acquire(c.UserContext())
	if err != nil {
		return err
	}
	defer conn.Release()
	lockKey := "etag:" + res.get
	if _, err := conn.Exec(c.UserContext(), "SELECT pg_advisory_lock(hashtextextended($1, 0))", lockKey); err != nil {
		return err
	}
	defer func() {
		ctx, cancel := afterRequest(c)
		defer cancel()
		_, _ = conn.Exec(ctx, "SELECT pg_advisory_unlock(hashtextextended($1, 0))", lockKey)
	}()
	current, found := s.currentTag(c, res)
	if found && !matchesAny(ifMatch, current) {
		return core.NewError(http.StatusPreconditionFailed, "PRECONDITION_FAILED", "")
	}
	if err := c.Next(); err != nil {
		return err
	}
	return tagComment(c, method, path)
}

var commentsPath = regexp.MustCompile(`^/api/v1/projects/[^/]+/issues/[^/]+/comments$`)

// tagComment gives a comment's create and edit replies its tag: a comment has no GET of
// its own, and its item in the list is the same JSON.
func tagComment(c *fiber.Ctx, method, path string) error {
	created := method == fiber.MethodPost && commentsPath.MatchString(path)
	edited := method == fiber.MethodPut && commentPath.MatchString(path)
	if st := c.Response().StatusCode(); (created && st == http.StatusCreated) || (edited && st == http.StatusOK) {
		c.Set(fiber.HeaderETag, core.ETag(c.Response().Body()))
	}
	return nil
}

// tagReply sets the ETag of a 200 JSON reply and turns it into a bodiless 304 when the
// client's If-None-Match names it. A handler that serves cached bytes sets their tag
// itself (core.ETag of the same bytes, kept with them: the board), and it is used as is.
func (s *Server) tagReply(c *fiber.Ctx) error {
	resp := c.Response()
	if resp.StatusCode() != http.StatusOK || resp.IsBodyStream() {
		return nil
	}
	tag := string(resp.Header.Peek(fiber.HeaderETag))
	if tag == "" {
		tag = core.ETag(resp.Body())
		c.Set(fiber.HeaderETag, tag)
	}
	if inm := c.Get(fiber.HeaderIfNoneMatch); inm != "" && matchesAny(inm, tag) {
		resp.SetStatusCode(http.StatusNotModified)
		resp.ResetBody()
		resp.Header.Del(fiber.HeaderContentType)
	}
	return nil
}

// matchesAny applies the weak comparison of RFC 9110: "*" matches any current state.
func matchesAny(header, tag string) bool {
	want := strings.TrimPrefix(tag, "W/")
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == want {
			return true
		}
	}
	return false
}

// currentTag reads the guarded resource's state with an in-process GET as the caller
// and answers its tag; found is false when it cannot be read (the change then answers
// for itself: 404, 403).
func (s *Server) currentTag(c *fiber.Ctx, res guardedResource) (string, bool) {
	if res.comment == "" {
		status, body := s.probe(c, res.get)
		return core.ETag(body), status == http.StatusOK
	}
	for page := 0; page < 1000; page++ {
		status, body := s.probe(c, res.get+"?size=200&page="+strconv.Itoa(page))
		if status != http.StatusOK {
			return "", false
		}
		var list struct {
			Content []json.RawMessage `json:"content"`
			Last    bool              `json:"last"`
		}
		if json.Unmarshal(body, &list) != nil {
			return "", false
		}
		for _, item := range list.Content {
			var head struct {
				ID string `json:"id"`
			}
			if json.Unmarshal(item, &head) == nil && head.ID == res.comment {
				return core.ETag(item), true
			}
		}
		if list.Last || len(list.Content) == 0 {
			return "", false
		}
	}
	return "", false
}

// probe runs GET target through the whole app as the caller (same credential, language
// and address) and answers the reply's status and body.
func (s *Server) probe(c *fiber.Ctx, target string) (int, []byte) {
	var req fasthttp.Request
	req.Header.SetMethod(fiber.MethodGet)
	req.SetRequestURI(target)
	for _, h := range []string{fiber.HeaderAuthorization, fiber.HeaderAcceptLanguage, fiber.HeaderXForwardedFor} {
		if v := c.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	var fctx fasthttp.RequestCtx
	fctx.Init(&req, c.Context().RemoteAddr(), nil)
	fctx.SetUserValue(probeKey, true)
	s.App.Handler()(&fctx)
	return fctx.Response.StatusCode(), append([]byte(nil), fctx.Response.Body()...)
}
