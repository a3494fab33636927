package account_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api"
	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/store"
)

func TestRegisterFirstUserIsAdmin(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	first := h.Register("Ada")
	me := h.Do("GET", "/api/v1/auth/me", nil, first.Access).JSON(t)
	require.Equal(t, "ADMIN", me["role"])
	require.Equal(t, first.Email, me["email"])
	for _, k := range []string{"avatarUrl", "language", "orgId"} {
		require.Contains(t, me, k, "nullable members are present")
		require.Nil(t, me[k])
	}
	require.True(t, strings.HasSuffix(me["createdAt"].(string), "Z"))

	second := h.Register("Bob")
	require.Equal(t, "MEMBER", h.Do("GET", "/api/v1/auth/me", nil, second.Access).JSON(t)["role"])

	var hash string
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(), "SELECT password_hash FROM users WHERE id = $1", first.ID).Scan(&hash))
	require.True(t, strings.HasPrefix(hash, "$argon2id$v=19$"), hash)
}

func TestRegisterResponseShape(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	r := h.Do("POST", "/api/v1/auth/register", map[string]any{"email": "Shape.User@Example.com", "displayName": "Shape", "password": apitest.Password}, "")
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	m := r.JSON(t)
	require.Equal(t, "Bearer", m["tokenType"])
	require.EqualValues(t, 900, m["expiresIn"])
	require.NotEmpty(t, m["accessToken"])
	require.NotEmpty(t, m["refreshToken"])
	require.Equal(t, 1, h.Count("SELECT count(*) FROM users WHERE email = 'shape.user@example.com'"), "email stored lower case")
}

func TestRegisterDuplicateEmail(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	u := h.Register("Dup")
	r := h.Do("POST", "/api/v1/auth/register", map[string]any{"email": strings.ToUpper(u.Email), "displayName": "Other", "password": apitest.Password}, "")
	require.Equal(t, http.StatusConflict, r.Status)
	m := r.JSON(t)
	require.Equal(t, "CONFLICT", m["code"])
	require.Equal(t, "DUPLICATE_EMAIL", m["reason"])
	require.Equal(t, 1, h.Count("SELECT count(*) FROM users WHERE email = $1", u.Email))
}

func TestRegistrationSwitch(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{Configure: func(s *api.Settings) { s.RegistrationEnabled = false }})
	r := h.Do("POST", "/api/v1/auth/register", map[string]any{"email": "a@example.com", "displayName": "A", "password": apitest.Password}, "")
	require.Equal(t, http.StatusForbidden, r.Status)
	require.Equal(t, "REGISTRATION_DISABLED", r.JSON(t)["reason"])
	require.Equal(t, 0, h.Count("SELECT count(*) FROM users WHERE id <> $1", store.AutomationUserID), "none but the built-in automation user")
}

func TestRegisterValidation(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	cases := []struct {
		name   string
		body   any
		code   string
		field  string
		reason string
	}{
		{"whitespace password", map[string]any{"email": "w@example.com", "displayName": "W", "password": "          "}, "VALIDATION_ERROR", "password", ""},
		{"short password", map[string]any{"email": "w@example.com", "displayName": "W", "password": "short"}, "VALIDATION_ERROR", "password", ""},
		{"long password", map[string]any{"email": "w@example.com", "displayName": "W", "password": strings.Repeat("x", 129)}, "VALIDATION_ERROR", "password", ""},
		{"bad email", map[string]any{"email": "not-an-email", "displayName": "W", "password": apitest.Password}, "VALIDATION_ERROR", "email", ""},
		{"blank name", map[string]any{"email": "w@example.com", "displayName": "  ", "password": apitest.Password}, "VALIDATION_ERROR", "displayName", ""},
		{"missing email", map[string]any{"displayName": "W", "password": apitest.Password}, "BAD_REQUEST", "", "MISSING_FIELD"},
		{"null password", map[string]any{"email": "w@example.com", "displayName": "W", "password": nil}, "BAD_REQUEST", "", "MISSING_FIELD"},
		{"wrong type", map[string]any{"email": 42, "displayName": "W", "password": apitest.Password}, "BAD_REQUEST", "", "WRONG_TYPE"},
		{"malformed", `{"email":`, "BAD_REQUEST", "", "MALFORMED_JSON"},
		{"array body", `[]`, "BAD_REQUEST", "", "MALFORMED_JSON"},
	}
	before := h.Count("SELECT count(*) FROM users WHERE email = 'w@example.com'")
	for _, c := range cases {
		r := h.Do("POST", "/api/v1/auth/register", c.body, "")
		require.Equal(t, http.StatusBadRequest, r.Status, c.name)
		m := r.JSON(t)
		require.Equal(t, c.code, m["code"], c.name)
		require.EqualValues(t, 400, m["status"], c.name)
		require.Equal(t, "about:blank", m["type"], c.name)
		require.Equal(t, "Bad Request", m["title"], c.name)
		details := m["details"].(map[string]any)
		if c.field != "" {
			require.Contains(t, details, c.field, c.name)
			errs := m["errors"].([]any)
			require.Equal(t, c.field, errs[0].(map[string]any)["field"], c.name)
		} else {
			require.Empty(t, details, c.name)
			require.Equal(t, c.reason, m["reason"], c.name)
		}
	}
	require.Equal(t, before, h.Count("SELECT count(*) FROM users WHERE email = 'w@example.com'"), "bad input changes nothing")
}

