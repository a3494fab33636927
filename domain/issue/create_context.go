package issue

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/customfield"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/domain/workflow"
	"github.com/taskweave/taskweave/store"
)

// createContext is what a create reads before it takes the project's key counter, in
// one statement: the default status, the project's custom fields (when the create needs
// them) and what the consumers of Created would otherwise read while the counter is
// held (event.Prefetch: the audit toggle, the automation triggers, whether the project
// has webhooks). ctx carries the prefetched values to Emit.
type createContext struct {
	ctx    context.Context
	status workflow.Status
	fields []customfield.Definition
}

// readCreateContext reads a create's context inside its transaction, for a caller
// whose access statement did not (ContextRead's columns on the project's row);
// withFields reads the custom fields too. A workflow without a TODO status is
// workflow.ErrNoDefaultStatus.
func (s *Service) readCreateContext(ctx context.Context, tx bun.Tx, p Project, withFields bool) (*createContext, error) {
	if p.WorkflowID == nil {
		return nil, workflow.ErrNoDefaultStatus
	}
	r := s.NewContextRead(withFields)
	q := "SELECT " + strings.TrimPrefix(r.Extra.Columns, ", ") + " FROM projects AS p" + r.Extra.Joins + " WHERE p.id = $1"
	err := tx.Tx.QueryRowContext(ctx, q, p.ID).Scan(r.Extra.Dest...)
	switch {
	case store.IsNotFound(err):
		return nil, workflow.ErrNoDefaultStatus
	case err != nil:
		return nil, fmt.Errorf("read create context: %w", err)
	}
	r.Extra.Scanned = true
	return r.context(ctx, p)
}

// ContextRead is a create's context as columns on the project's row: POST /issues
// adds them to its access query (project.LoadWithUser), before the create's
// transaction, one round trip fewer per create; readCreateContext reads them alone. Its Extra holds the columns
// and joins on the projects row (aliased p) and where they are scanned. The values are
// read without locks, as readCreateContext reads them inside the transaction: under
// READ COMMITTED each statement sees what was committed when it started either way.
type ContextRead struct {
	Extra      project.Extra
	withFields bool
	prefetches []event.Prefetch
	statusID   pgtype.UUID
	statusName *string
	category   *string
	fields     *string
	texts      []string
}

// NewContextRead prepares the read of a create's context; withFields reads the custom
// fields too (NewIssue.NeedsFields).
func (s *Service) NewContextRead(withFields bool) *ContextRead {
	r := &ContextRead{withFields: withFields, prefetches: s.bus.Prefetches(EventCreated)}
	var cols strings.Builder
	cols.WriteString(", ds.id, ds.name, ds.category")
	r.Extra.Dest = []any{&r.statusID, &r.statusName, &r.category}
	if withFields {
		cols.WriteString(", " + customfield.DefinitionsSQL("p.id"))
		r.Extra.Dest = append(r.Extra.Dest, &r.fields)
	}
	r.texts = make([]string, len(r.prefetches))
	for i, pf := range r.prefetches {
		cols.WriteString(", " + pf.SQL("p.id"))
		r.Extra.Dest = append(r.Extra.Dest, &r.texts[i])
	}
	r.Extra.Columns = cols.String()
	r.Extra.Joins = `
LEFT JOIN LATERAL (SELECT s.id, s.name, s.category FROM workflow_statuses AS s
	WHERE s.workflow_id = p.workflow_id AND s.category = '` + workflow.CategoryTodo + `'
	ORDER BY s.position, s.created_at, s.id LIMIT 1) AS ds ON true`
	return r
}

// context is the scanned read as readCreateContext's answer, for project p (nil when
// the statement did not run: the create reads its context itself).
func (r *ContextRead) context(ctx context.Context, p Project) (*createContext, error) {
	if r == nil || !r.Extra.Scanned {
		return nil, nil
	}
	if p.WorkflowID == nil || !r.statusID.Valid || r.statusName == nil || r.category == nil {
		return nil, workflow.ErrNoDefaultStatus
	}
	c := &createContext{status: workflow.Status{ID: uuid.UUID(r.statusID.Bytes), Name: *r.statusName,
		Category: *r.category, WorkflowID: *p.WorkflowID}}
	var err error
	if r.withFields {
		if r.fields == nil {
			return nil, errors.New("read create context: no custom fields column")
		}
		if c.fields, err = customfield.DecodeDefinitions(*r.fields); err != nil {
			return nil, err
		}
	}
	if c.ctx, err = event.WithPrefetched(ctx, p.ID, r.prefetches, r.texts); err != nil {
		return nil, err
	}
	return c, nil
}
