// Package version owns a project's release versions, which issues carry as fix or affects
// versions. Versions publish no events (docs/design.md#event-flow).
package version

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/store"
)

// MaxName is the longest version name.
const MaxName = 50

// Errors of the version rules.
var (
	ErrNotFound      = errors.New("version: not found")
	ErrDuplicateName = errors.New("version: name already used in this project")
)

// uniqueName is the constraint behind ErrDuplicateName.
const uniqueName = "versions_project_name_key"

// List returns the project's versions in creation order.
func List(ctx context.Context, db bun.IDB, projectID uuid.UUID) ([]store.Version, error) {
	out := []store.Version{}
	if err := db.NewSelect().Model(&out).Where("project_id = ?", projectID).Order("created_at", "id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("list versions: %w", err)
	}
	return out, nil
}

// Create adds a version; the name must be unused in the project.
func Create(ctx context.Context, db bun.IDB, projectID uuid.UUID, name string) (*store.Version, error) {
	v := &store.Version{ProjectID: projectID, Name: name}
	if _, err := db.NewInsert().Model(v).Returning("*").Exec(ctx); err != nil {
		return nil, translate("create version", err)
	}
	return v, nil
}

// Rename changes a version's name; a version of another project is ErrNotFound.
func Rename(ctx context.Context, db bun.IDB, projectID, id uuid.UUID, name string) (*store.Version, error) {
	v := &store.Version{}
	err := db.NewUpdate().Model(v).Set("name = ?", name).Where("id = ? AND project_id = ?", id, projectID).
		Returning("*").Scan(ctx)
	if err != nil {
		return nil, translate("rename version", err)
	}
	return v, nil
}

// Delete removes a version; its issue assignments go with it (cascade).
func Delete(ctx context.Context, db bun.IDB, projectID, id uuid.UUID) error {
	res, err := db.NewDelete().Model((*store.Version)(nil)).Where("id = ? AND project_id = ?", id, projectID).Exec(ctx)
	if err != nil {
		return translate("delete version", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

func translate(op string, err error) error {
	switch {
	case store.IsUnique(err, uniqueName):
		return ErrDuplicateName
	case store.IsNotFound(err):
		return ErrNotFound
	}
	return fmt.Errorf("%s: %w", op, err)
}
