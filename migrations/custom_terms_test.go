package migrations_test

import (
	"context"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCustomTermsBackfill: migration 0028 on a database that already holds custom field
// values (written under 0027, which kept custom_keys) gives every issue its terms, one
// per compared value in field order, a number without trailing zeros, a date as
// YYYY-MM-DD, TEXT left out, and none for an issue without values; custom_keys is gone
// and the trigger keeps the terms from then on. Migration 0029 then copies them, as
// bytes, into issue_filter_terms, which the trigger keeps as well.
func TestCustomTermsBackfill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, apply, later := migratedBefore(t, 28)
	terms, narrow := later[28], later[29]
	require.Equal(t, 28, terms.Version)
	require.Equal(t, 29, narrow.Version)

	_, err := pool.Exec(ctx, migrationProject+`
		INSERT INTO issues (id, project_id, number, key, title, status_id, reporter_id)
		SELECT ('00000000-0000-0000-0000-00000000001' || g)::uuid, '00000000-0000-0000-0000-000000000002', g, 'MIG-' || g, 'I',
			'00000000-0000-0000-0000-000000000004', '00000000-0000-0000-0000-000000000001'
		FROM generate_series(1, 2) AS g;
		INSERT INTO custom_fields (id, project_id, name, type) VALUES
			('00000000-0000-0000-0000-0000000000a1', '00000000-0000-0000-0000-000000000002', 'Points', 'NUMBER'),
			('00000000-0000-0000-0000-0000000000a2', '00000000-0000-0000-0000-000000000002', 'Due', 'DATE'),
			('00000000-0000-0000-0000-0000000000a3', '00000000-0000-0000-0000-000000000002', 'Sev', 'DROPDOWN'),
			('00000000-0000-0000-0000-0000000000a4', '00000000-0000-0000-0000-000000000002', 'Blocked', 'CHECKBOX'),
			('00000000-0000-0000-0000-0000000000a5', '00000000-0000-0000-0000-000000000002', 'Notes', 'TEXT');
		INSERT INTO custom_field_options (id, field_id, label) VALUES
			('00000000-0000-0000-0000-0000000000b1', '00000000-0000-0000-0000-0000000000a3', 'High');
		INSERT INTO custom_field_values (issue_id, field_id, number_value, date_value, option_id, bool_value, text_value) VALUES
			('00000000-0000-0000-0000-000000000011', '00000000-0000-0000-0000-0000000000a1', 7.50, NULL, NULL, NULL, NULL),
			('00000000-0000-0000-0000-000000000011', '00000000-0000-0000-0000-0000000000a2', NULL, '2026-03-01', NULL, NULL, NULL),
			('00000000-0000-0000-0000-000000000011', '00000000-0000-0000-0000-0000000000a3', NULL, NULL, '00000000-0000-0000-0000-0000000000b1', NULL, NULL),
			('00000000-0000-0000-0000-000000000011', '00000000-0000-0000-0000-0000000000a4', NULL, NULL, NULL, false, NULL),
			('00000000-0000-0000-0000-000000000011', '00000000-0000-0000-0000-0000000000a5', NULL, NULL, NULL, NULL, 'a=b');`)
	require.NoError(t, err)
	apply(terms)

	read := func(issue string) []string {
		t.Helper()
		var got []string
		require.NoError(t, pool.QueryRow(ctx, "SELECT custom_terms FROM issues WHERE id = $1", issue).Scan(&got))
		return got
	}
	require.Equal(t, []string{
		"00000000-0000-0000-0000-0000000000a1=7.5",
		"00000000-0000-0000-0000-0000000000a2=2026-03-01",
		"00000000-0000-0000-0000-0000000000a3=00000000-0000-0000-0000-0000000000b1",
		"00000000-0000-0000-0000-0000000000a4=false",
	}, read("00000000-0000-0000-0000-000000000011"))
	require.Nil(t, read("00000000-0000-0000-0000-000000000012"), "no values, no terms")
	var keys int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM information_schema.columns WHERE table_name = 'issues' AND column_name = 'custom_keys'").Scan(&keys))
	require.Zero(t, keys)

	_, err = pool.Exec(ctx, `INSERT INTO custom_field_values (issue_id, field_id, bool_value)
		VALUES ('00000000-0000-0000-0000-000000000012', '00000000-0000-0000-0000-0000000000a4', true)`)
	require.NoError(t, err)
	require.Equal(t, []string{"00000000-0000-0000-0000-0000000000a4=true"}, read("00000000-0000-0000-0000-000000000012"))

	// 0029 copies the terms as bytes into issue_filter_terms, one row per issue with
	// compared values, and the trigger keeps that copy too.
	apply(narrow)
	readNarrow := func(issue string) []string {
		t.Helper()
		var got []string
		require.NoError(t, pool.QueryRow(ctx, `SELECT coalesce(array_agg(encode(term, 'hex') ORDER BY n), '{}')
			FROM issue_filter_terms AS t, unnest(t.terms) WITH ORDINALITY AS u (term, n) WHERE t.issue_id = $1`, issue).Scan(&got))
		return got
	}
	const f = "000000000000000000000000000000a"
	require.Equal(t, []string{
		f + "1" + hex.EncodeToString([]byte("7.5")),
		f + "2" + hex.EncodeToString([]byte("2026-03-01")),
		f + "3" + "000000000000000000000000000000b1",
		f + "4" + "00",
	}, readNarrow("00000000-0000-0000-0000-000000000011"))
	require.Equal(t, []string{f + "4" + "01"}, readNarrow("00000000-0000-0000-0000-000000000012"))
	_, err = pool.Exec(ctx, `DELETE FROM custom_field_values WHERE issue_id = '00000000-0000-0000-0000-000000000012'`)
	require.NoError(t, err)
	require.Empty(t, readNarrow("00000000-0000-0000-0000-000000000012"), "no values, no row")
	var rows int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM issue_filter_terms").Scan(&rows))
	require.Equal(t, 1, rows)
}
