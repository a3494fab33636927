package migrations_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestIssueSearchBackfill: migration 0041 on a database that already holds issues and
// comments gives each issue its documents (a deleted comment left out), and its triggers
// keep them from then on.
func TestIssueSearchBackfill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, apply, later := migratedBefore(t, 41)
	search := later[41]
	require.Equal(t, 41, search.Version)

	_, err := pool.Exec(ctx, migrationProject+`
		INSERT INTO issues (id, project_id, number, key, title, description, status_id, reporter_id, updated_at) VALUES
			('00000000-0000-0000-0000-000000000011', '00000000-0000-0000-0000-000000000002', 1, 'MIG-1', 'Running tests',
			 'Drei Läufe', '00000000-0000-0000-0000-000000000004', '00000000-0000-0000-0000-000000000001', now() - interval '2 days'),
			('00000000-0000-0000-0000-000000000012', '00000000-0000-0000-0000-000000000002', 2, 'MIG-2', 'Other', NULL,
			 '00000000-0000-0000-0000-000000000004', '00000000-0000-0000-0000-000000000001', now() - interval '2 days');
		INSERT INTO comments (issue_id, body, updated_at, deleted_at) VALUES
			('00000000-0000-0000-0000-000000000012', 'a giraffe', now() - interval '2 days', NULL),
			('00000000-0000-0000-0000-000000000012', 'an elephant', now() - interval '2 days', now() - interval '2 days');`)
	require.NoError(t, err)
	apply(search)

	match := func(doc, query string) []string {
		t.Helper()
		rows, err := pool.Query(ctx, "SELECT key FROM issue_search WHERE "+doc+" @@ "+query+" ORDER BY key")
		require.NoError(t, err)
		keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return keys
	}
	require.Equal(t, []string{"MIG-1"}, match("doc_en", "to_tsquery('english', 'run')"))
	require.Equal(t, []string{"MIG-1"}, match("doc_de", "to_tsquery('german', 'Lauf')"))
	require.Equal(t, []string{"MIG-2"}, match("doc_en", "to_tsquery('english', 'giraffe')"))
	require.Empty(t, match("doc_en", "to_tsquery('english', 'elephant')"), "a deleted comment is left out")

	_, err = pool.Exec(ctx, `INSERT INTO comments (issue_id, body) VALUES ('00000000-0000-0000-0000-000000000011', 'zebra')`)
	require.NoError(t, err)
	require.Equal(t, []string{"MIG-1"}, match("doc_en", "to_tsquery('english', 'zebra')"), "the triggers keep the documents")
}

// TestIssueSearchHeadBackfill: migration 0049 gives each existing issue its head (key,
// title and description, no comment), and the issue triggers keep it from then on.
func TestIssueSearchHeadBackfill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, apply, later := migratedBefore(t, 49)
	head := later[49]
	require.Equal(t, 49, head.Version)

	_, err := pool.Exec(ctx, migrationProject+`
		INSERT INTO issues (id, project_id, number, key, title, description, status_id, reporter_id) VALUES
			('00000000-0000-0000-0000-000000000011', '00000000-0000-0000-0000-000000000002', 1, 'MIG-1', 'Running tests',
			 'Drei Läufe', '00000000-0000-0000-0000-000000000004', '00000000-0000-0000-0000-000000000001');
		INSERT INTO comments (issue_id, body) VALUES ('00000000-0000-0000-0000-000000000011', 'a giraffe');`)
	require.NoError(t, err)
	apply(head)

	match := func(query string) []string {
		t.Helper()
		rows, err := pool.Query(ctx, "SELECT key FROM issue_search_head WHERE "+query+" ORDER BY key")
		require.NoError(t, err)
		keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return keys
	}
	require.Equal(t, []string{"MIG-1"}, match("head_en @@ to_tsquery('english', 'run')"))
	require.Equal(t, []string{"MIG-1"}, match("head_de @@ to_tsquery('german', 'Lauf')"))
	require.Empty(t, match("head_en @@ to_tsquery('english', 'giraffe')"), "no comment in the head")

	_, err = pool.Exec(ctx, `UPDATE issues SET title = 'Zebra crossing' WHERE number = 1;
		INSERT INTO issues (project_id, number, key, title, status_id, reporter_id) VALUES
			('00000000-0000-0000-0000-000000000002', 2, 'MIG-2', 'Another zebra', '00000000-0000-0000-0000-000000000004',
			 '00000000-0000-0000-0000-000000000001')`)
	require.NoError(t, err)
	require.Equal(t, []string{"MIG-1", "MIG-2"}, match("head_en @@ to_tsquery('english', 'zebra')"), "the triggers keep the heads")
	require.Empty(t, match("head_en @@ to_tsquery('english', 'run')"))
	_, err = pool.Exec(ctx, `DELETE FROM issues WHERE number = 2`)
	require.NoError(t, err)
	require.Equal(t, []string{"MIG-1"}, match("head_en @@ to_tsquery('english', 'zebra')"), "a deleted issue loses its head")
}
