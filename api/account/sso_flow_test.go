package account_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/oauth2-proxy/mockoidc"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api"
	"github.com/taskweave/taskweave/api/apitest"
)

// noRedirects is the browser of these tests: it stops at every 302 so each hop can be
// checked.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// startOIDC runs a real OIDC provider (discovery, JWKS, authorize, token) on 127.0.0.1.
func startOIDC(t *testing.T) *mockoidc.MockOIDC {
	t.Helper()
	m, err := mockoidc.Run()
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Shutdown() })
	return m
}

// allowPrivateIdP is the operator's allowance (TW_SSO_ALLOW_PRIVATE) the loopback
// providers of these tests need.
func allowPrivateIdP(s *api.Settings) { s.SSOAllowPrivate = true }

// ssoSetup is a fresh database with an ADMIN and an SSO config for a running provider.
type ssoSetup struct {
	h     *apitest.Harness
	admin apitest.User
	oidc  *mockoidc.MockOIDC
	cfgID string
}

func newSSOSetup(t *testing.T, config map[string]any) *ssoSetup {
	t.Helper()
	h := apitest.New(t, apitest.Options{Configure: allowPrivateIdP})
	admin := h.Register("ssoadmin")
	h.MakeAdmin(admin)
	m := startOIDC(t)
	return &ssoSetup{h: h, admin: admin, oidc: m, cfgID: createSSOConfig(t, h, admin, m, config)}
}

func createSSOConfig(t *testing.T, h *apitest.Harness, admin apitest.User, m *mockoidc.MockOIDC, extra map[string]any) string {
	t.Helper()
	body := map[string]any{"name": "Mock IdP", "issuerUrl": m.Issuer(), "clientId": m.ClientID, "clientSecret": m.ClientSecret}
	for k, v := range extra {
		body[k] = v
	}
	r := h.Do("POST", "/api/v1/admin/sso", body, admin.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	return r.JSON(t)["id"].(string)
}

// begin is the browser's first hop: GET the start path, get a 302 and the state cookie.
func begin(t *testing.T, h *apitest.Harness, path string) (location *url.URL, cookie string) {
	t.Helper()
	r := h.Do("GET", path, nil, "")
	require.Equal(t, http.StatusFound, r.Status, "%s", r.Body)
	loc, err := url.Parse(r.Header.Get("Location"))
	require.NoError(t, err)
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == "tw_sso_state" {
			require.True(t, c.HttpOnly)
			require.Equal(t, "/login/oauth2/code/", c.Path)
			cookie = c.Value
		}
	}
	return loc, cookie
}

// atProvider is the browser at the provider: it authorizes at once and sends the
// browser back with a 302 to the redirect URI.
func atProvider(t *testing.T, authorize *url.URL) *url.URL {
	t.Helper()
	res, err := noRedirects.Get(authorize.String())
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusFound, res.StatusCode, "the provider refused the authorization request")
	back, err := url.Parse(res.Header.Get("Location"))
	require.NoError(t, err)
	return back
}

// callback is the browser back at Taskweave's redirect URI; it returns the query of
// the web client's /auth/sso/callback the flow ends at.
func callback(t *testing.T, h *apitest.Harness, back *url.URL, cookie string) url.Values {
	t.Helper()
	require.Equal(t, "http://localhost:8080", back.Scheme+"://"+back.Host, "the redirect URI is on TW_BASE_URL")
	var headers []string
	if cookie != "" {
		headers = []string{"Cookie", "tw_sso_state=" + cookie}
	}
	r := h.Do("GET", back.RequestURI(), nil, "", headers...)
	require.Equal(t, http.StatusFound, r.Status, "the callback always redirects: %s", r.Body)
	require.Equal(t, "no-store", r.Header.Get("Cache-Control"))
	end, err := url.Parse(r.Header.Get("Location"))
	require.NoError(t, err)
	require.Equal(t, "http://localhost:8080/auth/sso/callback", end.Scheme+"://"+end.Host+end.Path)
	return end.Query()
}

// ssoLogin runs the whole browser flow on h for registration and returns where it
// ended; a start Taskweave refuses ends at the web client at once.
func ssoLogin(t *testing.T, h *apitest.Harness, registration string) url.Values {
	t.Helper()
	authorize, cookie := begin(t, h, "/oauth2/authorization/"+registration)
	if authorize.Host == "localhost:8080" {
		require.Equal(t, "/auth/sso/callback", authorize.Path)
		require.Empty(t, cookie, "a refused start sets no state cookie")
		return authorize.Query()
	}
	return callback(t, h, atProvider(t, authorize), cookie)
}

