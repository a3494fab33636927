package project_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/store/storetest"
)

// setup is a transaction on a fresh database, rolled back when the test ends.
func setup(t *testing.T) (context.Context, bun.Tx) {
	t.Helper()
	db := storetest.NewDB(t)
	ctx := context.Background()
	tx, err := db.Bun.BeginTx(ctx, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback() })
	return ctx, tx
}

func newUser(t *testing.T, ctx context.Context, tx bun.Tx) *auth.Principal {
	t.Helper()
	u := &store.User{Email: uuid.NewString() + "@example.com", DisplayName: "U", SystemRole: auth.RoleMember, Active: true}
	_, err := tx.NewInsert().Model(u).Returning("*").Exec(ctx)
	require.NoError(t, err)
	return &auth.Principal{UserID: u.ID, Email: u.Email, SystemRole: u.SystemRole}
}

func TestCreateAndList(t *testing.T) {
	t.Parallel()
	ctx, tx := setup(t)
	svc := project.NewService(tx, nil)
	owner, member, orgMember, stranger := newUser(t, ctx, tx), newUser(t, ctx, tx), newUser(t, ctx, tx), newUser(t, ctx, tx)

	a, err := svc.Create(ctx, audit.Actor{UserID: owner.UserID, Email: owner.Email}, project.NewProject{Key: "ALPHA", Name: "Alpha"})
	require.NoError(t, err)
	require.Equal(t, project.Admin, a.Role)
	require.NotNil(t, a.Project.WorkflowID)

	_, err = svc.Create(ctx, audit.Actor{UserID: stranger.UserID, Email: stranger.Email}, project.NewProject{Key: "ALPHA", Name: "Again"})
	require.ErrorIs(t, err, project.ErrDuplicateKey)

	_, err = tx.NewInsert().Model(&store.ProjectMember{ProjectID: a.Project.ID, UserID: member.UserID, Role: "MEMBER"}).Exec(ctx)
	require.NoError(t, err)
	org := &store.Organization{Name: "O", Slug: "o"}
	_, err = tx.NewInsert().Model(org).Returning("*").Exec(ctx)
	require.NoError(t, err)
	_, err = tx.NewUpdate().Table("projects").Set("org_id = ?", org.ID).Where("id = ?", a.Project.ID).Exec(ctx)
	require.NoError(t, err)
	for _, p := range []*auth.Principal{orgMember, member} {
		_, err = tx.NewInsert().Model(&store.OrganizationMember{OrgID: org.ID, UserID: p.UserID, Role: "MEMBER"}).Exec(ctx)
		require.NoError(t, err)
	}

	for _, c := range []struct {
		who  *auth.Principal
		want project.Role
	}{{owner, project.Admin}, {member, project.Member}, {orgMember, project.Viewer}} {
		list, err := project.ListFor(ctx, tx, c.who.UserID)
		require.NoError(t, err)
		require.Len(t, list, 1, "listed once")
		require.Equal(t, c.want, list[0].Role)
		loaded, err := project.Load(ctx, tx, "ALPHA", c.who)
		require.NoError(t, err)
		require.Equal(t, c.want, loaded.Role, "list and load agree")
	}
	list, err := project.ListFor(ctx, tx, stranger.UserID)
	require.NoError(t, err)
	require.Empty(t, list)

	members, err := project.Members(ctx, tx, &a.Project)
	require.NoError(t, err)
	require.Len(t, members, 2, "explicit members only, the owner included")
	require.Equal(t, owner.UserID, members[0].User.ID)
	require.Equal(t, project.Admin, members[0].Role)
	require.Equal(t, project.Member, members[1].Role)
}
