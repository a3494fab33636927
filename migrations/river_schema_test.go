package migrations_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/migrations"
	"github.com/taskweave/taskweave/store/storetest"
)

// TestRiverTablesAreRivers: after every migration from an empty database, River's
// tables (columns, defaults, constraints, indexes, triggers) are exactly what River's
// own migrator makes on an empty database. Taskweave writes nothing into River's schema
// (see docs/operations.md#upgrading-river), so a River upgrade never meets our changes.
func TestRiverTablesAreRivers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))

	ours := emptyPool(t)
	require.NoError(t, migrations.Apply(ctx, ours, log))
	rivers := emptyPool(t)
	migrator, err := rivermigrate.New(riverpgxv5.New(rivers), nil)
	require.NoError(t, err)
	_, err = migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
	require.NoError(t, err)

	want, got := riverSchema(t, rivers), riverSchema(t, ours)
	require.NotEmpty(t, want)
	require.Contains(t, strings.Join(want, "\n"), "river_job_args_index ON public.river_job USING gin (args)")
	require.Equal(t, want, got)
}

// emptyDB creates an empty database (a unique name: several test runs may share the
// server), dropped when the test ends, and returns its pool configuration.
func emptyDB(t *testing.T) *pgxpool.Config {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, storetest.AdminURL())
	require.NoError(t, err)
	defer admin.Close(ctx)
	name := "tw_migrate_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:12]
	_, err = admin.Exec(ctx, "CREATE DATABASE "+name)
	require.NoError(t, err)
	t.Cleanup(func() {
		admin, err := pgx.Connect(context.Background(), storetest.AdminURL())
		if err != nil {
			return
		}
		defer admin.Close(context.Background())
		_, _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	cfg, err := pgxpool.ParseConfig(storetest.AdminURL())
	require.NoError(t, err)
	cfg.ConnConfig.Database = name
	return cfg
}

// emptyPool opens a pool on a new empty database (emptyDB), closed when the test ends.
func emptyPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.NewWithConfig(context.Background(), emptyDB(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

// migratedBefore opens a new database with River's tables and every Taskweave migration
// below version applied. apply runs one more migration in its own transaction; later
// holds the migrations from version on, by version, for the test to apply when its
// rows are in place.
func migratedBefore(t *testing.T, version int) (pool *pgxpool.Pool, apply func(migrations.Migration), later map[int]migrations.Migration) {
	t.Helper()
	ctx := context.Background()
	pool = emptyPool(t)
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	require.NoError(t, err)
	_, err = migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
	require.NoError(t, err)
	all, err := migrations.All()
	require.NoError(t, err)
	apply = func(m migrations.Migration) {
		t.Helper()
		require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, m.SQL)
			return err
		}), m.Name)
	}
	later = map[int]migrations.Migration{}
	for _, m := range all {
		if m.Version < version {
			apply(m)
		} else {
			later[m.Version] = m
		}
	}
	return pool, apply, later
}

// migrationProject is a user, a project, its workflow and one status, the rows a test
// of an old migration's backfill hangs its issues on (ids …01 to …04).
const migrationProject = `
		INSERT INTO users (id, email, display_name) VALUES ('00000000-0000-0000-0000-000000000001', 'm@example.com', 'M');
		INSERT INTO projects (id, key, name, owner_id) VALUES ('00000000-0000-0000-0000-000000000002', 'MIG', 'M', '00000000-0000-0000-0000-000000000001');
		INSERT INTO workflows (id, name, project_id) VALUES ('00000000-0000-0000-0000-000000000003', 'W', '00000000-0000-0000-0000-000000000002');
		INSERT INTO workflow_statuses (id, workflow_id, name, category) VALUES
			('00000000-0000-0000-0000-000000000004', '00000000-0000-0000-0000-000000000003', 'To Do', 'TODO');`

// riverSchema describes every river_* relation: columns with type, default and
// nullability, constraints, indexes and triggers, one sorted line each.
func riverSchema(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `
		SELECT 'column ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
			|| CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
			|| coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '')
		FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
		WHERE n.nspname = 'public' AND c.relname LIKE 'river%' AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
		UNION ALL
		SELECT 'constraint ' || c.relname || ' ' || con.conname || ' ' || pg_get_constraintdef(con.oid)
		FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'public' AND c.relname LIKE 'river%'
		UNION ALL
		SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename LIKE 'river%'
		UNION ALL
		SELECT 'trigger ' || pg_get_triggerdef(tg.oid)
		FROM pg_trigger tg JOIN pg_class c ON c.oid = tg.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'public' AND c.relname LIKE 'river%' AND NOT tg.tgisinternal
		ORDER BY 1`)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return out
}
