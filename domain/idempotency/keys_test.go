package idempotency_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/idempotency"
	"github.com/taskweave/taskweave/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// TestKeysLifecycle: a claimed key answers in progress, then its kept reply (Location
// included); another request with it is refused; a released key runs again; a running
// key whose lease ran out is taken over by the same request only; a reply not kept
// answers ErrNotStored.
func TestKeysLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tx, err := storetest.PackageDB(t).Bun.BeginTx(ctx, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback() })
	keys := idempotency.NewKeys(tx)
	scope := "JWT:" + uuid.NewString() + ":"
	r := idempotency.Request{Scope: scope, Key: "k1", Fingerprint: idempotency.Fingerprint("POST", "/a", []byte(`{}`))}

	kept, err := keys.Begin(ctx, r, time.Minute)
	require.NoError(t, err)
	require.Nil(t, kept, "the first request holds the key")
	_, err = keys.Begin(ctx, r, time.Minute)
	require.ErrorIs(t, err, idempotency.ErrInProgress)

	require.NoError(t, keys.Finish(ctx, r, idempotency.Response{Status: 201, ContentType: "application/json",
		Location: "/a/1", Body: []byte(`{"id":1}`), Stored: true}))
	kept, err = keys.Begin(ctx, r, time.Minute)
	require.NoError(t, err)
	require.Equal(t, &idempotency.Response{Status: 201, ContentType: "application/json", Location: "/a/1",
		Body: []byte(`{"id":1}`), Stored: true}, kept)

	other := r
	other.Fingerprint = idempotency.Fingerprint("POST", "/a", []byte(`{"x":1}`))
	_, err = keys.Begin(ctx, other, time.Minute)
	require.ErrorIs(t, err, idempotency.ErrKeyReused)

	// Released: the next request runs.
	r2 := idempotency.Request{Scope: scope, Key: "k2", Fingerprint: r.Fingerprint}
	_, err = keys.Begin(ctx, r2, time.Minute)
	require.NoError(t, err)
	require.NoError(t, keys.Release(ctx, r2))
	kept, err = keys.Begin(ctx, r2, time.Minute)
	require.NoError(t, err)
	require.Nil(t, kept)

	// A lease that ran out: the same request takes the key over, another does not.
	_, err = tx.ExecContext(ctx, "UPDATE idempotency_keys SET lease_until = now() - interval '1 second' WHERE scope = ? AND key = 'k2'", scope)
	require.NoError(t, err)
	other.Key = "k2"
	_, err = keys.Begin(ctx, other, time.Minute)
	require.ErrorIs(t, err, idempotency.ErrKeyReused)
	kept, err = keys.Begin(ctx, r2, time.Minute)
	require.NoError(t, err)
	require.Nil(t, kept, "taken over")

	// A reply too large to keep: the key stays used.
	require.NoError(t, keys.Finish(ctx, r2, idempotency.Response{Status: 200, Stored: false}))
	_, err = keys.Begin(ctx, r2, time.Minute)
	require.ErrorIs(t, err, idempotency.ErrNotStored)

	// An empty kept body is a kept reply, not a missing one.
	r3 := idempotency.Request{Scope: scope, Key: "k3", Fingerprint: r.Fingerprint}
	_, err = keys.Begin(ctx, r3, time.Minute)
	require.NoError(t, err)
	require.NoError(t, keys.Finish(ctx, r3, idempotency.Response{Status: 204, Stored: true}))
	kept, err = keys.Begin(ctx, r3, time.Minute)
	require.NoError(t, err)
	require.Equal(t, 204, kept.Status)
	require.Empty(t, kept.Body)
}
