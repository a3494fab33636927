package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/store"
)

// UndoParams is an undo task's request: the import whose rows it removes.
type UndoParams struct {
	ImportID uuid.UUID `json:"importId"`
}

// QueueUndo queues the undo of import id: a FAILED or CANCELLED import (not a dry run),
// once. The undo removes the issues the import created (with their comments, values and
// attachments), then the labels, versions, sprints and custom fields it created that no
// remaining issue uses, and the members it added and rules it created.
func QueueUndo(ctx context.Context, db bun.IDB, bus *event.Bus, id uuid.UUID, v Viewer) (*store.Task, error) {
	var out *store.Task
	err := store.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		t, err := lockVisible(ctx, tx, id, v)
		if err != nil {
			return err
		}
		var params ImportParams
		var st importState
		_ = json.Unmarshal(t.Params, &params)
		_ = json.Unmarshal(t.StateData, &st)
		if t.Kind != KindImport || params.DryRun || st.Undone || (t.State != StateFailed && t.State != StateCancelled) {
			return ErrNotUndoable
		}
		st.Undone = true
		raw, err := json.Marshal(st)
		if err != nil {
			return err
		}
		if _, err := tx.NewUpdate().Table("tasks").Set("state_data = ?", string(raw)).Where("id = ?", id).Exec(ctx); err != nil {
			return fmt.Errorf("mark import undone: %w", err)
		}
		var p *store.Project
		if t.ProjectID != nil {
			p = &store.Project{ID: *t.ProjectID, Key: deref(t.ProjectKey)}
		}
		out, err = Create(ctx, tx, bus, NewTask{Kind: KindUndo, CreatedBy: v.UserID, Project: p, Params: UndoParams{ImportID: id}})
		return err
	})
	return out, err
}

// Undo is the undo handler: each batch deletes up to n of the import's issues and
// their records in one transaction, so a resumed undo deletes what is left. Each deleted
// issue publishes issue.Deleted by the undo's creator, as a delete through the API does,
// so webhook receivers that saw it created see it go.
type Undo struct {
	// Bus publishes the Deleted events; nil publishes none.
	Bus *event.Bus
}

// Batch implements Handler.
func (h *Undo) Batch(ctx context.Context, tx bun.Tx, t *store.Task, n int) (Batch, error) {
	var params UndoParams
	if err := json.Unmarshal(t.Params, &params); err != nil {
		return Batch{}, fmt.Errorf("undo params: %w", err)
	}
	if t.Cursor == 0 && t.Total == 0 {
		if err := tx.NewSelect().Table("task_created").ColumnExpr("count(*)").
			Where("task_id = ? AND kind = 'issue'", params.ImportID).Scan(ctx, &t.Total); err != nil {
			return Batch{}, fmt.Errorf("count imported issues: %w", err)
		}
	}
	var ids []uuid.UUID
	if err := tx.NewRaw(`DELETE FROM task_created WHERE task_id = ? AND kind = 'issue' AND id IN (
		SELECT id FROM task_created WHERE task_id = ? AND kind = 'issue' ORDER BY id LIMIT ?) RETURNING id`,
		params.ImportID, params.ImportID, n).Scan(ctx, &ids); err != nil && !errors.Is(store.Translate(err), store.ErrNotFound) {
		return Batch{}, fmt.Errorf("take imported issues: %w", err)
	}
	if len(ids) > 0 {
		if err := h.deleted(ctx, tx, t, ids); err != nil {
			return Batch{}, err
		}
		if _, err := tx.NewDelete().Table("issues").Where("id IN (?)", bun.In(ids)).Exec(ctx); err != nil {
			return Batch{}, fmt.Errorf("delete imported issues: %w", err)
		}
		return Batch{Consumed: len(ids)}, nil
	}
	for _, x := range []struct{ kind, table, unused string }{
		{"label", "labels", "NOT EXISTS (SELECT FROM issue_labels u WHERE u.label_id = x.id)"},
		{"version", "versions", "NOT EXISTS (SELECT FROM issue_versions u WHERE u.version_id = x.id)"},
		{"sprint", "sprints", "NOT EXISTS (SELECT FROM issues u WHERE u.sprint_id = x.id)"},
		{"field", "custom_fields", "NOT EXISTS (SELECT FROM custom_field_values u WHERE u.field_id = x.id)"},
		// The members it added and the (disabled) rules it made go whatever uses them.
		{"member", "project_members", "true"},
		{"rule", "automation_rules", "true"},
	} {
		if _, err := tx.NewRaw(`DELETE FROM `+x.table+` AS x WHERE x.id IN (SELECT id FROM task_created WHERE task_id = ? AND kind = ?)
			AND `+x.unused, params.ImportID, x.kind).Exec(ctx); err != nil {
			return Batch{}, fmt.Errorf("delete imported %s: %w", x.table, err)
		}
	}
	if _, err := tx.NewDelete().Table("task_created").Where("task_id = ?", params.ImportID).Exec(ctx); err != nil {
		return Batch{}, fmt.Errorf("clear import records: %w", err)
	}
	return Batch{Done: true}, nil
}

// deleted publishes issue.Deleted for the issues ids, before they go.
func (h *Undo) deleted(ctx context.Context, tx bun.Tx, t *store.Task, ids []uuid.UUID) error {
	if h.Bus == nil {
		return nil
	}
	var rows []struct {
		ID         uuid.UUID `bun:"id"`
		Key        string    `bun:"key"`
		Title      string    `bun:"title"`
		ProjectID  uuid.UUID `bun:"project_id"`
		ProjectKey string    `bun:"project_key"`
	}
	if err := tx.NewRaw(`SELECT i.id, i.key, i.title, i.project_id, p.key AS project_key FROM issues AS i
		JOIN projects AS p ON p.id = i.project_id WHERE i.id IN (?) ORDER BY i.number`, bun.In(ids)).Scan(ctx, &rows); err != nil &&
		!errors.Is(store.Translate(err), store.ErrNotFound) {
		return fmt.Errorf("read undone issues: %w", err)
	}
	var email string
	if err := tx.NewSelect().Table("users").Column("email").Where("id = ?", t.CreatedBy).Scan(ctx, &email); err != nil {
		return fmt.Errorf("read undo creator: %w", err)
	}
	by := issue.By{ID: &t.CreatedBy, Email: email}
	evs := make([]event.Event, len(rows))
	at := time.Now().UTC()
	for i, r := range rows {
		evs[i] = issue.Deleted{Subject: issue.Subject{ProjectID: r.ProjectID, ProjectKey: r.ProjectKey, IssueID: r.ID,
			IssueKey: r.Key, Title: r.Title}, By: by, At: at}
	}
	return h.Bus.Emit(event.WithTask(ctx, t.ID), tx, evs...)
}
