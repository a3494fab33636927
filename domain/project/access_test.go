package project_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/store/storetest"
)

// TestLoadAndLoadWithUserAgree runs the two authorization reads, Load (bun) and
// LoadWithUser (pgx), over the whole role matrix: every explicit role (none, VIEWER,
// MEMBER, ADMIN) crossed with every organization role (none, MEMBER, ADMIN, OWNER), the
// owner, a stranger and no user at all. Both must give the same project and roles, and
// the user row LoadWithUser reads with them must be the one auth reads by
// auth.UserColumns.
func TestLoadAndLoadWithUserAgree(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	ctx := context.Background()
	exec := func(q string, args ...any) {
		t.Helper()
		_, err := db.Pool.Exec(ctx, q, args...)
		require.NoError(t, err)
	}
	newUser := func() uuid.UUID {
		t.Helper()
		id := uuid.New()
		exec(`INSERT INTO users (id, email, display_name, system_role, language, tokens_not_before)
			VALUES ($1, $2, $3, 'MEMBER', 'de', now() - interval '1 hour')`, id, id.String()+"@example.com", "Name "+id.String()[:8])
		return id
	}
	owner := newUser()
	org := uuid.New()
	exec("INSERT INTO organizations (id, name, slug) VALUES ($1, 'O', $2)", org, "o-"+org.String()[:8])
	exec("INSERT INTO projects (id, key, name, description, owner_id, org_id) VALUES ($1, 'MATRIX', 'M', 'd', $2, $3)",
		uuid.New(), owner, org)
	exec("UPDATE users SET org_id = $1, deleted_at = now(), active = false WHERE id = $2", org, owner)

	type who struct {
		name string
		id   uuid.UUID
		want project.Role
	}
	people := []who{{"owner", owner, project.Admin}, {"stranger", newUser(), project.None}, {"no user", uuid.Nil, project.None}}
	explicit := []string{"", "VIEWER", "MEMBER", "ADMIN"}
	inherited := map[string]project.Role{"": project.None, "MEMBER": project.Viewer, "ADMIN": project.Admin, "OWNER": project.Admin}
	for _, m := range explicit {
		for o, inh := range inherited {
			if m == "" && o == "" {
				continue
			}
			id := newUser()
			if m != "" {
				exec("INSERT INTO project_members (project_id, user_id, role) SELECT id, $1, $2 FROM projects WHERE key = 'MATRIX'", id, m)
			}
			if o != "" {
				exec("INSERT INTO organization_members (org_id, user_id, role) VALUES ($1, $2, $3)", org, id, o)
			}
			want := project.Role(m)
			if !want.AtLeast(inh) {
				want = inh
			}
			people = append(people, who{"member " + m + " org " + o, id, want})
		}
	}
	require.Len(t, people, 18)

	for _, p := range people {
		var principal *auth.Principal
		if p.id != uuid.Nil {
			principal = &auth.Principal{UserID: p.id}
		}
		viaBun, err := project.Load(ctx, db.Bun, "MATRIX", principal)
		require.NoError(t, err, p.name)
		viaPgx, u, err := project.LoadWithUser(ctx, db.Pool, "MATRIX", p.id, nil)
		require.NoError(t, err, p.name)
		require.Equal(t, p.want, viaBun.Role, p.name)
		require.Equal(t, []project.Role{viaBun.Role, viaBun.MemberRole}, []project.Role{viaPgx.Role, viaPgx.MemberRole}, p.name)
		requireSameProject(t, viaBun.Project, viaPgx.Project)

		if p.id == uuid.Nil {
			require.Nil(t, u, p.name)
			continue
		}
		var want store.User
		require.NoError(t, db.Bun.NewSelect().Model(&want).Column(auth.UserColumns...).Where("id = ?", p.id).Scan(ctx))
		require.NotNil(t, u, p.name)
		requireSameUser(t, want, *u)
	}

	_, _, err := project.LoadWithUser(ctx, db.Pool, "NOSUCH", owner, nil)
	require.ErrorIs(t, err, project.ErrNotFound)
	_, err = project.Load(ctx, db.Bun, "NOSUCH", nil)
	require.ErrorIs(t, err, project.ErrNotFound)
}

func requireSameProject(t *testing.T, want, got store.Project) {
	t.Helper()
	require.True(t, want.CreatedAt.Equal(got.CreatedAt) && want.UpdatedAt.Equal(got.UpdatedAt))
	want.CreatedAt, want.UpdatedAt, got.CreatedAt, got.UpdatedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	require.Equal(t, want, got)
}

// requireSameUser compares the UserColumns of two user rows.
func requireSameUser(t *testing.T, want, got store.User) {
	t.Helper()
	require.True(t, want.TokensNotBefore.Equal(got.TokensNotBefore))
	require.Equal(t, want.DeletedAt == nil, got.DeletedAt == nil)
	if want.DeletedAt != nil {
		require.True(t, want.DeletedAt.Equal(*got.DeletedAt))
	}
	want.TokensNotBefore, got.TokensNotBefore, want.DeletedAt, got.DeletedAt = time.Time{}, time.Time{}, nil, nil
	require.Equal(t, want, got)
	require.NotEmpty(t, got.Email)
	require.NotEqual(t, got.Email, got.DisplayName)
}
