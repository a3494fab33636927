package issue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/customfield"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/workflow"
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

// readCreateContext reads a create's context; withFields reads the custom fields too.
// A workflow without a TODO status is workflow.ErrNoDefaultStatus.
func (s *Service) readCreateContext(ctx context.Context, tx bun.Tx, p Project, withFields bool) (*createContext, error) {
	if p.WorkflowID == nil {
		return nil, workflow.ErrNoDefaultStatus
	}
	prefetches := s.bus.Prefetches(EventCreated)
	var q strings.Builder
	q.WriteString("SELECT s.id, s.name, s.category")
	if withFields {
		q.WriteString(", " + customfield.DefinitionsSQL("$2"))
	}
	for _, pf := range prefetches {
		q.WriteString(", " + pf.SQL("$2"))
	}
	q.WriteString(` FROM workflow_statuses AS s WHERE s.workflow_id = $1 AND s.category = '` + workflow.CategoryTodo + `'
		ORDER BY s.position, s.created_at, s.id LIMIT 1`)

	c := &createContext{}
	var fields string
	texts := make([]string, len(prefetches))
	dst := []any{&c.status.ID, &c.status.Name, &c.status.Category}
	if withFields {
		dst = append(dst, &fields)
	}
	for i := range texts {
		dst = append(dst, &texts[i])
	}
	args := []any{*p.WorkflowID}
	if withFields || len(prefetches) > 0 {
		args = append(args, p.ID)
	}
	err := tx.Tx.QueryRowContext(ctx, q.String(), args...).Scan(dst...)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, workflow.ErrNoDefaultStatus
	case err != nil:
		return nil, fmt.Errorf("read create context: %w", err)
	}
	c.status.WorkflowID = *p.WorkflowID
	if withFields {
		if c.fields, err = customfield.DecodeDefinitions(fields); err != nil {
			return nil, err
		}
	}
	if c.ctx, err = event.WithPrefetched(ctx, p.ID, prefetches, texts); err != nil {
		return nil, err
	}
	return c, nil
}
