package work

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/issue"
)

// createIssueRequest is POST /projects/{key}/issues. Ids arrive as strings so a
// malformed one is named in the 400.
type createIssueRequest struct {
	// Members only a reply carries (core.CheckMembers).
	_           struct{} `readonly:"key,projectId,projectKey,reporterId,reporterName,assigneeName,statusName,statusCategory,sprintName,labels,fixVersions,affectsVersions,customFields,refs,slaStartTime"`
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
func parseCreateIssue(body core.Body) (issue.NewIssue, error) {
	var r createIssueRequest
	if err := body.Decode(&r); err != nil {
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
	// Members only a reply carries (core.CheckMembers).
	_                 struct{}  `readonly:"key,projectId,projectKey,reporterId,reporterName,assigneeName,statusName,statusCategory,sprintName,labels,fixVersions,affectsVersions,customFields,refs,slaStartTime"`
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
func parsePatchIssue(body core.Body) (issue.Patch, error) {
	var r patchIssueRequest
	if err := body.Decode(&r); err != nil {
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
	args := c.Context().QueryArgs()
	f, err := issue.ParseFilter(issue.FilterQuery{
		Get: func(name string) string { return c.Query(name) },
		All: func(name string) []string {
			var out []string
			for _, v := range args.PeekMulti(name) {
				out = append(out, string(v))
			}
			return out
		},
	}, me)
	if err != nil {
		return f, filterProblem(err)
	}
	return f, nil
}

// filterProblem is the 400 of a list parameter issue.ParseFilter refuses.
func filterProblem(err error) error {
	var fe *issue.FilterError
	if !errors.As(err, &fe) {
		return err
	}
	switch fe.Reason {
	case "INVALID_ENUM":
		return core.BadRequest("INVALID_ENUM", "field", fe.Field, "values", fe.Values)
	case "INVALID_UUID":
		return core.BadRequest("INVALID_UUID", "field", fe.Field)
	case "SEARCH_TOO_LONG":
		return searchTooLong()
	case "TOO_MANY_FILTERS":
		e := core.BadRequest("TOO_MANY_FILTERS", "field", fe.Field, "max", fe.Max)
		e.Details = map[string]string{"field": fe.Field, "max": fe.Max}
		return e
	}
	return core.BadRequest("INVALID_QUERY", "field", fe.Field)
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
