package api_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/taskweave/taskweave/api/apitest"
)

// benchmarkMe measures the whole authenticated request path through the Fiber app:
// edge middleware, credential check with its user lookup, handler, JSON.
func benchmarkMe(b *testing.B, token func(h *apitest.Harness, u apitest.User) string) {
	h := apitest.New(b, apitest.Options{})
	u := h.Register("Bench")
	tok := token(h, u)
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest("GET", "/api/v1/auth/me", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := h.Server.App.Test(req, -1)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("status %v err %v", resp.StatusCode, err)
		}
		resp.Body.Close()
	}
}

func BenchmarkAuthMiddlewareJWT(b *testing.B) {
	benchmarkMe(b, func(_ *apitest.Harness, u apitest.User) string { return u.Access })
}

func BenchmarkAuthMiddlewarePAT(b *testing.B) {
	benchmarkMe(b, func(h *apitest.Harness, u apitest.User) string {
		return h.Do("POST", "/api/v1/me/tokens", map[string]any{"name": "bench"}, u.Access).JSON(b)["plaintext"].(string)
	})
}
