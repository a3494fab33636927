package customfield

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/taskweave/taskweave/store"
)

// NewField is a validated create request.
type NewField struct {
	Name      string
	Type      string
	Required  bool
	SortOrder int
}

// FieldChange is a validated update: nil members stay unchanged. There is no type: a
// field's type never changes.
type FieldChange struct {
	Name      *string
	Required  *bool
	SortOrder *int
}

// Order is one entry of a reorder.
type Order struct {
	ID        uuid.UUID
	SortOrder int
}

// Create adds a field to the project; its name must be unused there (whatever the case).
func Create(ctx context.Context, db bun.IDB, projectID uuid.UUID, in NewField) (*Definition, error) {
	row := &store.CustomField{ProjectID: projectID, Name: in.Name, Type: in.Type, Required: in.Required, SortOrder: in.SortOrder}
	if _, err := db.NewInsert().Model(row).Returning("*").Exec(ctx); err != nil {
		return nil, fmt.Errorf("create custom field: %w", translate(err))
	}
	return &Definition{ID: row.ID, ProjectID: row.ProjectID, Name: row.Name, Type: row.Type, Required: row.Required,
		SortOrder: row.SortOrder, Options: []Option{}}, nil
}

// Update changes a field's name, required flag or sort order. Making a field required
// does not touch the issues that have no value for it: they stay readable and
// changeable, and are asked for the value only when a change clears it.
func Update(ctx context.Context, db bun.IDB, projectID, id uuid.UUID, ch FieldChange) (*Definition, error) {
	if ch.Name != nil || ch.Required != nil || ch.SortOrder != nil {
		q := db.NewUpdate().Model((*store.CustomField)(nil)).Where("id = ? AND project_id = ?", id, projectID)
		if ch.Name != nil {
			q = q.Set("name = ?", *ch.Name)
		}
		if ch.Required != nil {
			q = q.Set("required = ?", *ch.Required)
		}
		if ch.SortOrder != nil {
			q = q.Set("sort_order = ?", *ch.SortOrder)
		}
		res, err := q.Exec(ctx)
		if err != nil {
			return nil, fmt.Errorf("update custom field %s: %w", id, translate(err))
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil, ErrNotFound
		}
	}
	return Get(ctx, db, projectID, id)
}

// Reorder sets the sort order of the named fields of the project, all or none: a field
// of another project (or unknown) is ErrNotFound and changes nothing.
func Reorder(ctx context.Context, db bun.IDB, projectID uuid.UUID, orders []Order) error {
	if len(orders) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, len(orders))
	sorts := make([]int, len(orders))
	for i, o := range orders {
		ids[i], sorts[i] = o.ID, o.SortOrder
	}
	if len(slices.Compact(slices.SortedFunc(slices.Values(ids), compareIDs))) != len(ids) {
		return ErrDuplicateFields
	}
	return store.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		// Rows are locked in id order first, so two concurrent reorders never deadlock.
		var locked []uuid.UUID
		err := tx.NewSelect().Model((*store.CustomField)(nil)).Column("id").
			Where("project_id = ? AND id IN (?)", projectID, bun.In(ids)).OrderExpr("id").For("UPDATE").
			Scan(ctx, &locked)
		if err != nil {
			return fmt.Errorf("lock custom fields: %w", err)
		}
		if len(locked) != len(ids) {
			return ErrNotFound
		}
		_, err = tx.NewRaw(`UPDATE custom_fields AS cf SET sort_order = o.sort_order
			FROM unnest(?::uuid[], ?::integer[]) AS o (id, sort_order)
			WHERE cf.id = o.id AND cf.project_id = ?`, pgdialect.Array(idStrings(ids)), pgdialect.Array(sorts), projectID).Exec(ctx)
		if err != nil {
			return fmt.Errorf("reorder custom fields: %w", err)
		}
		return nil
	})
}

// Delete removes a field of the project; its options and every issue's value for it go
// with it.
func Delete(ctx context.Context, db bun.IDB, projectID, id uuid.UUID) error {
	res, err := db.NewDelete().Model((*store.CustomField)(nil)).Where("id = ? AND project_id = ?", id, projectID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("delete custom field %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// LockFields takes the rows of the project's fields named by ids FOR KEY SHARE, in id
// order (a rename, FOR NO KEY UPDATE, does not wait for it). A write of an issue's
// values calls it before it locks the issue: deleting a field or an option locks the
// field's row first and then, through the cascade to the values and their trigger, the
// issues holding them, so the writer must wait for the field before it holds an issue,
// not the other way round, or the two deadlock.
func LockFields(ctx context.Context, db bun.IDB, projectID uuid.UUID, ids []uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := db.NewRaw(`SELECT 1 FROM custom_fields WHERE project_id = ? AND id IN (?) ORDER BY id FOR KEY SHARE`,
		projectID, bun.In(ids)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("lock custom fields: %w", err)
	}
	return nil
}

// translate turns the unique violations of names and labels into the domain's errors.
func translate(err error) error {
	switch {
	case store.IsUnique(err, uniqueName):
		return ErrDuplicateName
	case store.IsUnique(err, uniqueLabel):
		return ErrDuplicateLabel
	case store.IsNotFound(err):
		return ErrNotFound
	}
	return err
}

func compareIDs(a, b uuid.UUID) int {
	for i := range a {
		if a[i] != b[i] {
			return int(a[i]) - int(b[i])
		}
	}
	return 0
}

func idStrings(ids []uuid.UUID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}
