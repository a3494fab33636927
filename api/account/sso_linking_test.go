package account_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/oauth2-proxy/mockoidc"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api"
	"github.com/taskweave/taskweave/api/apitest"
)

// registerAs registers a password account with exactly this e-mail.
func registerAs(t *testing.T, h *apitest.Harness, email string) apitest.User {
	t.Helper()
	r := h.Do("POST", "/api/v1/auth/register", map[string]any{"email": email, "displayName": "Local", "password": apitest.Password}, "")
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	u := apitest.User{Email: email, Access: r.JSON(t)["accessToken"].(string)}
	id, _ := meEmail(t, h, u.Access)
	require.NoError(t, u.ID.UnmarshalText([]byte(id)))
	return u
}

// ssoSignsIn runs a login that must succeed and returns the id of the account it signed
// into.
func ssoSignsIn(t *testing.T, h *apitest.Harness, registration string) (userID, access string) {
	t.Helper()
	end := ssoLogin(t, h, registration)
	require.Empty(t, end.Get("error"))
	ex := exchange(h, end.Get("code"))
	require.Equal(t, http.StatusOK, ex.Status, "%s", ex.Body)
	access = ex.JSON(t)["accessToken"].(string)
	userID, _ = meEmail(t, h, access)
	return userID, access
}

// startLink is POST /me/sso/{registration}/link, confirming password unless it is
// empty (an account without one): the provider's URL and the state cookie.
func startLink(t *testing.T, h *apitest.Harness, access, registration, password string) (*url.URL, string) {
	t.Helper()
	var body any
	if password != "" {
		body = map[string]any{"currentPassword": password}
	}
	r := h.Do("POST", "/api/v1/me/sso/"+registration+"/link", body, access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, "no-store", r.Header.Get("Cache-Control"))
	loc, err := url.Parse(r.JSON(t)["authorizationUrl"].(string))
	require.NoError(t, err)
	var cookie string
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == "tw_sso_state" {
			require.True(t, c.HttpOnly)
			require.Equal(t, "/login/oauth2/code/", c.Path)
			cookie = c.Value
		}
	}
	require.NotEmpty(t, cookie, "the link flow is bound to this browser")
	return loc, cookie
}

