package issue

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/taskweave/taskweave/domain/customfield"
	"github.com/taskweave/taskweave/domain/project"
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
	// Q is a case-insensitive substring of title or description.
	Q string
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
}

// FieldTypesRead reads the project's custom fields as a column of the project's row,
// packed as the list statement would carry them (packedFieldsSQL): GET /issues adds it
// to its access statement (project.LoadWithUser). The cf filters' types then cost no
// round trip, and the list statement leaves them out: as a column of its own, the
// definitions went out with every row of the page, half its bytes (0.05 ms of
// Postgres per page). They are read a moment before the rows: a field created in
// between is not listed (as a field created after the list), one deleted in between
// is listed without a value, either as a list read a moment earlier or later would.
type FieldTypesRead struct {
	Extra project.Extra
	raw   *string
}

// NewFieldTypesRead prepares the read.
func NewFieldTypesRead() *FieldTypesRead {
	r := &FieldTypesRead{}
	r.Extra.Columns = ", " + packedFieldsSQL("p.id")
	r.Extra.Dest = []any{&r.raw}
	return r
}

// read says whether the access statement read the fields.
func (r *FieldTypesRead) read() bool { return r != nil && r.Extra.Scanned }

// fields decodes what r read; not loaded when the access statement did not run it.
func (r *FieldTypesRead) fields() (listFields, error) {
	var lf listFields
	if !r.read() {
		return lf, nil
	}
	if err := lf.decode(r.raw); err != nil {
		return lf, fmt.Errorf("list issues: %w", err)
	}
	return lf, nil
}

// conditions resolves f's cf filters (against lf when it is loaded from FieldTypes,
// else in a query).
func (s *Service) conditions(ctx context.Context, p Project, f Filter, lf *listFields) ([]customfield.Condition, error) {
	if len(f.CustomFields) == 0 {
		return nil, nil
	}
	if !lf.loaded {
		return customfield.Resolve(ctx, s.db, p.ID, f.CustomFields)
	}
	return customfield.ResolveWith(lf.defs, f.CustomFields)
}

// ResolveFieldTypes is customfield.Resolve against the fields r read.
func ResolveFieldTypes(r *FieldTypesRead, filters []customfield.Filter) ([]customfield.Condition, error) {
	lf, err := r.fields()
	if err != nil {
		return nil, err
	}
	return customfield.ResolveWith(lf.defs, filters)
}

