package api_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

func TestRegisterLoginMe(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	first := h.Register("Ada")
	me := h.Do("GET", "/api/v1/auth/me", nil, first.Access).JSON(t)
	require.Equal(t, "ADMIN", me["role"], "first user is ADMIN")
	require.Equal(t, first.Email, me["email"])
	require.Contains(t, me, "avatarUrl")
	require.Nil(t, me["avatarUrl"])
	require.Nil(t, me["language"])

	second := h.Register("Bob")
	me2 := h.Do("GET", "/api/v1/auth/me", nil, second.Access).JSON(t)
	require.Equal(t, "MEMBER", me2["role"])

	r := h.Do("POST", "/api/v1/auth/login", map[string]any{"email": first.Email, "password": apitest.Password}, "")
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	body := r.JSON(t)
	require.Equal(t, "Bearer", body["tokenType"])
	require.EqualValues(t, 900, body["expiresIn"])
}
