package apitest

import (
	"crypto/rand"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// UniqueProjectKey is a fresh project key (8 of A-Z0-9), unique across the package's shared database.
func UniqueProjectKey() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	b[0] = 'P'
	return string(b)
}

// PostProject creates a project as token and returns its key.
func PostProject(t testing.TB, h *Harness, token string) string {
	t.Helper()
	key := UniqueProjectKey()
	r := h.Do("POST", "/api/v1/projects", map[string]any{"key": key, "name": "Project " + key}, token)
	require.Equal(t, http.StatusCreated, r.Status, "create project: %s", r.Body)
	return key
}

// PostMember adds userID to the project as admin, with role.
func PostMember(t testing.TB, h *Harness, admin, key string, userID uuid.UUID, role string) {
	t.Helper()
	r := h.Do("POST", "/api/v1/projects/"+key+"/members", map[string]any{"userId": userID, "role": role}, admin)
	require.Equal(t, http.StatusCreated, r.Status, "add member: %s", r.Body)
}

// PostOrganization creates an organization as a system ADMIN and returns its id.
func PostOrganization(t testing.TB, h *Harness, admin string) string {
	t.Helper()
	slug := "org-" + strings.ToLower(UniqueProjectKey())
	r := h.Do("POST", "/api/v1/organizations", map[string]any{"name": "Org " + slug, "slug": slug}, admin)
	require.Equal(t, http.StatusCreated, r.Status, "create organization: %s", r.Body)
	return r.JSON(t)["id"].(string)
}

// PostOrgMember adds userID to the organization as actor.
func PostOrgMember(t testing.TB, h *Harness, actor, org string, userID uuid.UUID, role string) {
	t.Helper()
	r := h.Do("POST", "/api/v1/organizations/"+org+"/members", map[string]any{"userId": userID, "role": role}, actor)
	require.Equal(t, http.StatusCreated, r.Status, "add organization member: %s", r.Body)
}