// likeEscaper makes user text literal inside an ILIKE pattern.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// params collects positional arguments; the SQL text then depends only on which
// filters are set (and the page size), so each shape is prepared once per connection
// and its plan reused. The size is written as a literal; the offset is a parameter
// behind a sub-select (OFFSET (SELECT $n)): as a bare parameter it is a known constant
// in each custom plan, custom plans then look cheaper than the generic one and Postgres
// plans this many-join statement anew on every execution (about a millisecond); behind
// the sub-select every plan guesses the same, and after five executions the connection
// keeps the generic plan. As a literal it made each page a statement of its own.
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
	if f.Q != "" {
		pattern := ps.add("%" + likeEscaper.Replace(f.Q) + "%")
		c = append(c, "(i.title ILIKE "+pattern+" OR i.description ILIKE "+pattern+")")
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

// listColumns are the columns of one list row, in scan order (see scanListRow).
const listColumns = `i.id, i.project_id, i.number, i.key, i.title, i.description, i.type, i.priority, i.story_points,
	i.status_id, i.assignee_id, i.reporter_id, i.parent_id, i.due_date, i.sprint_id, i.sla_start_time, i.created_at,
	i.updated_at, s.name, s.category, a.display_name, r.display_name, sp.name, k.total, (
	SELECT string_agg(l.id::text || octet_length(l.name) || ':' || l.name || octet_length(l.color) || ':' || l.color, '')
	FROM issue_labels AS il JOIN labels AS l ON l.id = il.label_id
	WHERE il.issue_id = i.id
), i.custom_packed`

// List returns one page of p's issues matching f, with labels and custom field values,
// and the total, in one query whatever the page holds (unless f.FieldTypes holds the
// project's fields, cf filters first read their fields' types).
//
// The page's keys are found first, on issues alone (an index-only scan of the order's
// index unfiltered; filtered, the matches' numbers gathered in order into an array and
// sliced), and only the page's rows are then joined to their status, people, sprint
// and labels: a deep page costs the skipped index entries or array elements, not the
// joins of every skipped row. The total is the project's kept count unfiltered, else
// the length of the matches' array. The custom fields and their options come from
// f.FieldTypes, else once per statement (an InitPlan, decoded from the first row); the
// labels per row of the page (a sub-select in the row: as a LATERAL join, the planner
// wrapped it in a per-issue cache that never hits, 2–5 % of the statement); the values
// with the row itself (custom_packed, kept by the triggers of migrations 0027 and
// 0028). It runs on pgx directly: this is the busiest read of the API, and typed
// binary scanning costs a fraction of reflection over database/sql.
func (s *Service) List(ctx context.Context, p Project, f Filter, offset, limit int) ([]*View, int, error) {
	fields, err := f.FieldTypes.fields()
	if err != nil {
		return nil, 0, err
	}
	conds, err := s.conditions(ctx, p, f, &fields)
	if err != nil {
		return nil, 0, err
	}
	query, count, args := listStatement(p, f, conds, s.now().UTC(), offset, limit)
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("list issues: %w", err)
	}
	// One allocation for the page's views rather than one per row.
	page := make([]View, 0, min(limit, 64))
	n := 0
	var sc listScan
	for rows.Next() {
		page = append(page, View{ProjectKey: p.Key})
		if err := scanListRow(rows, &page[len(page)-1], &n, &fields, &sc); err != nil {
			rows.Close()
			return nil, 0, fmt.Errorf("list issues: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("list issues: %w", err)
	}
	views := make([]*View, len(page))
	for i := range page {
		views[i] = &page[i]
	}
	if len(views) == 0 && offset > 0 {
		// Past the last page there is no row to carry the total.
		if err := s.pool.QueryRow(ctx, count, args[:len(args)-1]...).Scan(&n); err != nil {
			return nil, 0, fmt.Errorf("count issues: %w", err)
		}
	}
	return views, n, nil
}

// listStatement is the statement of one list page, the statement of the total alone
// (for a page past the end, which has no row to carry it) and their arguments: the
// total's are all but the last, the offset. The SQL
// text depends only on which filters are set and on the page, so each shape is
// prepared once per connection.
func listStatement(p Project, f Filter, conds []customfield.Condition, today time.Time, offset, limit int) (query, count string, args []any) {
	var ps params
	project := ps.add([16]byte(p.ID)) // [16]byte: see nullableID
	where := f.where(&ps, today)
	// terms: cf equalities alone, in key order, are answered by the narrow copy of the
	// terms (issue_filter_terms, migration 0029); any other filtered list reads the
	// issue rows' own.
	terms, narrow := "", false
	if where == "" && f.Sort != SortUpdated {
		terms, narrow = customfield.Terms(conds, "t", ps.add)
	}
	if !narrow {
		if cf := customfield.SQL(conds, "i", ps.add); cf != "" {
			where += " AND " + cf
		}
	}
	join := ""
	if f.Overdue {
		join = " JOIN workflow_statuses AS s ON s.id = i.status_id"
	}
	total := "(SELECT coalesce(max(issues), 0) FROM issue_counts WHERE project_id = " + project + ")"
	count = "SELECT " + total
	// matches is the FROM and WHERE of a filtered list's matches, as alias i or t.
	matches := "issues AS i" + join + "\n\t\tWHERE i.project_id = " + project + where
	if narrow {
		matches = "issue_filter_terms AS t\n\t\tWHERE t.project_id = " + project + " AND " + terms
	}
	if where != "" || narrow {
		count = "SELECT count(*) FROM " + matches
	}
	// keys is the page's keys (k): the rows are joined on rowJoin and sorted by rowOrder.
	// Each row is found in a LATERAL sub-select (LIMIT 1 keeps the planner from pulling
	// it up into a plain join), so always by one index probe per key: as a join, a
	// table of some thousand narrow rows looked cheaper to read whole and hash than to
	// probe fifty times, and the page cost a scan of every issue (a quarter of the
	// speed).
	var keys string
	rowJoin, rowOrder := "i.id = k.id", f.order("k")
	switch {
	case where != "" || narrow:
		// Every match is read for the total anyway, so the matches' numbers are
		// gathered in the list's order into one array, whose length is the total, and
		// only the page's slice of it is joined back to issues (by the project's
		// number index). A window count over the sorted matches cost as much again
		// as finding them; and with no LIMIT on the matches, the planner never walks
		// the order's index testing every issue in the hope of stopping early. The
		// page's rows are found by number and kept in the slice's order. The offset
		// is clamped to what an array subscript holds: past the end either way.
		off := ps.add(min(offset, math.MaxInt32-limit-1))
		alias := "i"
		if narrow {
			alias = "t" // key order: the number is all it sorts by
		}
		keys = `SELECT u.number, u.ord, cardinality(m.nums) AS total
	FROM (SELECT array_agg(` + alias + `.number ORDER BY ` + f.order(alias) + `) AS nums
		FROM ` + matches + `) AS m
	CROSS JOIN LATERAL unnest(m.nums[(SELECT ` + off + `::int) + 1 : (SELECT ` + off + `::int) + ` + strconv.Itoa(limit) + `])
		WITH ORDINALITY AS u (number, ord)`
		rowJoin, rowOrder = "i.project_id = "+project+" AND i.number = k.number", "k.ord"
	default:
		// Unfiltered, the total is known before the scan: a page in the second half is
		// read from the far end of the order's index, skipping the entries after it
		// rather than all before it, so the last page costs what the first does. Only
		// one branch runs (each is gated by a one-time filter on n); both read the
		// same snapshot as the total. The size stays a literal LIMIT of the scan (the
		// partial last page is cut by the outer LIMIT): with a computed one the planner
		// guesses a tenth of the project's issues and joins the page by hash joins.
		//
		// In key order, a project whose numbers have no gap (nothing deleted: as many
		// issues as the highest number, and numbers are unique and positive) holds
		// exactly the numbers 1 to total, so the page starting at skip is the issues
		// numbered above skip: one range of the index, nothing skipped at all.
		size := strconv.Itoa(limit)
		dense, gapped, denseColumn := "", "", ""
		if f.Sort != SortUpdated {
			denseColumn = `, total = (SELECT coalesce(max(number), 0) FROM issues WHERE project_id = ` + project + `) AS dense`
			dense = `
	(SELECT i.id, ` + f.keyColumns("i") + `, (SELECT total FROM n) AS total
	FROM issues AS i
	WHERE i.project_id = ` + project + ` AND i.number > (SELECT skip FROM n) AND (SELECT dense FROM n)
	ORDER BY ` + f.order("i") + `
	LIMIT ` + size + `)
	UNION ALL`
			gapped = "NOT dense AND "
		}
		keys = `WITH n AS (SELECT *` + denseColumn + `
		FROM (SELECT ` + total + ` AS total, (SELECT ` + ps.add(offset) + `::bigint) AS skip) AS t)` + dense + `
	(SELECT i.id, ` + f.keyColumns("i") + `, (SELECT total FROM n) AS total
	FROM issues AS i
	WHERE i.project_id = ` + project + ` AND (SELECT ` + gapped + `skip * 2 < total FROM n)
	ORDER BY ` + f.order("i") + `
	LIMIT ` + size + ` OFFSET (SELECT skip FROM n))
	UNION ALL
	(SELECT * FROM (
		SELECT i.id, ` + f.keyColumns("i") + `, (SELECT total FROM n) AS total
		FROM issues AS i
		WHERE i.project_id = ` + project + ` AND (SELECT ` + gapped + `skip * 2 >= total FROM n)
		ORDER BY ` + f.reverseOrder("i") + `
		LIMIT ` + size + ` OFFSET (SELECT greatest(0, total - skip - ` + size + `) FROM n)
	) AS r LIMIT (SELECT greatest(0, least(` + size + `, total - skip)) FROM n))`
	}
	// The field definitions, unless the access statement read them (FieldTypesRead).
	defs := "NULL::text"
	if !f.FieldTypes.read() {
		defs = packedFieldsSQL(project)
	}
	query = `WITH k AS (
	` + keys + `
)
SELECT ` + listColumns + `, ` + defs + ` AS defs
FROM k
CROSS JOIN LATERAL (SELECT * FROM issues AS i WHERE ` + rowJoin + ` LIMIT 1) AS i
JOIN workflow_statuses AS s ON s.id = i.status_id
JOIN users AS r ON r.id = i.reporter_id
LEFT JOIN users AS a ON a.id = i.assignee_id
LEFT JOIN sprints AS sp ON sp.id = i.sprint_id
ORDER BY ` + rowOrder
	return query, count, ps
}

// packedFieldsSQL is a scalar expression of the project's custom fields with their
// options as packed text (listFields.decode reads it); project is the SQL of its id.
func packedFieldsSQL(project string) string {
	return `(
	SELECT string_agg('F' || d.id::text || octet_length(d.type) || ':' || d.type || octet_length(d.name) || ':' || d.name
		|| CASE WHEN d.required THEN '1' ELSE '0' END || coalesce((
		SELECT string_agg('O' || o.id::text || octet_length(o.label) || ':' || o.label, '')
		FROM custom_field_options AS o WHERE o.field_id = d.id), ''), '' ORDER BY d.sort_order, d.created_at, d.id)
	FROM custom_fields AS d WHERE d.project_id = ` + project + `
)`
}

// listFields are the project's custom fields as packedFieldsSQL packs them, read by the
// access statement (FieldTypesRead) or else carried by the list statement and decoded
// from its first row.
type listFields struct {
	loaded bool
	defs   []customfield.Definition
	index  map[uuid.UUID]int
	// labels are the DROPDOWN options' labels by option id: the rows' packed values
	// name options by id only (migration 0027).
	labels map[uuid.UUID]*string
}

// decode reads the fields' packed text (null: none), in the fields' order: per field
// F, its id, type and name (each string as its byte length, a colon and the bytes)
// and 1 or 0 for required, then per option of it O, the option's id and label. Packed
// like the values rather than as JSON: decoding JSON by reflection was a tenth of the
// list's Go time.
func (lf *listFields) decode(raw *string) error {
	lf.loaded = true
	if raw == nil {
		return nil
	}
	p := packed{*raw}
	lf.index = map[uuid.UUID]int{}
	lf.labels = map[uuid.UUID]*string{}
	for p.s != "" {
		tag, err := p.byte()
		if err != nil {
			return err
		}
		id, err := p.id()
		if err != nil {
			return err
		}
		switch tag {
		case 'F':
			d := customfield.Definition{ID: id}
			if d.Type, err = p.str(); err != nil {
				return err
			}
			if d.Name, err = p.str(); err != nil {
				return err
			}
			req, err := p.byte()
			if err != nil {
				return err
			}
			d.Required = req == '1'
			lf.index[id] = len(lf.defs)
			lf.defs = append(lf.defs, d)
		case 'O':
			label, err := p.str()
			if err != nil {
				return err
			}
			lf.labels[id] = &label
		default:
			return errPacked
		}
	}
	return nil
}

// listScan holds scanListRow's destinations: one per page rather than one allocation
// of each per row (every destination handed to Scan escapes to the heap).
type listScan struct {
	assignee, parent, sprint pgtype.UUID
	labels, values           pgtype.Text
	rawDefs                  *string
}

// scanListRow reads one list row. Ids are scanned as raw 16-byte values: through
// uuid.UUID's sql.Scanner pgx would format and parse every id as text. A row's labels
// and custom field values each come as one packed text (see listStatement), parsed by
// parseLabels and parseValues: pgx decoded the ten arrays they were before through an
// array plan each, the most expensive part of the list.
func scanListRow(rows pgx.Rows, v *View, total *int, lf *listFields, sc *listScan) error {
	// The fields' JSON is the same on every row: only the first's is read.
	var defsDst any = &sc.rawDefs
	if lf.loaded {
		defsDst = nil
	}
	err := rows.Scan((*[16]byte)(&v.ID), (*[16]byte)(&v.ProjectID), &v.Number, &v.Key, &v.Title, &v.Description, &v.Type,
		&v.Priority, &v.StoryPoints, (*[16]byte)(&v.StatusID), &sc.assignee, (*[16]byte)(&v.ReporterID), &sc.parent,
		&v.DueDate, &sc.sprint, &v.SLAStartTime, &v.CreatedAt, &v.UpdatedAt, &v.StatusName, &v.StatusCategory,
		&v.AssigneeName, &v.ReporterName, &v.SprintName, total, &sc.labels, &sc.values, defsDst)
	if err != nil {
		return err
	}
	if !lf.loaded {
		if err := lf.decode(sc.rawDefs); err != nil {
			return err
		}
	}
	v.AssigneeID, v.ParentID, v.SprintID = optionalID(sc.assignee), optionalID(sc.parent), optionalID(sc.sprint)
	if v.Labels, err = parseLabels(sc.labels.String); err != nil {
		return err
	}
	slices.SortFunc(v.Labels, func(a, b LabelRef) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return bytes.Compare(a.ID[:], b.ID[:])
	})
	v.CustomFields = make([]customfield.FieldValue, len(lf.defs))
	for i := range lf.defs {
		v.CustomFields[i].Field = &lf.defs[i]
	}
	err = parseValues(sc.values.String, func(field uuid.UUID) *customfield.Value {
		i, ok := lf.index[field]
		if !ok {
			return nil // a field created after the statement read the fields
		}
		return &v.CustomFields[i].Value
	})
	for i := range v.CustomFields {
		if cf := &v.CustomFields[i]; cf.OptionID != nil && cf.OptionLabel == nil {
			// Shared by every row naming the option; nothing writes through it.
			cf.OptionLabel = lf.labels[*cf.OptionID]
		}
	}
	return err
}

// errPacked is a packed labels or values text the parser does not understand.
var errPacked = errors.New("malformed packed list column")

// packed reads the list's packed texts: ids as 36 characters of text, strings as their
// byte length, a colon and the bytes. Strings are slices of the row's text, not copies.
type packed struct{ s string }

func (p *packed) id() (uuid.UUID, error) {
	if len(p.s) < 36 {
		return uuid.UUID{}, errPacked
	}
	id, err := uuid.Parse(p.s[:36])
	p.s = p.s[36:]
	return id, err
}

func (p *packed) byte() (byte, error) {
	if p.s == "" {
		return 0, errPacked
	}
	c := p.s[0]
	p.s = p.s[1:]
	return c, nil
}

// upto returns the text before the next c and moves past c.
func (p *packed) upto(c byte) (string, error) {
	i := strings.IndexByte(p.s, c)
	if i < 0 {
		return "", errPacked
	}
	v := p.s[:i]
	p.s = p.s[i+1:]
	return v, nil
}

func (p *packed) str() (string, error) {
	n, err := p.upto(':')
	if err != nil {
		return "", err
	}
	size, err := strconv.Atoi(n)
	if err != nil || size < 0 || size > len(p.s) {
		return "", errPacked
	}
	v := p.s[:size]
	p.s = p.s[size:]
	return v, nil
}

// parseLabels reads a row's labels: per label its id, name and color.
func parseLabels(s string) ([]LabelRef, error) {
	p := packed{s}
	out := make([]LabelRef, 0, strings.Count(s, "-")/4)
	for p.s != "" {
		var l LabelRef
		var err error
		if l.ID, err = p.id(); err != nil {
			return nil, err
		}
		if l.Name, err = p.str(); err != nil {
			return nil, err
		}
		if l.Color, err = p.str(); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// packedEpoch is the day the packed dates count from.
var packedEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// parseValues reads a row's custom field values into the Value at(field) returns (nil:
// skip it). Per value: the field id, then by type T and the text, N, the number and
// ';', D, the days since 2000-01-01 and ';', B and 1 or 0, O, the option id and its
// label, or '-' for none: issues.custom_packed always writes '-', and scanListRow
// takes the label from the definitions.
func parseValues(s string, at func(uuid.UUID) *customfield.Value) error {
	p := packed{s}
	for p.s != "" {
		field, err := p.id()
		if err != nil {
			return err
		}
		var v customfield.Value
		tag, err := p.byte()
		if err != nil {
			return err
		}
		switch tag {
		case 'T':
			t, err := p.str()
			if err != nil {
				return err
			}
			v.Text = &t
		case 'N':
			n, err := p.upto(';')
			if err != nil {
				return err
			}
			v.Number = &n
		case 'D':
			n, err := p.upto(';')
			if err != nil {
				return err
			}
			days, err := strconv.Atoi(n)
			if err != nil {
				return errPacked
			}
			d := packedEpoch.AddDate(0, 0, days)
			v.Date = &d
		case 'B':
			c, err := p.byte()
			if err != nil {
				return err
			}
			b := c == '1'
			v.Bool = &b
		case 'O':
			option, err := p.id()
			if err != nil {
				return err
			}
			v.OptionID = &option
			if strings.HasPrefix(p.s, "-") {
				p.s = p.s[1:]
			} else {
				label, err := p.str()
				if err != nil {
					return err
				}
				v.OptionLabel = &label
			}
		default:
			return errPacked
		}
		if dst := at(field); dst != nil {
			v.Set = true
			*dst = v
		}
	}
	return nil
}

func optionalID(u pgtype.UUID) *uuid.UUID {
	if !u.Valid {
		return nil
	}
	id := uuid.UUID(u.Bytes)
	return &id
}
