package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/store/storetest"
	"github.com/taskweave/taskweave/workers"
)

// twoReplicas are two API servers on one fresh database, as two replicas, and a project
// made through the first.
func twoReplicas(t *testing.T) (a, b *apitest.Harness, f *apitest.Project) {
	t.Helper()
	db := storetest.NewDB(t)
	a = apitest.New(t, apitest.Options{DB: db})
	b = apitest.New(t, apitest.Options{DB: db})
	return a, b, apitest.NewProject(t, a)
}

// TestIdempotentRetryAcrossReplicas: a POST retried with its Idempotency-Key on another
// replica answers the first reply again without a second issue; another body with the
// key is 422, another caller's same key is their own.
func TestIdempotentRetryAcrossReplicas(t *testing.T) {
	t.Parallel()
	a, b, f := twoReplicas(t)
	body := map[string]any{"title": "Retried create"}
	key := []string{"Idempotency-Key", "create-1"}

	first := a.Do("POST", f.Path("/issues"), body, f.Owner.Access, key...)
	require.Equal(t, http.StatusCreated, first.Status, "%s", first.Body)
	require.Empty(t, first.Header.Get("Idempotent-Replayed"))
	again := b.Do("POST", f.Path("/issues"), body, f.Owner.Access, key...)
	require.Equal(t, http.StatusCreated, again.Status, "%s", again.Body)
	require.JSONEq(t, string(first.Body), string(again.Body))
	require.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
	require.Contains(t, again.Header.Get("Content-Type"), "application/json")
	require.Equal(t, 1, a.Count("SELECT count(*) FROM issues WHERE project_id = $1 AND title = 'Retried create'", f.ProjectID))

	// The quoted form of the draft is the same key.
	quoted := a.Do("POST", f.Path("/issues"), body, f.Owner.Access, "Idempotency-Key", `"create-1"`)
	require.JSONEq(t, string(first.Body), string(quoted.Body))

	other := b.Do("POST", f.Path("/issues"), map[string]any{"title": "Another"}, f.Owner.Access, key...)
	apitest.RequireProblem(t, other, http.StatusUnprocessableEntity, "UNPROCESSABLE_ENTITY", apitest.Reason("IDEMPOTENCY_KEY_REUSED"))
	require.Equal(t, 0, a.Count("SELECT count(*) FROM issues WHERE project_id = $1 AND title = 'Another'", f.ProjectID))

	// Keys are per caller: the member's "create-1" is theirs.
	mine := a.Do("POST", f.Path("/issues"), body, f.Member.Access, key...)
	require.Equal(t, http.StatusCreated, mine.Status, "%s", mine.Body)
	require.NotEqual(t, first.JSON(t)["id"], mine.JSON(t)["id"])

	// Without the header nothing changes: two creates are two issues.
	for range 2 {
		require.Equal(t, http.StatusCreated, a.Do("POST", f.Path("/issues"), map[string]any{"title": "Plain"}, f.Owner.Access).Status)
	}
	require.Equal(t, 2, a.Count("SELECT count(*) FROM issues WHERE project_id = $1 AND title = 'Plain'", f.ProjectID))

	bad := a.Do("POST", f.Path("/issues"), body, f.Owner.Access, "Idempotency-Key", strings.Repeat("k", 256))
	apitest.RequireProblem(t, bad, http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("INVALID_IDEMPOTENCY_KEY"))
}

// TestIdempotentRetryWhileRunning: a retry that arrives while the first request still
// runs on another replica is 409 IDEMPOTENCY_IN_PROGRESS; once the first finishes, the
// retry answers its reply.
func TestIdempotentRetryWhileRunning(t *testing.T) {
	t.Parallel()
	a, b, f := twoReplicas(t)
	db := a.DB
	ctx := context.Background()

	// Issue creation numbers the issue under the project row's lock: holding it keeps
	// the first request running.
	lock, err := db.Pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = lock.Rollback(ctx) }()
	_, err = lock.Exec(ctx, "SELECT 1 FROM projects WHERE id = $1 FOR UPDATE", f.ProjectID)
	require.NoError(t, err)

	body := map[string]any{"title": "Slow create"}
	key := []string{"Idempotency-Key", "slow-1"}
	done := make(chan *apitest.Response, 1)
	go func() { done <- a.Do("POST", f.Path("/issues"), body, f.Owner.Access, key...) }()
	apitest.Eventually(t, 5*time.Second, func() bool {
		return a.Count("SELECT count(*) FROM idempotency_keys WHERE key = 'slow-1' AND status IS NULL") == 1
	}, "the first request holds the key")

	r := b.Do("POST", f.Path("/issues"), body, f.Owner.Access, key...)
	apitest.RequireProblem(t, r, http.StatusConflict, "CONFLICT", apitest.Reason("IDEMPOTENCY_IN_PROGRESS"))

	require.NoError(t, lock.Rollback(ctx))
	first := <-done
	require.Equal(t, http.StatusCreated, first.Status, "%s", first.Body)
	again := b.Do("POST", f.Path("/issues"), body, f.Owner.Access, key...)
	require.Equal(t, http.StatusCreated, again.Status)
	require.JSONEq(t, string(first.Body), string(again.Body))
	require.Equal(t, 1, a.Count("SELECT count(*) FROM issues WHERE project_id = $1 AND title = 'Slow create'", f.ProjectID))
}

// TestIdempotencyKeysExpire: the periodic job deletes keys past their 24 hours, after
// which the key starts anew; a request refused before it did anything (5xx, 429) does
// not keep its key, one refused for its content does.
func TestIdempotencyKeysExpire(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewProject(t, h)
	ctx := context.Background()
	body := map[string]any{"title": "Expiring"}
	key := []string{"Idempotency-Key", "exp-1"}
	require.Equal(t, http.StatusCreated, h.Do("POST", f.Path("/issues"), body, f.Owner.Access, key...).Status)
	require.Equal(t, http.StatusCreated, h.Do("POST", f.Path("/issues"), body, f.Owner.Access, "Idempotency-Key", "fresh").Status)

	_, err := h.DB.Pool.Exec(ctx, "UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = 'exp-1'")
	require.NoError(t, err)
	w := &workers.IdempotencyExpiryWorker{DB: h.DB.Bun}
	require.NoError(t, w.Work(ctx, &river.Job[workers.IdempotencyExpiryArgs]{}))
	require.Equal(t, 0, h.Count("SELECT count(*) FROM idempotency_keys WHERE key = 'exp-1'"))
	require.Equal(t, 1, h.Count("SELECT count(*) FROM idempotency_keys WHERE key = 'fresh'"), "a key in its life stays")

	require.Equal(t, http.StatusCreated, h.Do("POST", f.Path("/issues"), body, f.Owner.Access, key...).Status)
	require.Equal(t, 3, h.Count("SELECT count(*) FROM issues WHERE project_id = $1 AND title = 'Expiring'", f.ProjectID),
		"exp-1, fresh and exp-1 anew")

	// A refusal for the request's content is the answer to keep: the retry gets it again.
	blank := map[string]any{"title": ""}
	r := h.Do("POST", f.Path("/issues"), blank, f.Owner.Access, "Idempotency-Key", "blank-1")
	require.Equal(t, http.StatusBadRequest, r.Status)
	again := h.Do("POST", f.Path("/issues"), blank, f.Owner.Access, "Idempotency-Key", "blank-1")
	require.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
	require.JSONEq(t, string(r.Body), string(again.Body))
}
