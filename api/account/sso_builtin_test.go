package account_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/oauth2-proxy/mockoidc"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api"
	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/domain/sso"
)

// fakeGitHubUser is who signs in at the fake GitHub next.
type fakeGitHubUser struct {
	ID     int64
	Login  string
	Name   string
	Emails []map[string]any
}

// fakeGitHub serves GitHub's OAuth endpoints (/login/oauth/authorize,
// /login/oauth/access_token) and REST API (/api/user, /api/user/emails) as GitHub
// documents them, checking the client credentials, the redirect URI and PKCE.
type fakeGitHub struct {
	t   *testing.T
	srv *httptest.Server

	mu     sync.Mutex
	next   fakeGitHubUser
	grants map[string]grant // authorization code → grant
	tokens map[string]fakeGitHubUser
	n      int
}

type grant struct {
	user        fakeGitHubUser
	challenge   string
	redirectURI string
}

const (
	ghClientID     = "gh-client-id"
	ghClientSecret = "gh-client-secret"
)

func newFakeGitHub(t *testing.T) *fakeGitHub {
	f := &fakeGitHub{t: t, grants: map[string]grant{}, tokens: map[string]fakeGitHubUser{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login/oauth/authorize", f.authorize)
	mux.HandleFunc("POST /login/oauth/access_token", f.accessToken)
	mux.HandleFunc("GET /api/user", f.user)
	mux.HandleFunc("GET /api/user/emails", f.emails)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeGitHub) signInNext(u fakeGitHubUser) { f.mu.Lock(); f.next = u; f.mu.Unlock() }

func (f *fakeGitHub) settings() sso.GitHub {
	return sso.GitHub{ClientID: ghClientID, ClientSecret: ghClientSecret, AuthURL: f.srv.URL + "/login/oauth/authorize",
		TokenURL: f.srv.URL + "/login/oauth/access_token", APIURL: f.srv.URL + "/api"}
}

func (f *fakeGitHub) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != ghClientID || q.Get("code_challenge_method") != "S256" || q.Get("state") == "" {
		http.Error(w, "bad authorize request", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.n++
	code := "ghcode-" + strconv.Itoa(f.n)
	f.grants[code] = grant{user: f.next, challenge: q.Get("code_challenge"), redirectURI: q.Get("redirect_uri")}
	f.mu.Unlock()
	back, _ := url.Parse(q.Get("redirect_uri"))
	bq := back.Query()
	bq.Set("code", code)
	bq.Set("state", q.Get("state"))
	back.RawQuery = bq.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// accessToken answers like GitHub: 200 even for a bad code, with an error member.
func (f *fakeGitHub) accessToken(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	f.mu.Lock()
	g, ok := f.grants[r.PostForm.Get("code")]
	delete(f.grants, r.PostForm.Get("code"))
	f.mu.Unlock()
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.PostForm.Get("client_id") != ghClientID || r.PostForm.Get("client_secret") != ghClientSecret:
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "incorrect_client_credentials"})
	case !ok || r.PostForm.Get("redirect_uri") != g.redirectURI:
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "bad_verification_code"})
	case base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant", "error_description": "PKCE verification failed"})
	default:
		f.mu.Lock()
		f.n++
		tok := "gho_" + strconv.Itoa(f.n)
		f.tokens[tok] = g.user
		f.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]string{"access_token": tok, "token_type": "bearer", "scope": "read:user,user:email"})
	}
}

func (f *fakeGitHub) bearer(w http.ResponseWriter, r *http.Request) (fakeGitHubUser, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	tok, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	u, ok := f.tokens[tok]
	if !bearer || !ok {
		http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
		return u, false
	}
	return u, true
}

func (f *fakeGitHub) user(w http.ResponseWriter, r *http.Request) {
	if u, ok := f.bearer(w, r); ok {
		_ = json.NewEncoder(w).Encode(map[string]any{"id": u.ID, "login": u.Login, "name": u.Name,
			"avatar_url": "https://avatars.example/u/" + strconv.FormatInt(u.ID, 10), "email": nil})
	}
}

func (f *fakeGitHub) emails(w http.ResponseWriter, r *http.Request) {
	if u, ok := f.bearer(w, r); ok {
		_ = json.NewEncoder(w).Encode(u.Emails)
	}
}

