package account_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api"
	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/domain/sso"
)

// TestSSOPublicListEmpty: the login page calls the public list on every load; with
// nothing configured it is 200 [] without credentials.
func TestSSOPublicListEmpty(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	r := h.Do("GET", "/api/v1/admin/sso/public", nil, "")
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.JSONEq(t, `[]`, string(r.Body))
}

func TestSSOConfigCRUD(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	admin := h.Register("ssoadmin")
	h.MakeAdmin(admin)
	member := h.Register("ssomember")
	h.SetSystemRole(member, "MEMBER")
	body := map[string]any{"name": "Acme Okta", "issuerUrl": "https://acme.okta.example/oauth2", "clientId": "tw-client",
		"clientSecret": "s3cret-plaintext-value"}

	require.Equal(t, http.StatusUnauthorized, h.Do("POST", "/api/v1/admin/sso", body, "").Status)
	require.Equal(t, http.StatusUnauthorized, h.Do("GET", "/api/v1/admin/sso", nil, "").Status)
	forbidden := h.Do("POST", "/api/v1/admin/sso", body, member.Access)
	require.Equal(t, http.StatusForbidden, forbidden.Status)
	require.Equal(t, "ADMIN_ONLY", forbidden.JSON(t)["reason"])
	require.Equal(t, http.StatusForbidden, h.Do("GET", "/api/v1/admin/sso", nil, member.Access).Status)

	// A missing secret is a 400 naming the member, never a 500.
	noSecret := h.Do("POST", "/api/v1/admin/sso", map[string]any{"name": "x", "issuerUrl": "https://x.example", "clientId": "c"}, admin.Access)
	require.Equal(t, http.StatusBadRequest, noSecret.Status, "%s", noSecret.Body)
	m := noSecret.JSON(t)
	require.Equal(t, "BAD_REQUEST", m["code"])
	require.Equal(t, "MISSING_FIELD", m["reason"])
	require.Contains(t, m["message"], "clientSecret")

	bad := h.Do("POST", "/api/v1/admin/sso", map[string]any{"name": "  ", "issuerUrl": "ftp://x.example/?q=1",
		"clientId": "c", "clientSecret": " "}, admin.Access)
	require.Equal(t, http.StatusBadRequest, bad.Status, "%s", bad.Body)
	m = bad.JSON(t)
	require.Equal(t, "VALIDATION_ERROR", m["code"])
	details := m["details"].(map[string]any)
	require.Contains(t, details, "name")
	require.Contains(t, details, "issuerUrl")
	require.Contains(t, details, "clientSecret")
	require.NotContains(t, details, "clientId")
	long := h.Do("POST", "/api/v1/admin/sso", map[string]any{"name": string(make([]byte, 101)), "issuerUrl": "https://x.example",
		"clientId": "c", "clientSecret": "s"}, admin.Access)
	require.Equal(t, http.StatusBadRequest, long.Status)

	created := h.Do("POST", "/api/v1/admin/sso", body, admin.Access)
	require.Equal(t, http.StatusCreated, created.Status, "%s", created.Body)
	cfg := created.JSON(t)
	id := cfg["id"].(string)
	require.Equal(t, "Acme Okta", cfg["name"])
	require.Equal(t, "https://acme.okta.example/oauth2", cfg["issuerUrl"])
	require.Equal(t, "tw-client", cfg["clientId"])
	require.Equal(t, true, cfg["enabled"])
	require.Equal(t, true, cfg["autoProvision"])
	require.Equal(t, true, cfg["hasSecret"])
	require.NotContains(t, cfg, "clientSecret")
	require.NotContains(t, string(created.Body), "s3cret-plaintext-value")

	// At rest the secret is AES-GCM under the JWT secret's SHA-256, not the plaintext.
	var sealed string
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(), "SELECT client_secret_enc FROM sso_configs WHERE id = $1", id).Scan(&sealed))
	require.NotContains(t, sealed, "s3cret-plaintext-value")
	box, err := sso.NewSecretBox(apitest.Secret)
	require.NoError(t, err)
	plain, err := box.Open(sealed)
	require.NoError(t, err)
	require.Equal(t, "s3cret-plaintext-value", plain)
	other, err := sso.NewSecretBox("another-secret-another-secret-another")
	require.NoError(t, err)
	_, err = other.Open(sealed)
	require.Error(t, err, "another key cannot open it")

	list := h.Do("GET", "/api/v1/admin/sso", nil, admin.Access)
	require.Equal(t, http.StatusOK, list.Status)
	items := list.Array(t)
	require.Len(t, items, 1)
	require.Equal(t, id, items[0].(map[string]any)["id"])
	require.NotContains(t, string(list.Body), "clientSecret")
	require.Equal(t, http.StatusOK, h.Do("GET", "/api/v1/admin/sso/"+id, nil, admin.Access).Status)

	pub := h.Do("GET", "/api/v1/admin/sso/public", nil, "")
	require.Equal(t, http.StatusOK, pub.Status)
	require.JSONEq(t, `[{"id":"`+id+`","name":"Acme Okta"}]`, string(pub.Body))

	// Disabling hides it from the login page; an absent secret keeps the stored one.
	up := h.Do("PUT", "/api/v1/admin/sso/"+id, map[string]any{"enabled": false}, admin.Access)
	require.Equal(t, http.StatusOK, up.Status, "%s", up.Body)
	require.Equal(t, false, up.JSON(t)["enabled"])
	require.Equal(t, "Acme Okta", up.JSON(t)["name"])
	require.Equal(t, 1, h.Count("SELECT count(*) FROM sso_configs WHERE id = $1 AND client_secret_enc = $2", id, sealed))
	require.JSONEq(t, `[]`, string(h.Do("GET", "/api/v1/admin/sso/public", nil, "").Body))
	up = h.Do("PUT", "/api/v1/admin/sso/"+id, map[string]any{"clientSecret": "rotated-secret"}, admin.Access)
	require.Equal(t, http.StatusOK, up.Status)
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(), "SELECT client_secret_enc FROM sso_configs WHERE id = $1", id).Scan(&sealed))
	plain, err = box.Open(sealed)
	require.NoError(t, err)
	require.Equal(t, "rotated-secret", plain)
	require.Equal(t, http.StatusBadRequest, h.Do("PUT", "/api/v1/admin/sso/"+id, map[string]any{"clientSecret": ""}, admin.Access).Status)

	require.Equal(t, http.StatusBadRequest, h.Do("GET", "/api/v1/admin/sso/not-a-uuid", nil, admin.Access).Status)
	require.Equal(t, http.StatusNoContent, h.Do("DELETE", "/api/v1/admin/sso/"+id, nil, admin.Access).Status)
	gone := h.Do("DELETE", "/api/v1/admin/sso/"+id, nil, admin.Access)
	require.Equal(t, http.StatusNotFound, gone.Status)
	require.Equal(t, "SSO_CONFIG_NOT_FOUND", gone.JSON(t)["reason"])
	require.Equal(t, http.StatusNotFound, h.Do("PUT", "/api/v1/admin/sso/"+id, map[string]any{"enabled": true}, admin.Access).Status)
	require.Equal(t, http.StatusNotFound, h.Do("GET", "/api/v1/admin/sso/"+id, nil, admin.Access).Status)
}

