package issue

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/store"
)

// memberName returns the display name of userID when they are a member of the project
// (its owner or a member row, any role), else ErrAssigneeNotMember.
func memberName(ctx context.Context, db bun.IDB, projectID, userID uuid.UUID) (string, error) {
	var name string
	err := db.NewRaw(`SELECT u.display_name FROM users AS u
		WHERE u.id = ? AND u.deleted_at IS NULL
		  AND (EXISTS (SELECT 1 FROM projects AS p WHERE p.id = ? AND p.owner_id = u.id)
		    OR EXISTS (SELECT 1 FROM project_members AS pm WHERE pm.project_id = ? AND pm.user_id = u.id))`,
		userID, projectID, projectID).Scan(ctx, &name)
	if err != nil {
		if store.IsNotFound(err) {
			return "", ErrAssigneeNotMember
		}
		return "", fmt.Errorf("check assignee: %w", err)
	}
	return name, nil
}

// sprintName returns the name of a sprint issues of the project may join: not found,
// of another project, or CLOSED are errors.
func sprintName(ctx context.Context, db bun.IDB, projectID, sprintID uuid.UUID) (string, error) {
	var row struct {
		ProjectID uuid.UUID `bun:"project_id"`
		Name      string    `bun:"name"`
		Status    string    `bun:"status"`
	}
	err := db.NewSelect().Table("sprints").Column("project_id", "name", "status").Where("id = ?", sprintID).Scan(ctx, &row)
	if err != nil {
		if store.IsNotFound(err) {
			return "", ErrSprintNotFound
		}
		return "", fmt.Errorf("check sprint: %w", err)
	}
	switch {
	case row.ProjectID != projectID:
		return "", ErrSprintNotInProject
	case row.Status == "CLOSED":
		return "", ErrSprintClosed
	}
	return row.Name, nil
}

// checkParent makes sure parentID is an issue of the project.
func checkParent(ctx context.Context, db bun.IDB, projectID, parentID uuid.UUID) error {
	ok, err := db.NewSelect().Table("issues").Where("id = ? AND project_id = ?", parentID, projectID).Exists(ctx)
	if err != nil {
		return fmt.Errorf("check parent: %w", err)
	}
	if !ok {
		return ErrParentNotFound
	}
	return nil
}

// parentByKey is the id of the project's issue with key, ErrParentNotFound when none.
func parentByKey(ctx context.Context, db bun.IDB, projectID uuid.UUID, key string) (uuid.UUID, error) {
	var ids []uuid.UUID
	err := db.NewSelect().Table("issues").Column("id").Where("project_id = ? AND key = ?", projectID, key).Scan(ctx, &ids)
	if err != nil {
		return uuid.Nil, fmt.Errorf("find parent %s: %w", key, err)
	}
	if len(ids) == 0 {
		return uuid.Nil, ErrParentNotFound
	}
	return ids[0], nil
}

// projectLabels keeps the ids that name labels of the project, by name.
func projectLabels(ctx context.Context, db bun.IDB, projectID uuid.UUID, ids []uuid.UUID) ([]LabelRef, error) {
	out := []LabelRef{}
	if len(ids) == 0 {
		return out, nil
	}
	err := db.NewSelect().Table("labels").Column("id", "name", "color").
		Where("project_id = ? AND id IN (?)", projectID, bun.In(ids)).OrderExpr("name, id").Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("load labels: %w", err)
	}
	return out, nil
}

// projectVersions keeps the ids that name versions of the project, by name.
func projectVersions(ctx context.Context, db bun.IDB, projectID uuid.UUID, ids []uuid.UUID) ([]VersionRef, error) {
	out := []VersionRef{}
	if len(ids) == 0 {
		return out, nil
	}
	err := db.NewSelect().Table("versions").Column("id", "name").
		Where("project_id = ? AND id IN (?)", projectID, bun.In(ids)).OrderExpr("name, id").Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("load versions: %w", err)
	}
	return out, nil
}
