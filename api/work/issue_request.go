package work

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/customfield"
	"github.com/taskweave/taskweave/domain/issue"
)

// createIssueRequest is POST /projects/{key}/issues. Ids arrive as strings so a
// malformed one is named in the 400.
type createIssueRequest struct {
	Title       *string  `json:"title"`
	Description *string  `json:"description"`
	Type        *string  `json:"type"`
	Priority    *string  `json:"priority"`
	AssigneeID  *string  `json:"assigneeId"`
	ParentID    *string  `json:"parentId"`
	StoryPoints *int     `json:"storyPoints"`
	DueDate     *string  `json:"dueDate"`
	SprintID    *string  `json:"sprintId"`
	LabelIDs    []string `json:"labelIds"`

	CustomFieldValues []customFieldValueRequest `json:"customFieldValues"`
}

// parseCreateIssue decodes and validates a create request into issue.NewIssue.
func parseCreateIssue(body []byte) (issue.NewIssue, error) {
	var r createIssueRequest
	if err := core.DecodeJSON(body, &r); err != nil {
		return issue.NewIssue{}, err
	}
	if r.Title == nil {
		return issue.NewIssue{}, core.Required("title")
	}
	in := issue.NewIssue{Title: *r.Title, Description: r.Description, Type: issue.TypeTask, Priority: issue.PriorityMedium,
		StoryPoints: r.StoryPoints}
	var err error
	if r.Type != nil {
		if in.Type, err = issueEnum("type", *r.Type, issue.Types); err != nil {
			return in, err
		}
	}
	if r.Priority != nil {
		if in.Priority, err = issueEnum("priority", *r.Priority, issue.Priorities); err != nil {
			return in, err
		}
	}
	if in.AssigneeID, err = core.OptionalID("assigneeId", r.AssigneeID); err != nil {
		return in, err
	}
	if in.ParentID, in.ParentKey, err = core.IssueMember("parentId", r.ParentID); err != nil {
		return in, err
	}
	if in.SprintID, err = core.OptionalID("sprintId", r.SprintID); err != nil {
		return in, err
	}
	if r.LabelIDs != nil {
		if in.LabelIDs, err = core.ParseIDs("labelIds", r.LabelIDs); err != nil {
			return in, err
		}
	}
	if in.CustomFieldValues, err = parseCustomFieldValues(r.CustomFieldValues); err != nil {
		return in, err
	}
	// The API's clients show a form: every required custom field needs a value.
	in.RequireCustomFields = true
	var f core.Fields
	issueText(&f, "title", r.Title, true, issue.MaxTitle)
	issueText(&f, "description", r.Description, false, math.MaxInt)
	issueStoryPoints(&f, r.StoryPoints)
	in.DueDate = issueDate(&f, "dueDate", r.DueDate)
	return in, f.Err()
}

// patchIssueRequest is PATCH /projects/{key}/issues/{id}: absent or null changes
// nothing, only the clear flags clear; the id lists are absent (unchanged), [] (clear)
// or the new set.
type patchIssueRequest struct {
	Title             *string   `json:"title"`
	Description       *string   `json:"description"`
	StatusID          *string   `json:"statusId"`
	AssigneeID        *string   `json:"assigneeId"`
	Priority          *string   `json:"priority"`
	StoryPoints       *int      `json:"storyPoints"`
	Type              *string   `json:"type"`
	DueDate           *string   `json:"dueDate"`
	SprintID          *string   `json:"sprintId"`
	LabelIDs          *[]string `json:"labelIds"`
	FixVersionIDs     *[]string `json:"fixVersionIds"`
	AffectsVersionIDs *[]string `json:"affectsVersionIds"`
	ClearAssignee     *bool     `json:"clearAssignee"`
	ClearStoryPoints  *bool     `json:"clearStoryPoints"`
	ClearDueDate      *bool     `json:"clearDueDate"`
	ClearSprint       *bool     `json:"clearSprint"`

	CustomFieldValues []customFieldValueRequest `json:"customFieldValues"`
}

// parsePatchIssue decodes and validates an update into issue.Patch.
func parsePatchIssue(body []byte) (issue.Patch, error) {
	var r patchIssueRequest
	if err := core.DecodeJSON(body, &r); err != nil {
		return issue.Patch{}, err
	}
	in := issue.Patch{Title: r.Title, Description: r.Description, StoryPoints: r.StoryPoints,
		ClearAssignee: issueFlag(r.ClearAssignee), ClearStoryPoints: issueFlag(r.ClearStoryPoints),
		ClearDueDate: issueFlag(r.ClearDueDate), ClearSprint: issueFlag(r.ClearSprint)}
	var err error
	if r.Type != nil {
		v, err := issueEnum("type", *r.Type, issue.Types)
		if err != nil {
			return in, err
		}
		in.Type = &v
	}
	if r.Priority != nil {
		v, err := issueEnum("priority", *r.Priority, issue.Priorities)
		if err != nil {
			return in, err
		}
		in.Priority = &v
	}
	if in.StatusID, err = core.OptionalID("statusId", r.StatusID); err != nil {
		return in, err
	}
	if in.AssigneeID, err = core.OptionalID("assigneeId", r.AssigneeID); err != nil {
		return in, err
	}
	if in.SprintID, err = core.OptionalID("sprintId", r.SprintID); err != nil {
		return in, err
	}
	for _, l := range []struct {
		name string
		in   *[]string
		out  **[]uuid.UUID
	}{{"labelIds", r.LabelIDs, &in.LabelIDs}, {"fixVersionIds", r.FixVersionIDs, &in.FixVersionIDs},
		{"affectsVersionIds", r.AffectsVersionIDs, &in.AffectsVersionIDs}} {
		if l.in == nil {
			continue
		}
		ids, err := core.ParseIDs(l.name, *l.in)
		if err != nil {
			return in, err
		}
		*l.out = &ids
	}
	if r.CustomFieldValues != nil {
		if in.CustomFieldValues, err = parseCustomFieldValues(r.CustomFieldValues); err != nil {
			return in, err
		}
	}
	var f core.Fields
	issueText(&f, "title", r.Title, true, issue.MaxTitle)
	issueText(&f, "description", r.Description, false, math.MaxInt)
	issueStoryPoints(&f, r.StoryPoints)
	in.DueDate = issueDate(&f, "dueDate", r.DueDate)
	return in, f.Err()
}

