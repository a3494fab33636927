package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/store/storetest"
)

// TestIsNotFound: a missing row is recognized whichever driver reported it (bun over
// database/sql, pgx), wrapped or translated, and nothing else is.
func TestIsNotFound(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	ctx := context.Background()
	var n int
	bunErr := db.Bun.NewRaw("SELECT 1 WHERE false").Scan(ctx, &n)
	pgxErr := db.Pool.QueryRow(ctx, "SELECT 1 WHERE false").Scan(&n)
	sqlErr := db.SQL.QueryRowContext(ctx, "SELECT 1 WHERE false").Scan(&n)
	for name, err := range map[string]error{
		"bun": bunErr, "pgx": pgxErr, "database/sql": sqlErr,
		"wrapped": fmt.Errorf("load: %w", pgxErr), "translated": store.Translate(bunErr), "store": store.ErrNotFound,
	} {
		require.True(t, store.IsNotFound(err), name)
	}
	otherErr := db.Pool.QueryRow(ctx, "SELECT 1/0").Scan(&n)
	for name, err := range map[string]error{
		"nil": nil, "division by zero": otherErr, "unavailable": store.ErrUnavailable, "other": errors.New("no rows"),
	} {
		require.False(t, store.IsNotFound(err), name)
	}
}

// TestUUIDHelpers round-trips ids through pgx with the helpers: present, absent, and
// arrays, as the binary uuid type Postgres compares them as.
func TestUUIDHelpers(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	ctx := context.Background()
	id, other := uuid.New(), uuid.New()
	var (
		got        uuid.UUID
		some, none pgtype.UUID
		text       string
		count      int
	)
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT $1::uuid, $2::uuid, $3::uuid, $1::uuid::text, cardinality($4::uuid[])",
		store.UUID(id), store.NullUUID(&other), store.NullUUID(nil), store.UUIDs([]uuid.UUID{id, other, id})).
		Scan(store.UUIDDest(&got), &some, &none, &text, &count))
	require.Equal(t, id, got)
	require.Equal(t, id.String(), text)
	require.Equal(t, &other, store.UUIDPtr(some))
	require.Nil(t, store.UUIDPtr(none))
	require.Equal(t, 3, count)
}
