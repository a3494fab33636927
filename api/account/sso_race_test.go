package account_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// TestSSOFirstLoginsRacing: while another first login of the same new identity holds
// its just-provisioned account uncommitted, this login's own provisioning waits on the
// e-mail's unique key and then fails; it tries again, finds the account the other
// committed and logs into it instead of ending in SERVER_ERROR.
func TestSSOFirstLoginsRacing(t *testing.T) {
	t.Parallel()
	s := newSSOSetup(t, nil)
	h := s.h
	ctx := context.Background()

	authorize, cookie := begin(t, h, "/oauth2/authorization/"+s.cfgID)
	s.oidc.QueueUser(&mockoidc.MockUser{Subject: "sub-race", Email: "race@example.com", EmailVerified: true})
	back := atProvider(t, authorize)

	// The other login, provisioning in an open transaction.
	other, err := h.DB.Pool.Begin(ctx)
	require.NoError(t, err)
	defer other.Rollback(ctx)
	var otherID string
	require.NoError(t, other.QueryRow(ctx, `INSERT INTO users (email, display_name) VALUES ('race@example.com', 'race')
		RETURNING id`).Scan(&otherID))
	_, err = other.Exec(ctx, "INSERT INTO sso_identities (provider, subject, user_id) VALUES ($1, 'sub-race', $2)", s.cfgID, otherID)
	require.NoError(t, err)

	done := make(chan url.Values, 1)
	go func() { done <- callback(t, h, back, cookie) }()
	apitest.Eventually(t, 10*time.Second, func() bool {
		return h.Count(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO "users"%'`) == 1
	}, "the callback's provisioning waits on the other login's account")
	require.NoError(t, other.Commit(ctx))

	var end url.Values
	select {
	case end = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the callback did not finish")
	}
	require.Empty(t, end.Get("error"))
	r := exchange(h, end.Get("code"))
	require.Equal(t, 200, r.Status, "%s", r.Body)
	id, email := meEmail(t, h, r.JSON(t)["accessToken"].(string))
	require.Equal(t, otherID, id, "the account the other login made")
	require.Equal(t, "race@example.com", email)
	require.Equal(t, 1, h.Count("SELECT count(*) FROM users WHERE email = 'race@example.com'"))
}