// TestSSOPublicListBuiltIns: configured built-in providers follow the enabled configs.
func TestSSOPublicListBuiltIns(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	admin := h.Register("ssoadmin")
	h.MakeAdmin(admin)
	created := h.Do("POST", "/api/v1/admin/sso", map[string]any{"name": "Zitadel", "issuerUrl": "https://id.example",
		"clientId": "c", "clientSecret": "s"}, admin.Access)
	require.Equal(t, http.StatusCreated, created.Status)
	id := created.JSON(t)["id"].(string)

	github := apitest.New(t, apitest.Options{DB: h.DB, Configure: func(s *api.Settings) {
		s.OAuthGitHub = sso.GitHub{ClientID: "gh", ClientSecret: "ghs"}
	}})
	require.JSONEq(t, `[{"id":"`+id+`","name":"Zitadel"},{"id":"github","name":"GitHub"}]`,
		string(github.Do("GET", "/api/v1/admin/sso/public", nil, "").Body))
	both := apitest.New(t, apitest.Options{DB: h.DB, Configure: func(s *api.Settings) {
		s.OAuthGitHub = sso.GitHub{ClientID: "gh", ClientSecret: "ghs"}
		s.OAuthGoogle = sso.Google{ClientID: "go", ClientSecret: "gos"}
	}})
	require.JSONEq(t, `[{"id":"`+id+`","name":"Zitadel"},{"id":"github","name":"GitHub"},{"id":"google","name":"Google"}]`,
		string(both.Do("GET", "/api/v1/admin/sso/public", nil, "").Body))
}
