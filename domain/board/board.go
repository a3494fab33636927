// Package board reads a project's sprint board and backlog: the active sprint's issues
// in one column per workflow status, and the PLANNED sprints with the unplanned issues.
// Both are reads in a constant number of queries whatever the issue count.
package board

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/store"
)

// Status is a workflow status as a board column shows it.
type Status struct {
	ID       uuid.UUID
	Name     string
	Category string
	Color    string
}

// Column is one status with the active sprint's issues in it, by key number.
type Column struct {
	Status Status
	Issues []*issue.View
}

// Summary is the active sprint as the board heads it.
type Summary struct {
	ID        uuid.UUID
	Name      string
	Goal      *string
	StartDate *time.Time
	EndDate   *time.Time
	// DaysRemaining is max(0, whole days from today to EndDate); nil without EndDate.
	DaysRemaining *int
	// TotalPoints is the plannedPoints snapshot taken at start.
	TotalPoints *int
	// CompletedPoints is live: the points of the sprint's issues now in a DONE status.
	CompletedPoints int
}

// Board is the active sprint and its columns in workflow position order.
type Board struct {
	Sprint  Summary
	Columns []Column
}

// ErrNoActiveSprint means the project has no ACTIVE sprint (the board answers 204).
var ErrNoActiveSprint = errors.New("board: no active sprint")

// Head is the board without its issues: the active sprint, the columns' statuses and
// a Stamp that changes whenever anything the full board shows changes, so a reply built
// from an earlier Head with the same Stamp can be served again without reading the
// issues (see api/work/board_cache.go).
type Head struct {
	Sprint   Summary
	Statuses []Status
	// Stamp digests the summary, the statuses, today's date, a fingerprint of the
	// sprint's issue row versions (count and XOR of a hash of each row's ctid and xmin:
	// any insert, update or delete of one of them, or an issue joining or leaving the
	// sprint, makes a different set) and board_names_revision (label and display-name
	// changes, which do not touch issue rows). It is computed from committed state, not
	// from process memory, so every replica agrees on it.
	Stamp [sha256.Size]byte
}

// headColumns and headJoins read the head of the board of the project aliased p, and
// whether the ALL audit level is on, in the order headScan scans them: LoadHead reads
// them alone, and HeadRead adds them to the access statement of GET /board.
const (
	headColumns = `sp.id, sp.name, sp.goal, sp.start_date, sp.end_date, sp.planned_points,
	coalesce((SELECT enabled FROM audit_config WHERE level = 'ALL'), false),
	st.ids, st.names, st.categories, st.colors,
	coalesce(fp.n, 0), coalesce(fp.x, 0), (SELECT rev FROM board_names_revision)`
	headJoins = `
LEFT JOIN sprints AS sp ON sp.project_id = p.id AND sp.status = 'ACTIVE'
LEFT JOIN LATERAL (
	SELECT array_agg(ws.id ORDER BY ws.position, ws.id) AS ids, array_agg(ws.name ORDER BY ws.position, ws.id) AS names,
		array_agg(ws.category ORDER BY ws.position, ws.id) AS categories, array_agg(ws.color ORDER BY ws.position, ws.id) AS colors
	FROM workflow_statuses AS ws WHERE ws.workflow_id = p.workflow_id
) AS st ON sp.id IS NOT NULL
LEFT JOIN LATERAL (
	SELECT count(*) AS n, bit_xor(hashtidextended(i.ctid, i.xmin::text::bigint)) AS x
	FROM issues AS i WHERE i.project_id = p.id AND i.sprint_id = sp.id
) AS fp ON sp.id IS NOT NULL`
)

// headScan holds the values of headColumns as scanned.
type headScan struct {
	sprintID                  pgtype.UUID
	name                      *string
	s                         Summary
	auditAll                  bool
	statusIDs                 [][16]byte
	names, categories, colors []string
	issueCount, issueXOR      int64
	namesRev                  int64
}