// TestSSOGitHub runs the built-in GitHub login against a local fake of GitHub's OAuth
// and API endpoints.
func TestSSOGitHub(t *testing.T) {
	t.Parallel()
	gh := newFakeGitHub(t)
	h := apitest.New(t, apitest.Options{Configure: func(s *api.Settings) { s.OAuthGitHub = gh.settings() }})
	require.JSONEq(t, `[{"id":"github","name":"GitHub"}]`, string(h.Do("GET", "/api/v1/admin/sso/public", nil, "").Body))

	gh.signInNext(fakeGitHubUser{ID: 4242, Login: "octo", Name: "Octo Cat", Emails: []map[string]any{
		{"email": "octo@unverified.example", "primary": false, "verified": false},
		{"email": "octo.other@example.com", "primary": false, "verified": true},
		{"email": "Octo@Example.com", "primary": true, "verified": true},
	}})
	authorize, cookie := begin(t, h, "/oauth2/authorization/github")
	q := authorize.Query()
	require.Equal(t, gh.srv.URL+"/login/oauth/authorize", authorize.Scheme+"://"+authorize.Host+authorize.Path)
	require.Equal(t, "read:user user:email", q.Get("scope"))
	require.Equal(t, "http://localhost:8080/login/oauth2/code/github", q.Get("redirect_uri"))
	require.Empty(t, q.Get("nonce"), "GitHub is OAuth 2.0, not OIDC")
	end := callback(t, h, atProvider(t, authorize), cookie)
	require.Empty(t, end.Get("error"))
	ex := exchange(h, end.Get("code"))
	require.Equal(t, http.StatusOK, ex.Status, "%s", ex.Body)
	id, email := meEmail(t, h, ex.JSON(t)["accessToken"].(string))
	require.Equal(t, "octo@example.com", email, "the primary verified address")
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM users u JOIN sso_identities i ON i.user_id = u.id WHERE u.id = $1
		AND i.provider = 'github' AND i.subject = '4242' AND display_name = 'Octo Cat' AND avatar_url = 'https://avatars.example/u/4242'`, id))

	// The numeric id is the identity: a renamed login with a new primary address is the
	// same user.
	gh.signInNext(fakeGitHubUser{ID: 4242, Login: "octo-renamed", Emails: []map[string]any{
		{"email": "new@example.com", "primary": true, "verified": true}}})
	end = ssoLogin(t, h, "github")
	ex = exchange(h, end.Get("code"))
	require.Equal(t, http.StatusOK, ex.Status)
	again, _ := meEmail(t, h, ex.JSON(t)["accessToken"].(string))
	require.Equal(t, id, again)

	// No verified address: refused, nothing created.
	gh.signInNext(fakeGitHubUser{ID: 7, Login: "shy", Emails: []map[string]any{
		{"email": "shy@example.com", "primary": true, "verified": false}}})
	require.Equal(t, "EMAIL_NOT_VERIFIED", ssoLogin(t, h, "github").Get("error"))
	require.Equal(t, 0, h.Count("SELECT count(*) FROM users WHERE email = 'shy@example.com'"))

	// GitHub refusing the code (its 200 with an error member) is a provider error.
	authorize, cookie = begin(t, h, "/oauth2/authorization/github")
	back := atProvider(t, authorize)
	bq := back.Query()
	bq.Set("code", "ghcode-unknown")
	back.RawQuery = bq.Encode()
	require.Equal(t, "PROVIDER_ERROR", callback(t, h, back, cookie).Get("error"))

	// With registration switched off the built-ins create no accounts; known users still
	// sign in.
	closed := apitest.New(t, apitest.Options{DB: h.DB, Configure: func(s *api.Settings) {
		s.OAuthGitHub = gh.settings()
		s.RegistrationEnabled = false
	}})
	gh.signInNext(fakeGitHubUser{ID: 99, Login: "late", Emails: []map[string]any{{"email": "late@example.com", "primary": true, "verified": true}}})
	require.Equal(t, "PROVISIONING_DISABLED", ssoLogin(t, closed, "github").Get("error"))
	gh.signInNext(fakeGitHubUser{ID: 4242, Login: "octo"})
	end = ssoLogin(t, closed, "github")
	require.NotEmpty(t, end.Get("code"))
	require.Equal(t, http.StatusOK, exchange(closed, end.Get("code")).Status)
}

// TestSSOGoogle runs the built-in Google login by OIDC discovery, with the issuer
// pointed at a local provider.
func TestSSOGoogle(t *testing.T) {
	t.Parallel()
	m := startOIDC(t)
	h := apitest.New(t, apitest.Options{Configure: func(s *api.Settings) {
		s.OAuthGoogle = sso.Google{ClientID: m.ClientID, ClientSecret: m.ClientSecret, Issuer: m.Issuer()}
	}})
	require.JSONEq(t, `[{"id":"google","name":"Google"}]`, string(h.Do("GET", "/api/v1/admin/sso/public", nil, "").Body))
	m.QueueUser(&mockoidc.MockUser{Subject: "google-sub-1", Email: "gina@gmail.example", EmailVerified: true})
	end := ssoLogin(t, h, "google")
	require.Empty(t, end.Get("error"))
	ex := exchange(h, end.Get("code"))
	require.Equal(t, http.StatusOK, ex.Status, "%s", ex.Body)
	id, email := meEmail(t, h, ex.JSON(t)["accessToken"].(string))
	require.Equal(t, "gina@gmail.example", email)
	require.Equal(t, 1, h.Count("SELECT count(*) FROM sso_identities WHERE user_id = $1 AND provider = 'google' AND subject = 'google-sub-1'", id))
	require.Equal(t, 1, h.Count("SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'action' = 'OAUTH_LOGIN' AND args->>'details' LIKE '%google%'"))
}