// parseIssueFilter reads the list query: every filter is one more AND condition; a
// malformed id, enum or flag is BAD_REQUEST.
func parseIssueFilter(c *fiber.Ctx, me uuid.UUID) (issue.Filter, error) {
	var f issue.Filter
	flag := func(name string) (bool, error) {
		switch v := c.Query(name); v {
		case "", "false":
			return false, nil
		case "true":
			return true, nil
		default:
			return false, core.BadRequest("INVALID_QUERY", "field", name)
		}
	}
	var err error
	var assigneeMe bool
	if assigneeMe, err = flag("assigneeMe"); err != nil {
		return f, err
	}
	if assigneeMe {
		f.AssigneeMe = &me
	}
	if f.Overdue, err = flag("overdue"); err != nil {
		return f, err
	}
	if f.Backlog, err = flag("backlog"); err != nil {
		return f, err
	}
	// In the order of the endpoint's parameter list, not a map's: with several malformed
	// ids the reply names the same one every time.
	for _, p := range []struct {
		name string
		dst  **uuid.UUID
	}{{"labelId", &f.LabelID}, {"fixVersionId", &f.FixVersionID}, {"affectsVersionId", &f.AffectsVersionID},
		{"statusId", &f.StatusID}, {"assigneeId", &f.AssigneeID}, {"sprintId", &f.SprintID}, {"parentId", &f.ParentID}} {
		if *p.dst, err = core.QueryID(p.name, c.Query(p.name)); err != nil {
			return f, err
		}
	}
	if v := c.Query("type"); v != "" {
		if f.Type, err = issueEnum("type", v, issue.Types); err != nil {
			return f, err
		}
	}
	if v := c.Query("priority"); v != "" {
		if f.Priority, err = issueEnum("priority", v, issue.Priorities); err != nil {
			return f, err
		}
	}
	// Spring-style "sort=updatedAt,desc" is accepted; the direction is fixed per key.
	switch key, _, _ := strings.Cut(c.Query("sort"), ","); key {
	case "":
	case issue.SortCreated, issue.SortUpdated:
		f.Sort = key
	default:
		return f, core.BadRequest("INVALID_QUERY", "field", "sort")
	}
	if f.Q, err = searchText(c.Query("q")); err != nil {
		return f, err
	}
	// cf=<fieldId>:<value>, repeatable; the value may hold colons itself. Whether it fits
	// the field's type is the list's to say, which reads the types.
	// At most customfield.MaxFilters of them: a list's cost grows with its terms.
	cfs := c.Context().QueryArgs().PeekMulti("cf")
	if len(cfs) > customfield.MaxFilters {
		max := strconv.Itoa(customfield.MaxFilters)
		e := core.BadRequest("TOO_MANY_FILTERS", "field", "cf", "max", max)
		e.Details = map[string]string{"field": "cf", "max": max}
		return f, e
	}
	for _, raw := range cfs {
		id, value, ok := strings.Cut(string(raw), ":")
		fieldID, err := uuid.Parse(id)
		if !ok || err != nil || len(id) != 36 || !utf8.ValidString(value) || strings.ContainsRune(value, 0) {
			return f, core.BadRequest("INVALID_QUERY", "field", "cf")
		}
		f.CustomFields = append(f.CustomFields, customfield.Filter{FieldID: fieldID, Value: value})
	}
	return f, nil
}

// issueEnum checks an enum member; an unknown value is BAD_REQUEST naming the values.
func issueEnum(field, v string, values []string) (string, error) {
	if !issue.Valid(values, v) {
		return "", core.BadRequest("INVALID_ENUM", "field", field, "values", strings.Join(values, ", "))
	}
	return v, nil
}

func issueFlag(b *bool) bool { return b != nil && *b }

// issueText checks a present text member: not blank (when notBlank), at most max
// characters. (DecodeJSON already refused NUL characters.)
func issueText(f *core.Fields, field string, v *string, notBlank bool, max int) {
	if v != nil {
		f.Text(field, *v, notBlank, max)
	}
}

// issueStoryPoints checks a present storyPoints: 0–1000.
func issueStoryPoints(f *core.Fields, n *int) {
	if n != nil && (*n < 0 || *n > issue.MaxStoryPoints) {
		f.Add("storyPoints", "RANGE", "field.RANGE", "min", "0", "max", strconv.Itoa(issue.MaxStoryPoints))
	}
}

// issueDate parses a present plain date (YYYY-MM-DD, year 1 to 9999: Postgres has no
// year 0).
func issueDate(f *core.Fields, field string, s *string) *time.Time {
	if s == nil {
		return nil
	}
	d, err := time.Parse(time.DateOnly, *s)
	if err != nil || d.Year() < 1 {
		f.Add(field, "DATE", "field.DATE")
		return nil
	}
	return &d
}