// dest is the scan destinations of headColumns, in their order.
func (r *headScan) dest() []any {
	return []any{&r.sprintID, &r.name, &r.s.Goal, &r.s.StartDate, &r.s.EndDate, &r.s.TotalPoints,
		&r.auditAll, &r.statusIDs, &r.names, &r.categories, &r.colors, &r.issueCount, &r.issueXOR, &r.namesRev}
}

// head builds the Head of project p's board from what was scanned (ErrNoActiveSprint
// without an active sprint), and reports whether the ALL audit level is on.
func (r *headScan) head(p issue.Project, today time.Time) (*Head, bool, error) {
	if !r.sprintID.Valid {
		return nil, r.auditAll, ErrNoActiveSprint
	}
	s := r.s
	s.ID, s.Name = r.sprintID.Bytes, *r.name
	if s.EndDate != nil {
		days := max(0, int(s.EndDate.Sub(today).Hours()/24))
		s.DaysRemaining = &days
	}
	h := &Head{Sprint: s, Statuses: make([]Status, len(r.statusIDs))}
	for i, id := range r.statusIDs {
		h.Statuses[i] = Status{ID: id, Name: r.names[i], Category: r.categories[i], Color: r.colors[i]}
	}
	h.Stamp = h.digest(p, today, r.issueCount, r.issueXOR, r.namesRev)
	return h, r.auditAll, nil
}

// LoadHead reads the head of project p's board in one query, and whether the ALL audit
// level is on (so recording BOARD_OPENED costs no extra read). auditAll is reported even
// when the project has no active sprint (ErrNoActiveSprint).
func LoadHead(ctx context.Context, pool *pgxpool.Pool, p issue.Project, today time.Time) (h *Head, auditAll bool, err error) {
	var r headScan
	err = pool.QueryRow(ctx, `SELECT `+headColumns+`
	FROM (SELECT 1) AS one
	LEFT JOIN projects AS p ON p.id = $1`+headJoins, store.UUID(p.ID)).Scan(r.dest()...)
	if err != nil {
		return nil, false, fmt.Errorf("load board sprint: %w", err)
	}
	return r.head(p, today)
}

// HeadRead reads the head of the board in the statement that checks the caller's
// access to the project (project.LoadWithLogin): GET /board adds it there, so a board
// served from the cache, or a poll answered 304, costs that one statement. The head is
// read in the same snapshot as the credential and the roles.
type HeadRead struct {
	Extra project.Extra
	scan  headScan
}

// NewHeadRead prepares the read.
func NewHeadRead() *HeadRead {
	r := &HeadRead{}
	r.Extra.Columns = ",\n\t" + headColumns
	r.Extra.Joins = headJoins
	r.Extra.Dest = r.scan.dest()
	return r
}

// Head is the head the access statement read, or when it did not run it (a caller
// whose access was read without the head), LoadHead's.
func (r *HeadRead) Head(ctx context.Context, pool *pgxpool.Pool, p issue.Project, today time.Time) (*Head, bool, error) {
	if !r.Extra.Scanned {
		return LoadHead(ctx, pool, p, today)
	}
	return r.scan.head(p, today)
}

// digest is the Stamp of h: every value the head shows plus the issue fingerprint.
// Strings are length-prefixed so no two different heads write the same bytes.
func (h *Head) digest(p issue.Project, today time.Time, issueCount, issueXOR, namesRev int64) [sha256.Size]byte {
	var b []byte
	str := func(v string) { b = binary.AppendUvarint(b, uint64(len(v))); b = append(b, v...) }
	num := func(v int64) { b = binary.AppendVarint(b, v) }
	optStr := func(v *string) {
		if v == nil {
			b = append(b, 0)
			return
		}
		b = append(b, 1)
		str(*v)
	}
	optDate := func(v *time.Time) {
		if v == nil {
			b = append(b, 0)
			return
		}
		b = append(b, 1)
		num(v.Unix())
	}
	s := h.Sprint
	b = append(b, p.ID[:]...)
	str(p.Key)
	b = append(b, s.ID[:]...)
	str(s.Name)
	optStr(s.Goal)
	optDate(s.StartDate)
	optDate(s.EndDate)
	if s.TotalPoints == nil {
		b = append(b, 0)
	} else {
		b = append(b, 1)
		num(int64(*s.TotalPoints))
	}
	num(today.Unix())
	for _, st := range h.Statuses {
		b = append(b, st.ID[:]...)
		str(st.Name)
		str(st.Category)
		str(st.Color)
	}
	num(issueCount)
	num(issueXOR)
	num(namesRev)
	return sha256.Sum256(b)
}

