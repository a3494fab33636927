package issue

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/taskweave/taskweave/domain/customfield"
)

// FilterParams names the issue list's query parameters (GET /projects/{key}/issues)
// ParseFilter reads, in the order of the endpoint's parameter list. A scheduled
// automation rule's filter takes the same names (domain/automation).
var FilterParams = []string{"assigneeMe", "overdue", "backlog", "labelId", "fixVersionId", "affectsVersionId",
	"statusId", "assigneeId", "sprintId", "parentId", "type", "priority", "sort", "q", "cf"}

// FilterQuery is where ParseFilter reads parameters: Get is a parameter's value ("" when
// absent), All every value of a repeatable one (cf).
type FilterQuery struct {
	Get func(name string) string
	All func(name string) []string
}

// FilterError is a list parameter ParseFilter refuses: Reason is the problem reason
// (INVALID_QUERY, INVALID_UUID, INVALID_ENUM, TOO_MANY_FILTERS), Field the parameter,
// Values the accepted values of an enum, Max the bound of a count.
type FilterError struct {
	Reason, Field, Values, Max string
}

func (e *FilterError) Error() string { return "issue list: " + e.Reason + " " + e.Field }

// ParseFilter reads the issue list's filter parameters; me is the caller, whom
// assigneeMe=true names. Every filter is one more AND condition; the first malformed
// parameter, in FilterParams order, is the *FilterError.
func ParseFilter(q FilterQuery, me uuid.UUID) (Filter, error) {
	var f Filter
	flag := func(name string) (bool, error) {
		switch v := q.Get(name); v {
		case "", "false":
			return false, nil
		case "true":
			return true, nil
		default:
			return false, &FilterError{Reason: "INVALID_QUERY", Field: name}
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
		v := q.Get(p.name)
		if v == "" {
			continue
		}
		id, err := uuid.Parse(v)
		if len(v) != 36 || err != nil {
			return f, &FilterError{Reason: "INVALID_UUID", Field: p.name}
		}
		*p.dst = &id
	}
	for _, e := range []struct {
		name   string
		dst    *string
		values []string
	}{{"type", &f.Type, Types}, {"priority", &f.Priority, Priorities}} {
		if v := q.Get(e.name); v != "" {
			if !Valid(e.values, v) {
				return f, &FilterError{Reason: "INVALID_ENUM", Field: e.name, Values: strings.Join(e.values, ", ")}
			}
			*e.dst = v
		}
	}
	// Spring-style "sort=updatedAt,desc" is accepted; the direction is fixed per key.
	switch key, _, _ := strings.Cut(q.Get("sort"), ","); key {
	case "":
	case SortCreated, SortUpdated:
		f.Sort = key
	default:
		return f, &FilterError{Reason: "INVALID_QUERY", Field: "sort"}
	}
	if f.Q, err = SearchText(q.Get("q")); err != nil {
		return f, err
	}
	// cf=<fieldId>:<value>, repeatable; the value may hold colons itself. Whether it fits
	// the field's type is the list's to say, which reads the types.
	// At most customfield.MaxFilters of them: a list's cost grows with its terms.
	var cfs []string
	if q.All != nil {
		cfs = q.All("cf")
	}
	if len(cfs) > customfield.MaxFilters {
		return f, &FilterError{Reason: "TOO_MANY_FILTERS", Field: "cf", Max: strconv.Itoa(customfield.MaxFilters)}
	}
	for _, raw := range cfs {
		id, value, ok := strings.Cut(raw, ":")
		fieldID, err := uuid.Parse(id)
		if !ok || err != nil || len(id) != 36 || !utf8.ValidString(value) || strings.ContainsRune(value, 0) {
			return f, &FilterError{Reason: "INVALID_QUERY", Field: "cf"}
		}
		f.CustomFields = append(f.CustomFields, customfield.Filter{FieldID: fieldID, Value: value})
	}
	return f, nil
}

// SearchText checks a search text (q): valid UTF-8 without NUL (INVALID_QUERY), at most
// MaxQueryLength characters and MaxQueryTerms words (SEARCH_TOO_LONG); surrounding
// spaces are dropped (docs/api-conventions.md#search).
func SearchText(raw string) (string, error) {
	q := strings.TrimSpace(raw)
	if !utf8.ValidString(q) || strings.ContainsRune(q, 0) {
		return "", &FilterError{Reason: "INVALID_QUERY", Field: "q"}
	}
	if utf8.RuneCountInString(q) > MaxQueryLength || QueryTerms(q) > MaxQueryTerms {
		return "", &FilterError{Reason: "SEARCH_TOO_LONG", Field: "q"}
	}
	return q, nil
}
