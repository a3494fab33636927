package issue

import (
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/taskweave/taskweave/domain/customfield"
)

// Sort orders of the list.
const (
	SortCreated = "createdAt"
	SortUpdated = "updatedAt"
)

// Filter narrows the list; every set member is one more AND condition.
type Filter struct {
	AssigneeMe       *uuid.UUID
	AssigneeID       *uuid.UUID
	Overdue          bool
	LabelID          *uuid.UUID
	FixVersionID     *uuid.UUID
	AffectsVersionID *uuid.UUID
	StatusID         *uuid.UUID
	SprintID         *uuid.UUID
	ParentID         *uuid.UUID
	Type             string
	Priority         string
	Backlog          bool
	// Q is a full-text search (newSearch) over key, title, description and comments;
	// without a Sort the list is in rank order.
	Q string
	// Lang is the reader's language (domain/locale), which picks Q's stemming.
	Lang string
	// Sort is SortCreated (key number ascending, the default) or SortUpdated (newest
	// change first); without an explicit sort, Overdue orders by due date ascending.
	Sort string
	// CustomFields are the cf filters, each one more condition; a field of no field of
	// the project is ignored.
	CustomFields []customfield.Filter
	// FieldTypes, when its statement ran, holds the project's fields as the caller's
	// access statement read them: the cf filters are resolved against them rather
	// than read in a query of their own, and the list statement does not carry them.
	FieldTypes *FieldTypesRead
	// After, in a cursor walk, is the last issue handed out: the page is the issues
	// after it in the order, found by a keyset predicate (list_cursor.go), not an offset.
	After *ListKey
}

// params collects positional arguments; the SQL text then depends only on which
// filters are set (and the page size), so each shape is prepared once per connection
// and its plan reused. The size is written as a literal; the offset is a parameter
// behind a sub-select (OFFSET (SELECT $n)): as a bare parameter it is a known constant
// in each custom plan, custom plans then look cheaper than the generic one and Postgres
// plans this many-join statement anew on every execution; behind the sub-select every
// plan guesses the same, and after five executions the connection keeps the generic
// plan. As a literal, each page would be a statement of its own.
type params []any

func (ps *params) add(v any) string {
	*ps = append(*ps, v)
	return "$" + strconv.Itoa(len(*ps))
}

// where renders f's conditions on issues aliased i (statuses s); today is the date
// overdue compares with.
func (f Filter) where(ps *params, today time.Time) string {
	var c []string
	eq := func(column string, v *uuid.UUID) {
		if v != nil {
			c = append(c, column+" = "+ps.add(*v))
		}
	}
	eq("i.assignee_id", f.AssigneeMe)
	eq("i.assignee_id", f.AssigneeID)
	eq("i.status_id", f.StatusID)
	eq("i.sprint_id", f.SprintID)
	eq("i.parent_id", f.ParentID)
	if f.Overdue {
		c = append(c, "i.due_date < "+ps.add(today.Format(time.DateOnly))+"::date", "s.category <> 'DONE'")
	}
	if f.LabelID != nil {
		c = append(c, "EXISTS (SELECT 1 FROM issue_labels AS il WHERE il.issue_id = i.id AND il.label_id = "+ps.add(*f.LabelID)+")")
	}
	for _, v := range []struct {
		id   *uuid.UUID
		kind string
	}{{f.FixVersionID, VersionFix}, {f.AffectsVersionID, VersionAffects}} {
		if v.id != nil {
			c = append(c, "EXISTS (SELECT 1 FROM issue_versions AS iv WHERE iv.issue_id = i.id AND iv.version_id = "+ps.add(*v.id)+
				" AND iv.type = '"+v.kind+"')")
		}
	}
	if f.Type != "" {
		c = append(c, "i.type = "+ps.add(f.Type))
	}
	if f.Priority != "" {
		c = append(c, "i.priority = "+ps.add(f.Priority))
	}
	if f.Backlog {
		c = append(c, "i.sprint_id IS NULL")
	}
	if len(c) == 0 {
		return ""
	}
	return " AND " + strings.Join(c, " AND ")
}

// order is the list order on the columns of alias t: key number, last change first, or
// due date for overdue.
func (f Filter) order(t string) string { return f.orderBy(t, false) }

// reverseOrder is order read backwards (the orders are total: each ends with the
// unique key number).
func (f Filter) reverseOrder(t string) string { return f.orderBy(t, true) }

func (f Filter) orderBy(t string, reverse bool) string {
	asc, desc := " ASC", " DESC"
	if reverse {
		asc, desc = desc, asc
	}
	switch {
	case f.Sort == SortUpdated:
		return t + ".updated_at" + desc + ", " + t + ".number" + desc
	case f.Overdue && f.Sort == "":
		return t + ".due_date" + asc + ", " + t + ".number" + asc
	}
	return t + ".number" + asc
}

// keyColumns are the columns of alias t the order reads: only those are selected with
// the keys, so the key scan reads the order's index alone.
func (f Filter) keyColumns(t string) string {
	switch {
	case f.Sort == SortUpdated:
		return t + ".number, " + t + ".updated_at"
	case f.Overdue && f.Sort == "":
		return t + ".number, " + t + ".due_date"
	}
	return t + ".number"
}
