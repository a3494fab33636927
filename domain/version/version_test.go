package version_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/version"
	"github.com/taskweave/taskweave/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

func TestVersionRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.PackageDB(t)
	project := func() uuid.UUID {
		owner, id := uuid.New(), uuid.New()
		_, err := db.Pool.Exec(ctx, "INSERT INTO users (id, email, display_name) VALUES ($1, $2, 'Owner')", owner, "v-"+owner.String()+"@example.com")
		require.NoError(t, err)
		_, err = db.Pool.Exec(ctx, "INSERT INTO projects (id, key, name, owner_id) VALUES ($1, $2, 'P', $3)",
			id, "V"+strings.ToUpper(strings.ReplaceAll(uuid.NewString(), "-", "")[:8]), owner)
		require.NoError(t, err)
		return id
	}
	p, other := project(), project()

	v1, err := version.Create(ctx, db.Bun, p, "1.0")
	require.NoError(t, err)
	v2, err := version.Create(ctx, db.Bun, p, "2.0")
	require.NoError(t, err)
	_, err = version.Create(ctx, db.Bun, other, "1.0")
	require.NoError(t, err, "names are unique per project only")
	_, err = version.Create(ctx, db.Bun, p, "1.0")
	require.ErrorIs(t, err, version.ErrDuplicateName)
	_, err = version.Rename(ctx, db.Bun, p, v2.ID, "1.0")
	require.ErrorIs(t, err, version.ErrDuplicateName)

	renamed, err := version.Rename(ctx, db.Bun, p, v1.ID, "1.1")
	require.NoError(t, err)
	require.Equal(t, "1.1", renamed.Name)
	_, err = version.Rename(ctx, db.Bun, other, v1.ID, "x")
	require.ErrorIs(t, err, version.ErrNotFound, "a version of another project is not found")
	require.ErrorIs(t, version.Delete(ctx, db.Bun, other, v1.ID), version.ErrNotFound)

	list, err := version.List(ctx, db.Bun, p)
	require.NoError(t, err)
	require.Equal(t, []string{"1.1", "2.0"}, []string{list[0].Name, list[1].Name}, "creation order")
	require.NoError(t, version.Delete(ctx, db.Bun, p, v1.ID))
	require.ErrorIs(t, version.Delete(ctx, db.Bun, p, v1.ID), version.ErrNotFound)
	list, err = version.List(ctx, db.Bun, p)
	require.NoError(t, err)
	require.Len(t, list, 1)
}
