package webhook

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/store"
)

// seedWebhook creates a user, a project of theirs and one enabled webhook of it
// subscribed to issue.created, and returns the webhook's id.
func seedWebhook(t *testing.T, db *store.DB) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	tag := strings.ToUpper(strings.ReplaceAll(uuid.NewString(), "-", "")[:8])
	var userID, projectID, hookID uuid.UUID
	require.NoError(t, db.Pool.QueryRow(ctx, "INSERT INTO users (email, display_name) VALUES ($1, 'U') RETURNING id",
		strings.ToLower(tag)+"@example.com").Scan(&userID))
	require.NoError(t, db.Pool.QueryRow(ctx, "INSERT INTO projects (key, name, owner_id) VALUES ($1, 'P', $2) RETURNING id",
		"W"+tag, userID).Scan(&projectID))
	require.NoError(t, db.Pool.QueryRow(ctx, `INSERT INTO webhooks (project_id, url, secret, events)
		VALUES ($1, 'https://203.0.113.10/', 's', '{issue.created}') RETURNING id`, projectID).Scan(&hookID))
	return hookID
}

// SeedWebhook is seedWebhook for the package's external tests.
var SeedWebhook = seedWebhook

// OldDeliveriesSQL is the cleanup's selection, for its plan test.
var OldDeliveriesSQL = oldDeliveriesSQL
