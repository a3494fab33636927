package customfield

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/store"
)

// OptionChange is a validated option update: nil members stay unchanged.
type OptionChange struct {
	Label     *string
	SortOrder *int
}

// dropdown checks that fieldID names a DROPDOWN field of the project.
func dropdown(ctx context.Context, db bun.IDB, projectID, fieldID uuid.UUID) error {
	var typ string
	err := db.NewSelect().Model((*store.CustomField)(nil)).Column("type").
		Where("id = ? AND project_id = ?", fieldID, projectID).Scan(ctx, &typ)
	switch {
	case store.IsNotFound(err):
		return ErrNotFound
	case err != nil:
		return fmt.Errorf("load custom field %s: %w", fieldID, err)
	case typ != TypeDropdown:
		return ErrNotDropdown
	}
	return nil
}

// CreateOption adds an option to a DROPDOWN field of the project; its label must be
// unused in the field (whatever the case).
func CreateOption(ctx context.Context, db bun.IDB, projectID, fieldID uuid.UUID, label string, sortOrder int) (*Option, error) {
	if err := dropdown(ctx, db, projectID, fieldID); err != nil {
		return nil, err
	}
	row := &store.CustomFieldOption{FieldID: fieldID, Label: label, SortOrder: sortOrder}
	if _, err := db.NewInsert().Model(row).Returning("*").Exec(ctx); err != nil {
		// The field may have gone since the check: its id is then a foreign-key miss.
		var ce *store.ConstraintError
		if errors.As(store.Translate(err), &ce) && ce.Kind == "foreign_key" {
			return nil, ErrNotFound
		}
		return nil, fmt.Errorf("create option: %w", translate(err))
	}
	return toOption(row), nil
}

// UpdateOption changes an option's label or sort order; an option of another field, or
// a field of another project, is ErrOptionNotFound.
func UpdateOption(ctx context.Context, db bun.IDB, projectID, fieldID, optionID uuid.UUID, ch OptionChange) (*Option, error) {
	if err := dropdown(ctx, db, projectID, fieldID); errors.Is(err, ErrNotDropdown) {
		return nil, ErrOptionNotFound // other types have no options at all
	} else if err != nil {
		return nil, err
	}
	row := &store.CustomFieldOption{}
	var err error
	if ch.Label == nil && ch.SortOrder == nil {
		err = db.NewSelect().Model(row).Where("id = ? AND field_id = ?", optionID, fieldID).Scan(ctx)
	} else {
		q := db.NewUpdate().Model(row).Where("id = ? AND field_id = ?", optionID, fieldID).Returning("*")
		if ch.Label != nil {
			q = q.Set("label = ?", *ch.Label)
		}
		if ch.SortOrder != nil {
			q = q.Set("sort_order = ?", *ch.SortOrder)
		}
		_, err = q.Exec(ctx)
		if err == nil && row.ID == uuid.Nil {
			err = store.ErrNotFound
		}
	}
	switch {
	case store.IsNotFound(err):
		return nil, ErrOptionNotFound
	case err != nil:
		return nil, fmt.Errorf("update option %s: %w", optionID, translate(err))
	}
	return toOption(row), nil
}

// DeleteOption removes an option of a field of the project; the issues that had it
// chosen lose their value for the field.
func DeleteOption(ctx context.Context, db bun.IDB, projectID, fieldID, optionID uuid.UUID) error {
	// The field's row is locked first (FOR UPDATE, which a value write's LockFields
	// waits for): the deletion cascades to the option's values, whose trigger then
	// locks their issues, so a value write must not hold an issue while it waits here.
	res, err := db.NewRaw(`WITH cf AS (SELECT id FROM custom_fields WHERE id = ? AND project_id = ? FOR UPDATE)
		DELETE FROM custom_field_options AS cfo USING cf WHERE cfo.id = ? AND cfo.field_id = cf.id`,
		fieldID, projectID, optionID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("delete option %s: %w", optionID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		if _, err := Get(ctx, db, projectID, fieldID); err != nil {
			return err
		}
		return ErrOptionNotFound
	}
	return nil
}

func toOption(r *store.CustomFieldOption) *Option {
	return &Option{ID: r.ID, FieldID: r.FieldID, Label: r.Label, SortOrder: r.SortOrder}
}