func TestLoginRefusals(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	u := h.Register("Login")
	inactive := h.Register("Inactive")
	_, err := h.DB.Pool.Exec(context.Background(), "UPDATE users SET active = false WHERE id = $1", inactive.ID)
	require.NoError(t, err)
	deleted := h.Register("Deleted")
	require.Equal(t, http.StatusNoContent, h.Do("DELETE", "/api/v1/me", nil, deleted.Access).Status)

	cases := map[string]map[string]any{
		"wrong password": {"email": u.Email, "password": "wrong password!"},
		"unknown user":   {"email": "nobody@example.com", "password": apitest.Password},
		"inactive user":  {"email": inactive.Email, "password": apitest.Password},
		"deleted user":   {"email": deleted.Email, "password": apitest.Password},
	}
	var messages []string
	for name, body := range cases {
		r := h.Do("POST", "/api/v1/auth/login", body, "")
		require.Equal(t, http.StatusForbidden, r.Status, name)
		m := r.JSON(t)
		require.Equal(t, "FORBIDDEN", m["code"], name)
		require.Equal(t, "INVALID_CREDENTIALS", m["reason"], name)
		messages = append(messages, m["message"].(string))
	}
	for _, msg := range messages {
		require.Equal(t, messages[0], msg, "one message for every refusal")
	}
	ok := h.Do("POST", "/api/v1/auth/login", map[string]any{"email": strings.ToUpper(u.Email), "password": apitest.Password}, "")
	require.Equal(t, http.StatusOK, ok.Status, "email is case-insensitive")
}

func TestRefreshRotation(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	u := h.Register("Rotate")

	var stored int
	sum := sha256.Sum256([]byte(u.Refresh))
	stored = h.Count("SELECT count(*) FROM refresh_tokens WHERE token_hash = $1", hex.EncodeToString(sum[:]))
	require.Equal(t, 1, stored, "refresh token stored as its SHA-256 hex")
	require.Equal(t, 0, h.Count("SELECT count(*) FROM refresh_tokens WHERE token_hash = $1", u.Refresh))

	r := h.Do("POST", "/api/v1/auth/refresh", map[string]any{"refreshToken": u.Refresh}, "")
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	pair := r.JSON(t)
	require.NotEqual(t, u.Refresh, pair["refreshToken"])
	require.NotEqual(t, u.Access, pair["accessToken"])
	require.Equal(t, http.StatusOK, h.Do("GET", "/api/v1/auth/me", nil, pair["accessToken"].(string)).Status)

	reuse := h.Do("POST", "/api/v1/auth/refresh", map[string]any{"refreshToken": u.Refresh}, "")
	require.Equal(t, http.StatusForbidden, reuse.Status)
	require.Equal(t, "INVALID_REFRESH_TOKEN", reuse.JSON(t)["reason"])

	wrongType := h.Do("POST", "/api/v1/auth/refresh", map[string]any{"refreshToken": u.Access}, "")
	require.Equal(t, http.StatusForbidden, wrongType.Status, "an access token is not a refresh token")
	require.Equal(t, "INVALID_REFRESH_TOKEN", wrongType.JSON(t)["reason"])

	garbage := h.Do("POST", "/api/v1/auth/refresh", map[string]any{"refreshToken": "nope"}, "")
	require.Equal(t, http.StatusForbidden, garbage.Status)

	asAccess := h.Do("GET", "/api/v1/auth/me", nil, pair["refreshToken"].(string))
	require.Equal(t, http.StatusUnauthorized, asAccess.Status, "a refresh token is not an access token")
}

func TestRefreshExpired(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	u := h.Register("Expired")
	_, err := h.DB.Pool.Exec(context.Background(), "UPDATE refresh_tokens SET expires_at = now() - interval '1 second' WHERE user_id = $1", u.ID)
	require.NoError(t, err)
	r := h.Do("POST", "/api/v1/auth/refresh", map[string]any{"refreshToken": u.Refresh}, "")
	require.Equal(t, http.StatusForbidden, r.Status)
	require.Equal(t, "INVALID_REFRESH_TOKEN", r.JSON(t)["reason"])
}