// TestSSOExistingAccountNotTakenOver: a first SSO login whose verified e-mail is a
// password account's ends at the web client with ACCOUNT_EXISTS: no code, no tokens,
// no link; the owner signs in with the password, links the provider from the account
// (the authenticated POST), and from then on the SSO login signs into that account.
func TestSSOExistingAccountNotTakenOver(t *testing.T) {
	t.Parallel()
	s := newSSOSetup(t, nil)
	h := s.h
	bob := h.Register("bob")
	tokensBefore := h.Count("SELECT count(*) FROM refresh_tokens WHERE user_id = $1", bob.ID)

	s.oidc.QueueUser(&mockoidc.MockUser{Subject: "sub-bob", Email: strings.ToUpper(bob.Email), EmailVerified: true})
	end := ssoLogin(t, h, s.cfgID)
	require.Equal(t, "ACCOUNT_EXISTS", end.Get("error"))
	require.Empty(t, end.Get("code"), "no one-time code, so no tokens")
	require.Equal(t, 0, h.Count("SELECT count(*) FROM sso_login_codes WHERE user_id = $1", bob.ID))
	require.Equal(t, 0, h.Count("SELECT count(*) FROM sso_identities WHERE user_id = $1 OR subject = 'sub-bob'", bob.ID))
	require.Equal(t, tokensBefore, h.Count("SELECT count(*) FROM refresh_tokens WHERE user_id = $1", bob.ID), "no tokens issued")
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'action' = 'LOGIN_FAILED'
		AND args->>'userId' = $1 AND args->>'details' LIKE '%ACCOUNT_EXISTS%'`, bob.ID))

	// Bob signs in with his password and links the provider.
	login := h.Do("POST", "/api/v1/auth/login", map[string]any{"email": bob.Email, "password": apitest.Password}, "")
	require.Equal(t, http.StatusOK, login.Status)
	session := login.JSON(t)["accessToken"].(string)
	// A password account confirms its password: a stolen access token alone links nothing.
	for _, body := range []any{nil, map[string]any{"currentPassword": "not the password"}} {
		r := h.Do("POST", "/api/v1/me/sso/"+s.cfgID+"/link", body, session)
		require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
		require.Equal(t, "INVALID_CURRENT_PASSWORD", r.JSON(t)["reason"])
		require.Empty(t, r.Header.Get("Set-Cookie"))
	}
	authorize, cookie := startLink(t, h, session, s.cfgID, apitest.Password)
	require.Equal(t, s.oidc.AuthorizationEndpoint(), authorize.Scheme+"://"+authorize.Host+authorize.Path)
	require.Equal(t, "S256", authorize.Query().Get("code_challenge_method"))
	s.oidc.QueueUser(&mockoidc.MockUser{Subject: "sub-bob", Email: "bob.elsewhere@idp.example", EmailVerified: true})
	end = callback(t, h, atProvider(t, authorize), cookie)
	require.Empty(t, end.Get("error"))
	require.Equal(t, s.cfgID, end.Get("linked"))
	require.Empty(t, end.Get("code"), "a link signs no one in")
	require.Equal(t, 1, h.Count("SELECT count(*) FROM sso_identities WHERE user_id = $1 AND provider = $2 AND subject = 'sub-bob'", bob.ID, s.cfgID))
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'action' = 'SSO_LINKED'
		AND args->>'userId' = $1 AND args->>'level' = 'SECURITY'`, bob.ID))
	links := h.Do("GET", "/api/v1/me/sso", nil, session)
	require.Equal(t, http.StatusOK, links.Status)
	require.Len(t, links.Array(t), 1)
	require.Equal(t, s.cfgID, links.Array(t)[0].(map[string]any)["registrationId"])
	require.Equal(t, "Mock IdP", links.Array(t)[0].(map[string]any)["name"])

	// Now the SSO login is Bob.
	s.oidc.QueueUser(&mockoidc.MockUser{Subject: "sub-bob", Email: bob.Email, EmailVerified: true})
	id, _ := ssoSignsIn(t, h, s.cfgID)
	require.Equal(t, bob.ID.String(), id)

	// The identity cannot be linked to a second account.
	carol := h.Register("carol")
	authorize, cookie = startLink(t, h, carol.Access, s.cfgID, apitest.Password)
	s.oidc.QueueUser(&mockoidc.MockUser{Subject: "sub-bob", Email: bob.Email, EmailVerified: true})
	require.Equal(t, "IDENTITY_IN_USE", callback(t, h, atProvider(t, authorize), cookie).Get("error"))
	require.Equal(t, 0, h.Count("SELECT count(*) FROM sso_identities WHERE user_id = $1", carol.ID))

	// A personal access token cannot link (it would become a full login); unknown
	// registrations are 404.
	pat := h.Do("POST", "/api/v1/me/tokens", map[string]any{"name": "ci"}, carol.Access).JSON(t)["plaintext"].(string)
	r := h.Do("POST", "/api/v1/me/sso/"+s.cfgID+"/link", nil, pat)
	require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
	require.Equal(t, "SESSION_REQUIRED", r.JSON(t)["reason"])
	require.Empty(t, r.Header.Get("Set-Cookie"))
	for _, reg := range []string{"github", "nope", "3f1c2f0e-6a43-4a8e-9d55-2d8b8f2c0a11"} {
		r = h.Do("POST", "/api/v1/me/sso/"+reg+"/link", nil, carol.Access)
		require.Equal(t, http.StatusNotFound, r.Status, reg)
		require.Equal(t, "SSO_PROVIDER_NOT_FOUND", r.JSON(t)["reason"])
	}
	require.Equal(t, http.StatusUnauthorized, h.Do("POST", "/api/v1/me/sso/"+s.cfgID+"/link", nil, "").Status)

	// Unlinking: Bob has a password, so he may; afterwards the SSO login is refused again.
	require.Equal(t, http.StatusNoContent, h.Do("DELETE", "/api/v1/me/sso/"+s.cfgID, nil, session).Status)
	gone := h.Do("DELETE", "/api/v1/me/sso/"+s.cfgID, nil, session)
	require.Equal(t, http.StatusNotFound, gone.Status)
	require.Equal(t, "SSO_LINK_NOT_FOUND", gone.JSON(t)["reason"])
	s.oidc.QueueUser(&mockoidc.MockUser{Subject: "sub-bob", Email: bob.Email, EmailVerified: true})
	require.Equal(t, "ACCOUNT_EXISTS", ssoLogin(t, h, s.cfgID).Get("error"))

	// A link flow whose session was revoked meanwhile (sign-out everywhere, a
	// deactivation) links nothing.
	dan := h.Register("dan")
	authorize, cookie = startLink(t, h, dan.Access, s.cfgID, apitest.Password)
	_, err := h.DB.Pool.Exec(context.Background(), "UPDATE users SET tokens_not_before = now() WHERE id = $1", dan.ID)
	require.NoError(t, err)
	s.oidc.QueueUser(&mockoidc.MockUser{Subject: "sub-dan", Email: dan.Email, EmailVerified: true})
	require.Equal(t, "INVALID_STATE", callback(t, h, atProvider(t, authorize), cookie).Get("error"))
	require.Equal(t, 0, h.Count("SELECT count(*) FROM sso_identities WHERE user_id = $1", dan.ID))

	// An account without a password keeps its only link.
	s.oidc.QueueUser(&mockoidc.MockUser{Subject: "sub-dora", Email: "dora@example.com", EmailVerified: true})
	_, dora := ssoSignsIn(t, h, s.cfgID)
	last := h.Do("DELETE", "/api/v1/me/sso/"+s.cfgID, nil, dora)
	require.Equal(t, http.StatusConflict, last.Status)
	require.Equal(t, "LAST_SIGN_IN_METHOD", last.JSON(t)["reason"])
}

