package store_test

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/store"
)

// TestTranslateTransientFailures: a deadlock, a serialization failure or a server going
// away rolled the transaction back; the API answers 503 UNAVAILABLE (try again), never
// a 500.
func TestTranslateTransientFailures(t *testing.T) {
	for _, code := range []string{"40P01", "40001", "57P01", "53300"} {
		require.ErrorIs(t, store.Translate(&pgconn.PgError{Code: code}), store.ErrUnavailable, code)
	}
	require.False(t, errors.Is(store.Translate(&pgconn.PgError{Code: "42P01"}), store.ErrUnavailable), "an undefined table is a bug")
}