func TestLogoutRevokesRefreshTokens(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	u := h.Register("Logout")
	second := h.Do("POST", "/api/v1/auth/login", map[string]any{"email": u.Email, "password": apitest.Password}, "").JSON(t)
	require.Equal(t, http.StatusNoContent, h.Do("POST", "/api/v1/auth/logout", nil, u.Access).Status)
	for _, rt := range []string{u.Refresh, second["refreshToken"].(string)} {
		require.Equal(t, http.StatusForbidden, h.Do("POST", "/api/v1/auth/refresh", map[string]any{"refreshToken": rt}, "").Status)
	}
	require.Equal(t, http.StatusUnauthorized, h.Do("POST", "/api/v1/auth/logout", nil, "").Status)
}

func TestUnauthenticatedIs401(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	u := h.Register("Expiry")

	expired := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"sub": u.ID.String(), "type": "access", "jti": "x", "iat": time.Now().Add(-time.Hour).Unix(), "exp": time.Now().Add(-time.Minute).Unix(),
	})
	expiredTok, err := expired.SignedString([]byte(apitest.Secret))
	require.NoError(t, err)
	forged := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"sub": u.ID.String(), "type": "access", "jti": "x", "iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix(),
	})
	forgedTok, err := forged.SignedString([]byte("another-secret-another-secret-another"))
	require.NoError(t, err)

	for name, tok := range map[string]string{"none": "", "garbage": "abc.def.ghi", "expired": expiredTok, "forged": forgedTok, "unknown pat": "twk_nope", "unknown key": "tw_nope"} {
		r := h.Do("GET", "/api/v1/auth/me", nil, tok)
		require.Equal(t, http.StatusUnauthorized, r.Status, name)
		require.Equal(t, "Bearer", r.Header.Get("WWW-Authenticate"), name)
		m := r.JSON(t)
		require.Equal(t, "UNAUTHORIZED", m["code"], name)
	}
	// Nothing else is public: an unknown path is 401 without credentials, 404 with them.
	require.Equal(t, http.StatusUnauthorized, h.Do("GET", "/api/v1/nope", nil, "").Status)
	require.Equal(t, http.StatusNotFound, h.Do("GET", "/api/v1/nope", nil, u.Access).Status)
}

func TestErrorsAreLocalized(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	en := h.Do("POST", "/api/v1/auth/login", map[string]any{"email": "x@example.com", "password": "whatever1"}, "").JSON(t)
	de := h.Do("POST", "/api/v1/auth/login", map[string]any{"email": "x@example.com", "password": "whatever1"}, "", "Accept-Language", "de-DE,de;q=0.9,en;q=0.5").JSON(t)
	require.Equal(t, "Invalid email or password.", en["message"])
	require.Equal(t, "E-Mail-Adresse oder Passwort ist falsch.", de["message"])
	require.Equal(t, en["reason"], de["reason"], "reasons are never translated")

	u := h.Register("Sprache")
	r := h.Do("PATCH", "/api/v1/me/language", map[string]any{"language": "de"}, u.Access)
	require.Equal(t, http.StatusOK, r.Status)
	require.Equal(t, "de", r.JSON(t)["language"])
	// The stored language wins over Accept-Language.
	bad := h.Do("PATCH", "/api/v1/me/language", map[string]any{"language": "fr"}, u.Access, "Accept-Language", "en")
	require.Equal(t, http.StatusBadRequest, bad.Status)
	m := bad.JSON(t)
	require.Equal(t, "UNSUPPORTED_LANGUAGE", m["reason"])
	require.Equal(t, "Unterstützte Sprachen sind en und de.", m["message"])

	problem := h.Do("POST", "/api/v1/auth/login", `{`, "", "Accept", "application/problem+json")
	require.Equal(t, "application/problem+json", problem.Header.Get("Content-Type"))
}

func TestNulCharactersAreRefused(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	for _, body := range []string{
		`{"email":"n@example.com","displayName":"a\u0000b","password":"password123"}`,
		`{"email":"n\u0000@example.com","displayName":"n","password":"password123"}`,
	} {
		r := h.Do("POST", "/api/v1/auth/register", body, "")
		require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
		m := r.JSON(t)
		require.Equal(t, "VALIDATION_ERROR", m["code"])
		require.Equal(t, "NUL_CHARACTER", m["reason"])
		require.Len(t, m["details"], 1)
		r = h.Do("POST", "/api/v1/auth/login", body, "")
		require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	}
	require.Equal(t, 0, h.Count("SELECT count(*) FROM users WHERE email = 'n@example.com'"))
	// An escaped backslash followed by "u0000" is plain text, not a NUL.
	ok := h.Do("POST", "/api/v1/auth/register", `{"email":"nul-text@example.com","displayName":"a\\u0000b","password":"password123"}`, "")
	require.Equal(t, http.StatusCreated, ok.Status, "%s", ok.Body)
}
