package work

import (
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/project"
)

// searchPageSize is GET /search's default page size.
const searchPageSize = 20

// searchTooLong is the 400 of a q over issue.MaxQueryLength characters or
// issue.MaxQueryTerms words.
func searchTooLong() error {
	length, terms := strconv.Itoa(issue.MaxQueryLength), strconv.Itoa(issue.MaxQueryTerms)
	e := core.BadRequest("SEARCH_TOO_LONG", "max", length, "terms", terms)
	e.Details = map[string]string{"field": "q", "max": length, "terms": terms}
	return e
}

// search is GET /search: issues matching q across the projects the caller can read
// (or the one projectKey names), best match first, paged.
func (s *handlers) search(c *fiber.Ctx) error {
	q, err := issue.SearchText(c.Query("q"))
	if err != nil {
		return filterProblem(err)
	}
	if q == "" {
		return core.BadRequest("INVALID_QUERY", "field", "q")
	}
	pr, err := core.ParsePage(c, searchPageSize)
	if err != nil {
		return err
	}
	as, err := project.ListFor(c.UserContext(), s.DB.Bun, core.Principal(c).UserID)
	if err != nil {
		return err
	}
	key := c.Query("projectKey")
	scope := make([]issue.SearchScope, 0, len(as))
	for i := range as {
		if a := &as[i]; a.Role.AtLeast(project.Viewer) && (key == "" || strings.EqualFold(a.Project.Key, key)) {
			scope = append(scope, issue.SearchScope{ID: a.Project.ID, Key: a.Project.Key})
		}
	}
	if key != "" && len(scope) == 0 {
		// Unknown and unreadable alike: the reply does not tell which projects exist.
		return core.NotFound("PROJECT_NOT_FOUND")
	}
	// Rank is no key to walk by: a cursor holds the position after its page (signed,
	// for this query and project filter only). Every page ranks every match anyway.
	cursorScope := "search\x00" + strings.ToLower(key) + "\x00" + q
	offset := pr.Offset()
	keys, err := pr.After(cursorScope, 1)
	if err != nil {
		return err
	}
	if keys != nil {
		if offset, err = strconv.Atoi(keys[0]); err != nil || offset < 0 {
			return core.BadRequest("INVALID_CURSOR")
		}
	}
	views, total, exact, err := s.issues().Search(c.UserContext(), scope, q, core.Language(c), offset, pr.Limit())
	if err != nil {
		return err
	}
	next := pr.Next(c, cursorScope, len(views), total, func(i int) []string { return []string{strconv.Itoa(offset + i + 1)} })
	views = core.Trim(views, pr)
	content := make([]core.IssueResponse, len(views))
	for i, v := range views {
		content[i] = core.ToIssueResponse(v)
	}
	return c.JSON(core.NewCountedPage(content, pr, total, exact, next))
}
