package migrations_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/migrations"
)

// TestCodeChecksumIgnoresCommentsOnly: comments and layout do not change a migration's
// code checksum; anything inside quotes, dollar-quoted bodies included, does.
func TestCodeChecksumIgnoresCommentsOnly(t *testing.T) {
	t.Parallel()
	sum := func(sql string) string { return migrations.Migration{SQL: sql}.CodeChecksum() }
	base := sum("CREATE TABLE t (a text DEFAULT '-- x');\nCREATE FUNCTION f() RETURNS int AS $$ SELECT 1 -- one\n $$ LANGUAGE sql;")
	for _, same := range []string{
		"-- a header\nCREATE TABLE t (a text DEFAULT '-- x'); /* a /* nested */ note */\nCREATE FUNCTION f() RETURNS int AS $$ SELECT 1 -- one\n $$ LANGUAGE sql;",
		"CREATE   TABLE t\n\t(a text DEFAULT '-- x');   CREATE FUNCTION f() RETURNS int AS $$ SELECT 1 -- one\n $$ LANGUAGE sql; -- trailing",
	} {
		require.Equal(t, base, sum(same), same)
	}
	for _, other := range []string{
		"CREATE TABLE t (a text DEFAULT '-- y');\nCREATE FUNCTION f() RETURNS int AS $$ SELECT 1 -- one\n $$ LANGUAGE sql;",
		"CREATE TABLE t (a text DEFAULT '-- x');\nCREATE FUNCTION f() RETURNS int AS $$ SELECT 1 -- uno\n $$ LANGUAGE sql;",
		"CREATE TABLE t (b text DEFAULT '-- x');\nCREATE FUNCTION f() RETURNS int AS $$ SELECT 1 -- one\n $$ LANGUAGE sql;",
	} {
		require.NotEqual(t, base, sum(other), other)
	}
}

// TestAppliedMigrationsCannotDrift: schema_migrations records each migration's
// checksums; a database whose applied migration differs from the binary's is refused
// by migrate (statements: always; comments alone: unless accepted, which records the
// new text) and is not ready when its statements differ. Rows from before checksums
// get them recorded.
func TestAppliedMigrationsCannotDrift(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, err := pgxpool.NewWithConfig(ctx, emptyDB(t))
	require.NoError(t, err)
	defer pool.Close()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	require.NoError(t, migrations.Apply(ctx, pool, log))
	all, err := migrations.All()
	require.NoError(t, err)
	m := all[len(all)/2]
	recorded := func() (string, string) {
		var sum, code string
		require.NoError(t, pool.QueryRow(ctx, "SELECT checksum, code_checksum FROM schema_migrations WHERE version = $1", m.Version).Scan(&sum, &code))
		return sum, code
	}
	sum, code := recorded()
	require.Equal(t, m.Checksum(), sum)
	require.Equal(t, m.CodeChecksum(), code)
	pretend := func(applied migrations.Migration) {
		_, err := pool.Exec(ctx, "UPDATE schema_migrations SET checksum = $2, code_checksum = $3 WHERE version = $1",
			m.Version, applied.Checksum(), applied.CodeChecksum())
		require.NoError(t, err)
	}

	// The database applied an older text whose comments differ.
	pretend(migrations.Migration{SQL: "-- an older note\n" + m.SQL})
	err = migrations.Apply(ctx, pool, log)
	require.ErrorIs(t, err, migrations.ErrEdited)
	require.ErrorContains(t, err, m.Name)
	require.ErrorContains(t, err, "TW_MIGRATE_ACCEPT_COMMENT_EDITS")
	require.NoError(t, migrations.Ready(ctx, pool), "the same statements: ready")
	require.NoError(t, migrations.ApplyWith(ctx, pool, log, migrations.Options{AcceptCommentEdits: true}))
	sum, _ = recorded()
	require.Equal(t, m.Checksum(), sum, "the accepted text is recorded")
	require.NoError(t, migrations.Apply(ctx, pool, log))

	// The database applied other statements: refused, accepted or not, and not ready.
	pretend(migrations.Migration{SQL: m.SQL + "\nCREATE INDEX extra ON users (email);"})
	for _, opts := range []migrations.Options{{}, {AcceptCommentEdits: true}} {
		err = migrations.ApplyWith(ctx, pool, log, opts)
		require.ErrorIs(t, err, migrations.ErrEdited)
		require.ErrorContains(t, err, m.Name)
		require.NotContains(t, err.Error(), "TW_MIGRATE_ACCEPT_COMMENT_EDITS")
	}
	require.ErrorIs(t, migrations.Ready(ctx, pool), migrations.ErrEdited)

	// A row written before checksums were recorded gets them.
	_, err = pool.Exec(ctx, "UPDATE schema_migrations SET checksum = NULL, code_checksum = NULL")
	require.NoError(t, err)
	require.NoError(t, migrations.Apply(ctx, pool, log))
	sum, code = recorded()
	require.Equal(t, m.Checksum(), sum)
	require.Equal(t, m.CodeChecksum(), code)
}
