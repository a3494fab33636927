// Package label owns a project's labels: named, coloured tags for issues.
package label

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/store"
)

// Errors of labels.
var (
	ErrNotFound      = errors.New("label: not found")
	ErrDuplicateName = errors.New("label: duplicate name")
)

// ColorPattern is the colour rule, "#RRGGBB".
var ColorPattern = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// MaxNameLength is the longest label name.
const MaxNameLength = 50

// Change is a validated update; nil members stay unchanged.
type Change struct {
	Name  *string
	Color *string
}

// List returns a project's labels by name.
func List(ctx context.Context, db bun.IDB, projectID uuid.UUID) ([]store.Label, error) {
	out := []store.Label{}
	if err := db.NewSelect().Model(&out).Where("project_id = ?", projectID).Order("name", "id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("list labels: %w", err)
	}
	return out, nil
}

// Create adds a label; names are unique per project.
func Create(ctx context.Context, db bun.IDB, projectID uuid.UUID, name, color string) (*store.Label, error) {
	l := &store.Label{ProjectID: projectID, Name: name, Color: color}
	if _, err := db.NewInsert().Model(l).Returning("*").Exec(ctx); err != nil {
		return nil, fmt.Errorf("create label: %w", duplicate(err))
	}
	return l, nil
}

// Update changes a label of the project; a label of another project is not found.
func Update(ctx context.Context, db bun.IDB, projectID, id uuid.UUID, ch Change) (*store.Label, error) {
	l := &store.Label{}
	var err error
	if ch.Name == nil && ch.Color == nil {
		err = db.NewSelect().Model(l).Where("id = ? AND project_id = ?", id, projectID).Scan(ctx)
	} else {
		q := db.NewUpdate().Model(l).Where("id = ? AND project_id = ?", id, projectID).Returning("*")
		if ch.Name != nil {
			q = q.Set("name = ?", *ch.Name)
		}
		if ch.Color != nil {
			q = q.Set("color = ?", *ch.Color)
		}
		_, err = q.Exec(ctx)
	}
	switch {
	case store.IsNotFound(err):
		return nil, ErrNotFound
	case err != nil:
		return nil, fmt.Errorf("update label %s: %w", id, duplicate(err))
	case l.ID == uuid.Nil:
		return nil, ErrNotFound
	}
	return l, nil
}

// Delete removes a label of the project (and so its issue assignments).
func Delete(ctx context.Context, db bun.IDB, projectID, id uuid.UUID) error {
	res, err := db.NewDelete().Model((*store.Label)(nil)).Where("id = ? AND project_id = ?", id, projectID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("delete label %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

func duplicate(err error) error {
	if store.IsUnique(err, "labels_project_name_key") {
		return ErrDuplicateName
	}
	return err
}