// exchange trades a one-time code; it returns the response.
func exchange(h *apitest.Harness, code string) *apitest.Response {
	return h.Do("POST", "/api/v1/auth/sso/exchange", map[string]any{"code": code}, "")
}

func meEmail(t *testing.T, h *apitest.Harness, access string) (id, email string) {
	t.Helper()
	r := h.Do("GET", "/api/v1/auth/me", nil, access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	m := r.JSON(t)
	return m["id"].(string), m["email"].(string)
}

// TestSSOFirstLoginProvisionsSecondLinks: the first login creates the user in the
// default organization, linked to the identity; the code works once; the second login
// (same subject) is the same user. (A password account with the same e-mail is not
// linked by a login: TestSSOExistingAccountNotTakenOver.)
func TestSSOFirstLoginProvisionsSecondLinks(t *testing.T) {
	t.Parallel()
	s := newSSOSetup(t, nil)
	h := s.h

	authorize, cookie := begin(t, h, "/login/oauth2/authorization/"+s.cfgID)
	require.NotEmpty(t, cookie)
	q := authorize.Query()
	require.Equal(t, s.oidc.AuthorizationEndpoint(), authorize.Scheme+"://"+authorize.Host+authorize.Path)
	require.Equal(t, "openid profile email", q.Get("scope"))
	require.Equal(t, s.oidc.ClientID, q.Get("client_id"))
	require.Equal(t, "http://localhost:8080/login/oauth2/code/"+s.cfgID, q.Get("redirect_uri"))
	require.Equal(t, "S256", q.Get("code_challenge_method"))
	require.NotEmpty(t, q.Get("code_challenge"))
	require.NotEmpty(t, q.Get("nonce"))
	require.NotEmpty(t, q.Get("state"))
	require.NotContains(t, q.Get("state"), q.Get("nonce"), "the state carries no secret")

	s.oidc.QueueUser(&mockoidc.MockUser{Subject: "sub-alice", Email: "Alice.SSO@Example.com", EmailVerified: true, PreferredUsername: "alice"})
	end := callback(t, h, atProvider(t, authorize), cookie)
	require.Empty(t, end.Get("error"))
	code := end.Get("code")
	require.NotEmpty(t, code)
	require.NotContains(t, end.Encode(), "eyJ", "no token in the URL")
	require.Equal(t, 0, h.Count("SELECT count(*) FROM sso_login_codes WHERE code_hash = $1", code), "only the hash is stored")

	var userID, provider, subject, role, display string
	var orgID *string
	var hasPassword bool
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(), `SELECT u.id, i.provider, i.subject, u.system_role, u.display_name,
		u.org_id::text, u.password_hash IS NOT NULL FROM users u JOIN sso_identities i ON i.user_id = u.id
		WHERE u.email = 'alice.sso@example.com'`).
		Scan(&userID, &provider, &subject, &role, &display, &orgID, &hasPassword))
	require.Equal(t, s.cfgID, provider)
	require.Equal(t, "sub-alice", subject)
	require.Equal(t, "MEMBER", role)
	require.Equal(t, "alice", display)
	require.False(t, hasPassword)
	require.NotNil(t, orgID)
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM organization_members om JOIN organizations o ON o.id = om.org_id
		WHERE o.slug = 'default' AND om.user_id = $1 AND om.role = 'MEMBER' AND o.id::text = $2`, userID, *orgID))
	require.Equal(t, 1, h.Count("SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'action' = 'USER_REGISTERED' AND args->>'userId' = $1", userID))

	ex := exchange(h, code)
	require.Equal(t, http.StatusOK, ex.Status, "%s", ex.Body)
	pair := ex.JSON(t)
	require.Equal(t, "Bearer", pair["tokenType"])
	require.NotEmpty(t, pair["refreshToken"])
	id, email := meEmail(t, h, pair["accessToken"].(string))
	require.Equal(t, userID, id)
	require.Equal(t, "alice.sso@example.com", email)
	require.Equal(t, 1, h.Count("SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'action' = 'OAUTH_LOGIN' AND args->>'userId' = $1 AND args->>'level' = 'SECURITY'", userID))
	// The refresh token is a real one.
	require.Equal(t, http.StatusOK, h.Do("POST", "/api/v1/auth/refresh", map[string]any{"refreshToken": pair["refreshToken"]}, "").Status)

	// A code works once.
	again := exchange(h, code)
	require.Equal(t, http.StatusForbidden, again.Status)
	require.Equal(t, "INVALID_SSO_CODE", again.JSON(t)["reason"])
	require.Equal(t, http.StatusForbidden, exchange(h, "made-up").Status)
	require.Equal(t, http.StatusBadRequest, h.Do("POST", "/api/v1/auth/sso/exchange", map[string]any{}, "").Status)

	// The second login, with another e-mail at the provider, is the same user.
	s.oidc.QueueUser(&mockoidc.MockUser{Subject: "sub-alice", Email: "alice.new@example.com", EmailVerified: true})
	end = ssoLogin(t, h, s.cfgID)
	require.Empty(t, end.Get("error"))
	ex = exchange(h, end.Get("code"))
	require.Equal(t, http.StatusOK, ex.Status)
	id, _ = meEmail(t, h, ex.JSON(t)["accessToken"].(string))
	require.Equal(t, userID, id)
	require.Equal(t, 1, h.Count("SELECT count(*) FROM sso_identities WHERE subject = 'sub-alice'"))

	// An unverified e-mail neither links nor provisions.
	s.oidc.QueueUser(&mockoidc.MockUser{Subject: "sub-carol", Email: "carol@example.com", EmailVerified: false})
	require.Equal(t, "EMAIL_NOT_VERIFIED", ssoLogin(t, h, s.cfgID).Get("error"))
	require.Equal(t, 0, h.Count("SELECT count(*) FROM users WHERE email = 'carol@example.com'"))
}

// TestSSOConfigAddedAtRunTimeWorksOnAnotherServer: a config created through one API
// server works at once through a second one on the same database, and a flow begun on
// one replica finishes on the other.
func TestSSOConfigAddedAtRunTimeWorksOnAnotherServer(t *testing.T) {
	t.Parallel()
	h1 := apitest.New(t, apitest.Options{Configure: allowPrivateIdP})
	h2 := apitest.New(t, apitest.Options{DB: h1.DB, Configure: allowPrivateIdP})
	admin := h1.Register("ssoadmin")
	h1.MakeAdmin(admin)
	m := startOIDC(t)

	// h2 was running before the config existed.
	end := ssoLogin(t, h2, "3f1c2f0e-6a43-4a8e-9d55-2d8b8f2c0a11")
	require.Equal(t, "UNKNOWN_PROVIDER", end.Get("error"))
	id := createSSOConfig(t, h1, admin, m, nil)
	require.JSONEq(t, `[{"id":"`+id+`","name":"Mock IdP"}]`, string(h2.Do("GET", "/api/v1/admin/sso/public", nil, "").Body))

	m.QueueUser(&mockoidc.MockUser{Subject: "sub-dave", Email: "dave@example.com", EmailVerified: true})
	authorize, cookie := begin(t, h2, "/oauth2/authorization/"+id)
	end = callback(t, h1, atProvider(t, authorize), cookie)
	require.Empty(t, end.Get("error"))
	ex := exchange(h2, end.Get("code"))
	require.Equal(t, http.StatusOK, ex.Status, "%s", ex.Body)
	_, email := meEmail(t, h1, ex.JSON(t)["accessToken"].(string))
	require.Equal(t, "dave@example.com", email)
}

// TestSSORefusals: every refusal ends at the web client with its reason, never an
// error page.
func TestSSORefusals(t *testing.T) {
	t.Parallel()
	s := newSSOSetup(t, nil)
	h := s.h

	for _, reg := range []string{"nope", "github", "google", "3f1c2f0e-6a43-4a8e-9d55-2d8b8f2c0a11", strings.ReplaceAll(s.cfgID, "-", "")} {
		require.Equal(t, "UNKNOWN_PROVIDER", ssoLogin(t, h, reg).Get("error"), reg)
	}

	// A tampered state, a state without the browser's cookie, a state of another
	// registration and no state at all are refused before the code is redeemed.
	authorize, cookie := begin(t, h, "/oauth2/authorization/"+s.cfgID)
	back := atProvider(t, authorize)
	q := back.Query()
	state := q.Get("state")
	parts := strings.Split(state, ".")
	require.Len(t, parts, 3)
	for name, tampered := range map[string]string{
		"signature": parts[0] + "." + parts[1] + "." + strings.Repeat("A", len(parts[2])),
		"payload":   parts[0] + "." + parts[1] + "x." + parts[2],
		"garbage":   "not-a-state",
		"empty":     "",
	} {
		bad := *back
		bq := back.Query()
		bq.Set("state", tampered)
		bad.RawQuery = bq.Encode()
		require.Equal(t, "INVALID_STATE", callback(t, h, &bad, cookie).Get("error"), name)
	}
	require.Equal(t, "INVALID_STATE", callback(t, h, back, "").Get("error"), "no cookie")
	require.Equal(t, "INVALID_STATE", callback(t, h, back, "another-flow").Get("error"), "another browser's cookie")
	other := *back
	other.Path = "/login/oauth2/code/github"
	require.Equal(t, "INVALID_STATE", callback(t, h, &other, cookie).Get("error"), "another registration")
	// The untouched callback still works: nothing above used the provider's code.
	end := callback(t, h, back, cookie)
	require.Empty(t, end.Get("error"))
	require.NotEmpty(t, end.Get("code"))

	// The provider's own error (each on a flow of its own: a state works once).
	for providerError, reason := range map[string]string{"access_denied": "ACCESS_DENIED", "server_error": "PROVIDER_ERROR"} {
		authorize, cookie := begin(t, h, "/oauth2/authorization/"+s.cfgID)
		back := atProvider(t, authorize)
		denied := *back
		dq := back.Query()
		dq.Del("code")
		dq.Set("error", providerError)
		denied.RawQuery = dq.Encode()
		require.Equal(t, reason, callback(t, h, &denied, cookie).Get("error"), providerError)
	}
	// A code the provider does not know.
	authorize, cookie = begin(t, h, "/oauth2/authorization/"+s.cfgID)
	back = atProvider(t, authorize)
	fake := *back
	fq := back.Query()
	fq.Set("code", "forged-code")
	fake.RawQuery = fq.Encode()
	require.Equal(t, "PROVIDER_ERROR", callback(t, h, &fake, cookie).Get("error"))

	// Provisioning off: no account is created.
	r := h.Do("PUT", "/api/v1/admin/sso/"+s.cfgID, map[string]any{"autoProvision": false}, s.admin.Access)
	require.Equal(t, http.StatusOK, r.Status)
	s.oidc.QueueUser(&mockoidc.MockUser{Subject: "sub-erin", Email: "erin@example.com", EmailVerified: true})
	require.Equal(t, "PROVISIONING_DISABLED", ssoLogin(t, h, s.cfgID).Get("error"))
	require.Equal(t, 0, h.Count("SELECT count(*) FROM users WHERE email = 'erin@example.com'"))
	require.Equal(t, http.StatusOK, h.Do("PUT", "/api/v1/admin/sso/"+s.cfgID, map[string]any{"autoProvision": true}, s.admin.Access).Status)

	// A deactivated user is refused, and a code issued before the deactivation is void.
	s.oidc.QueueUser(&mockoidc.MockUser{Subject: "sub-frank", Email: "frank@example.com", EmailVerified: true})
	end = ssoLogin(t, h, s.cfgID)
	require.NotEmpty(t, end.Get("code"))
	var frank string
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(), "SELECT id FROM users WHERE email = 'frank@example.com'").Scan(&frank))
	s.oidc.QueueUser(&mockoidc.MockUser{Subject: "sub-frank", Email: "frank@example.com", EmailVerified: true})
	pending := ssoLogin(t, h, s.cfgID).Get("code")
	require.Equal(t, http.StatusNoContent, h.Do("POST", "/api/v1/admin/users/"+frank+"/deactivate", nil, s.admin.Access).Status)
	require.Equal(t, http.StatusForbidden, exchange(h, pending).Status)
	s.oidc.QueueUser(&mockoidc.MockUser{Subject: "sub-frank", Email: "frank@example.com", EmailVerified: true})
	require.Equal(t, "ACCOUNT_DISABLED", ssoLogin(t, h, s.cfgID).Get("error"))
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'action' = 'LOGIN_FAILED'
		AND args->>'userId' = $1 AND args->>'details' LIKE '%ACCOUNT_DISABLED%'`, frank))

	// An expired code is refused.
	s.oidc.QueueUser(&mockoidc.MockUser{Subject: "sub-gina", Email: "gina@example.com", EmailVerified: true})
	code := ssoLogin(t, h, s.cfgID).Get("code")
	require.NotEmpty(t, code)
	_, err := h.DB.Pool.Exec(context.Background(), "UPDATE sso_login_codes SET expires_at = now() - interval '1 second'")
	require.NoError(t, err)
	expired := exchange(h, code)
	require.Equal(t, http.StatusForbidden, expired.Status)
	require.Equal(t, "INVALID_SSO_CODE", expired.JSON(t)["reason"])

	// A disabled config refuses new logins and the callbacks of flows begun before.
	authorize, cookie = begin(t, h, "/oauth2/authorization/"+s.cfgID)
	back = atProvider(t, authorize)
	require.Equal(t, http.StatusOK, h.Do("PUT", "/api/v1/admin/sso/"+s.cfgID, map[string]any{"enabled": false}, s.admin.Access).Status)
	require.Equal(t, "UNKNOWN_PROVIDER", callback(t, h, back, cookie).Get("error"))
	require.Equal(t, "UNKNOWN_PROVIDER", ssoLogin(t, h, s.cfgID).Get("error"))
}