// TestSSOAllowedDomains: a registration trusted for an e-mail domain links a non-admin
// account of that domain on its first login; a system ADMIN is never linked
// automatically, nor is an account of another domain.
func TestSSOAllowedDomains(t *testing.T) {
	t.Parallel()
	s := newSSOSetup(t, map[string]any{"allowedDomains": []string{" Corp.Example ", "corp.example", "partner.example"}})
	h := s.h

	member := registerAs(t, h, "mia@corp.example")
	boss := registerAs(t, h, "root@corp.example")
	h.MakeAdmin(boss)
	outsider := registerAs(t, h, "otto@other.example")

	s.oidc.QueueUser(&mockoidc.MockUser{Subject: "sub-root", Email: "root@corp.example", EmailVerified: true})
	require.Equal(t, "ACCOUNT_EXISTS", ssoLogin(t, h, s.cfgID).Get("error"), "never an ADMIN")
	require.Equal(t, 0, h.Count("SELECT count(*) FROM sso_identities WHERE user_id = $1", boss.ID))
	require.Equal(t, 0, h.Count("SELECT count(*) FROM sso_login_codes WHERE user_id = $1", boss.ID))

	s.oidc.QueueUser(&mockoidc.MockUser{Subject: "sub-otto", Email: "otto@other.example", EmailVerified: true})
	require.Equal(t, "ACCOUNT_EXISTS", ssoLogin(t, h, s.cfgID).Get("error"), "a domain the registration is not trusted for")
	require.Equal(t, 0, h.Count("SELECT count(*) FROM sso_identities WHERE user_id = $1", outsider.ID))

	cfg := h.Do("GET", "/api/v1/admin/sso/"+s.cfgID, nil, s.admin.Access).JSON(t)
	require.Equal(t, []any{"corp.example", "partner.example"}, cfg["allowedDomains"], "normalized, without duplicates")
	s.oidc.QueueUser(&mockoidc.MockUser{Subject: "sub-mia", Email: "Mia@Corp.Example", EmailVerified: true})
	id, _ := ssoSignsIn(t, h, s.cfgID)
	require.Equal(t, member.ID.String(), id)
	require.Equal(t, 1, h.Count("SELECT count(*) FROM sso_identities WHERE user_id = $1 AND provider = $2 AND subject = 'sub-mia'", member.ID, s.cfgID))
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'action' = 'SSO_LINKED'
		AND args->>'userId' = $1 AND args->>'details' LIKE '%allowedDomains%'`, member.ID))

	// An unverified e-mail links nothing, whatever the domain.
	s.oidc.QueueUser(&mockoidc.MockUser{Subject: "sub-x", Email: "otto@other.example", EmailVerified: false})
	require.Equal(t, "EMAIL_NOT_VERIFIED", ssoLogin(t, h, s.cfgID).Get("error"))

	// Invalid lists are refused; [] clears.
	for _, bad := range []any{[]string{"*.corp.example"}, []string{"user@corp.example"}, []string{"https://corp.example"}, []string{"corp"}, make([]string, 51)} {
		r := h.Do("PUT", "/api/v1/admin/sso/"+s.cfgID, map[string]any{"allowedDomains": bad}, s.admin.Access)
		require.Equal(t, http.StatusBadRequest, r.Status, "%v", bad)
		require.Equal(t, "VALIDATION_ERROR", r.JSON(t)["code"])
		require.Contains(t, r.JSON(t)["details"], "allowedDomains")
	}
	r := h.Do("PUT", "/api/v1/admin/sso/"+s.cfgID, map[string]any{"allowedDomains": []string{}}, s.admin.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, []any{}, r.JSON(t)["allowedDomains"])
}

// TestSSOSecondRegistrationNotLinked: an account linked to one registration is not
// signed into by another one asserting the same verified e-mail, until its owner links
// that one too.
func TestSSOSecondRegistrationNotLinked(t *testing.T) {
	t.Parallel()
	s := newSSOSetup(t, nil)
	h := s.h
	other := startOIDC(t)
	second := createSSOConfig(t, h, s.admin, other, map[string]any{"name": "Other IdP"})

	s.oidc.QueueUser(&mockoidc.MockUser{Subject: "sub-alice", Email: "alice@example.com", EmailVerified: true})
	alice, session := ssoSignsIn(t, h, s.cfgID)

	other.QueueUser(&mockoidc.MockUser{Subject: "other-alice", Email: "alice@example.com", EmailVerified: true})
	require.Equal(t, "ACCOUNT_EXISTS", ssoLogin(t, h, second).Get("error"))
	require.Equal(t, 0, h.Count("SELECT count(*) FROM sso_identities WHERE provider = $1", second))

	// Alice, signed in through the first, links the second explicitly.
	authorize, cookie := startLink(t, h, session, second, "")
	other.QueueUser(&mockoidc.MockUser{Subject: "other-alice", Email: "alice@example.com", EmailVerified: true})
	require.Equal(t, second, callback(t, h, atProvider(t, authorize), cookie).Get("linked"))
	other.QueueUser(&mockoidc.MockUser{Subject: "other-alice", Email: "alice@example.com", EmailVerified: true})
	id, _ := ssoSignsIn(t, h, second)
	require.Equal(t, alice, id)
	require.Equal(t, 2, h.Count("SELECT count(*) FROM sso_identities WHERE user_id = $1", alice))
}

// TestSSOStateWorksOnce: a second callback with a state already used is INVALID_STATE,
// on any replica, before the provider's code is redeemed again.
func TestSSOStateWorksOnce(t *testing.T) {
	t.Parallel()
	s := newSSOSetup(t, nil)
	h := s.h
	replica := apitest.New(t, apitest.Options{DB: h.DB, Configure: allowPrivateIdP})

	s.oidc.QueueUser(&mockoidc.MockUser{Subject: "sub-eve", Email: "eve@example.com", EmailVerified: true})
	authorize, cookie := begin(t, h, "/oauth2/authorization/"+s.cfgID)
	back := atProvider(t, authorize)
	end := callback(t, h, back, cookie)
	require.NotEmpty(t, end.Get("code"))
	require.Equal(t, "INVALID_STATE", callback(t, h, back, cookie).Get("error"))
	require.Equal(t, "INVALID_STATE", callback(t, replica, back, cookie).Get("error"), "on another replica too")
	require.Equal(t, 1, h.Count("SELECT count(*) FROM sso_login_codes"), "one code only")

	// A state refused for its cookie is not used up: the browser that began it finishes.
	s.oidc.QueueUser(&mockoidc.MockUser{Subject: "sub-eve", Email: "eve@example.com", EmailVerified: true})
	authorize, cookie = begin(t, h, "/oauth2/authorization/"+s.cfgID)
	back = atProvider(t, authorize)
	require.Equal(t, "INVALID_STATE", callback(t, h, back, "someone-else").Get("error"))
	require.NotEmpty(t, callback(t, h, back, cookie).Get("code"))
	require.Equal(t, "INVALID_STATE", callback(t, h, back, cookie).Get("error"))
}

// fakeDNS answers lookups from a table that a test can change (a name that resolves
// elsewhere after it was saved); unknown names do not resolve.
type fakeDNS struct {
	mu    sync.Mutex
	addrs map[string]string
}

func (d *fakeDNS) set(host, addr string) { d.mu.Lock(); d.addrs[host] = addr; d.mu.Unlock() }

func (d *fakeDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	a, ok := d.addrs[host]
	if !ok {
		return nil, errors.New("no such host")
	}
	return []netip.Addr{netip.MustParseAddr(a)}, nil
}

// TestSSOIssuerAddressCheck: issuers on loopback, private, link-local or metadata
// addresses are refused at save (400 SSO_ISSUER_REJECTED) and at dial time (a name
// that resolves to such an address later is never connected to), unless the operator
// allows private identity providers (TW_SSO_ALLOW_PRIVATE).
func TestSSOIssuerAddressCheck(t *testing.T) {
	t.Parallel()
	dns := &fakeDNS{addrs: map[string]string{"idp.internal.example": "10.1.2.3"}}
	h := apitest.New(t, apitest.Options{Configure: func(s *api.Settings) { s.SSOResolver = dns }})
	admin := h.Register("ssoadmin")
	h.MakeAdmin(admin)
	body := func(issuer string) map[string]any {
		return map[string]any{"name": "IdP", "issuerUrl": issuer, "clientId": "c", "clientSecret": "s"}
	}
	refused := []string{
		"http://169.254.169.254/latest/meta-data", "http://127.0.0.1:8080", "https://127.1/oidc", "http://0x7f000001/",
		"http://2130706433/", "http://10.0.0.5/oidc", "http://192.168.1.10", "http://[::1]:9000/", "http://[::ffff:169.254.169.254]/",
		"http://localhost:8080/realms/x", "http://LOCALHOST./", "http://idp.localhost/", "http://0.0.0.0/",
		"https://idp.internal.example/", // resolves to a private address
	}
	for _, issuer := range refused {
		r := h.Do("POST", "/api/v1/admin/sso", body(issuer), admin.Access)
		require.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", issuer, r.Body)
		require.Equal(t, "BAD_REQUEST", r.JSON(t)["code"], issuer)
		require.Equal(t, "SSO_ISSUER_REJECTED", r.JSON(t)["reason"], issuer)
	}
	require.Equal(t, 0, h.Count("SELECT count(*) FROM sso_configs"))

	// A name that resolves to a public address saves; a PUT to a private one is refused.
	var hits atomic.Int32
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		http.NotFound(w, nil)
	}))
	t.Cleanup(idp.Close)
	port := idp.URL[strings.LastIndexByte(idp.URL, ':'):]
	dns.set("idp.rebind.example", "93.184.215.14")
	created := h.Do("POST", "/api/v1/admin/sso", body("http://idp.rebind.example"+port), admin.Access)
	require.Equal(t, http.StatusCreated, created.Status, "%s", created.Body)
	id := created.JSON(t)["id"].(string)
	r := h.Do("PUT", "/api/v1/admin/sso/"+id, map[string]any{"issuerUrl": "http://169.254.169.254/"}, admin.Access)
	require.Equal(t, http.StatusBadRequest, r.Status)
	require.Equal(t, "SSO_ISSUER_REJECTED", r.JSON(t)["reason"])

	// The name now resolves to loopback: an anonymous start does not make the server
	// connect there, and neither does a link start.
	dns.set("idp.rebind.example", "127.0.0.1")
	require.Equal(t, "PROVIDER_ERROR", ssoLogin(t, h, id).Get("error"))
	link := h.Do("POST", "/api/v1/me/sso/"+id+"/link", nil, admin.Access)
	require.Equal(t, http.StatusServiceUnavailable, link.Status, "%s", link.Body)
	require.Equal(t, "SSO_PROVIDER_UNAVAILABLE", link.JSON(t)["reason"])
	require.Zero(t, hits.Load(), "no connection to the private address")

	// With the operator's allowance the same config is dialed (and private issuers save).
	allowed := apitest.New(t, apitest.Options{DB: h.DB, Configure: func(s *api.Settings) {
		s.SSOResolver = dns
		s.SSOAllowPrivate = true
	}})
	require.Equal(t, "PROVIDER_ERROR", ssoLogin(t, allowed, id).Get("error"), "the fake is no OIDC provider")
	require.NotZero(t, hits.Load(), "discovery reached the private address")
	r = allowed.Do("POST", "/api/v1/admin/sso", body("http://127.0.0.1:8080/realms/corp"), admin.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
}