// Load reads the whole board under h: the sprint's issues with their labels, in one
// query, sorted into h's columns.
func (h *Head) Load(ctx context.Context, pool *pgxpool.Pool, p issue.Project) (*Board, error) {
	views, err := loadIssues(ctx, pool, p.Key, "i.sprint_id = $2", store.UUID(p.ID), store.UUID(h.Sprint.ID))
	if err != nil {
		return nil, err
	}
	b := &Board{Sprint: h.Sprint, Columns: make([]Column, len(h.Statuses))}
	column := make(map[uuid.UUID]*Column, len(h.Statuses))
	for i, st := range h.Statuses {
		b.Columns[i] = Column{Status: st, Issues: []*issue.View{}}
		column[st.ID] = &b.Columns[i]
	}
	for _, v := range views {
		if v.StatusCategory == "DONE" && v.StoryPoints != nil {
			b.Sprint.CompletedPoints += *v.StoryPoints
		}
		// An issue always has a status of its project's workflow; one that does not
		// (a workflow switched under it) has no column to show in.
		if c := column[v.StatusID]; c != nil {
			c.Issues = append(c.Issues, v)
		}
	}
	return b, nil
}

// PlannedSprint is a PLANNED sprint with its issues and the sum of their points.
type PlannedSprint struct {
	store.Sprint
	Issues      []*issue.View
	TotalPoints int
}

// Backlog is the PLANNED sprints in creation order and the issues in no sprint.
type Backlog struct {
	Sprints []PlannedSprint
	Issues  []*issue.View
}

// LoadBacklog reads the backlog of project p in two queries: the PLANNED sprints, then
// every issue in one of them or in none, with labels.
func LoadBacklog(ctx context.Context, pool *pgxpool.Pool, p issue.Project) (*Backlog, error) {
	rows, err := pool.Query(ctx, `SELECT id, project_id, name, goal, status, start_date, end_date, planned_points,
		completed_points, created_at FROM sprints WHERE project_id = $1 AND status = 'PLANNED' ORDER BY created_at, id`, p.ID)
	if err != nil {
		return nil, fmt.Errorf("load planned sprints: %w", err)
	}
	sprints, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (PlannedSprint, error) {
		var s PlannedSprint
		err := row.Scan(store.UUIDDest(&s.ID), store.UUIDDest(&s.ProjectID), &s.Name, &s.Goal, &s.Status, &s.StartDate, &s.EndDate,
			&s.PlannedPoints, &s.CompletedPoints, &s.CreatedAt)
		s.Issues = []*issue.View{}
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("load planned sprints: %w", err)
	}
	ids := make([]uuid.UUID, len(sprints))
	index := make(map[uuid.UUID]int, len(sprints))
	for i, s := range sprints {
		ids[i], index[s.ID] = s.ID, i
	}
	views, err := loadIssues(ctx, pool, p.Key, "i.sprint_id IS NULL OR i.sprint_id = ANY($2)", store.UUID(p.ID), store.UUIDs(ids))
	if err != nil {
		return nil, err
	}
	out := &Backlog{Sprints: sprints, Issues: []*issue.View{}}
	for _, v := range views {
		if v.SprintID == nil {
			out.Issues = append(out.Issues, v)
			continue
		}
		// A sprint started between the two reads is no longer in the list; its issues
		// are left out with it.
		if i, ok := index[*v.SprintID]; ok {
			out.Sprints[i].Issues = append(out.Sprints[i].Issues, v)
		}
	}
	for i := range out.Sprints {
		out.Sprints[i].TotalPoints = points(out.Sprints[i].Issues)
	}
	return out, nil
}
