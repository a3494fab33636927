package main

import (
	"context"
	"strings"
	"testing"

	"github.com/sethvargo/go-envconfig"
	"github.com/stretchr/testify/require"
)

// TestOAuthConfig: the built-in providers are off by default, their addresses default
// to GitHub's and Google's and can be overridden, and a client id without its secret
// (or the reverse) stops the process.
func TestOAuthConfig(t *testing.T) {
	t.Parallel()
	secret := strings.Repeat("s", 32)
	cfg, err := loadConfig(context.Background(), envconfig.MapLookuper(map[string]string{"TW_JWT_SECRET": secret}))
	require.NoError(t, err)
	require.Empty(t, cfg.OAuthGitHubClientID)
	require.Empty(t, cfg.OAuthGoogleClientID)
	require.Equal(t, "https://github.com/login/oauth/authorize", cfg.OAuthGitHubAuthURL)
	require.Equal(t, "https://github.com/login/oauth/access_token", cfg.OAuthGitHubTokenURL)
	require.Equal(t, "https://api.github.com", cfg.OAuthGitHubAPIURL)
	require.Equal(t, "https://accounts.google.com", cfg.OAuthGoogleIssuer)

	cfg, err = loadConfig(context.Background(), envconfig.MapLookuper(map[string]string{"TW_JWT_SECRET": secret,
		"TW_OAUTH_GITHUB_CLIENT_ID": "id", "TW_OAUTH_GITHUB_CLIENT_SECRET": "s",
		"TW_OAUTH_GITHUB_API_URL": "https://ghe.example/api/v3", "TW_OAUTH_GOOGLE_ISSUER": "http://127.0.0.1:9999/oidc"}))
	require.NoError(t, err)
	require.Equal(t, "https://ghe.example/api/v3", cfg.OAuthGitHubAPIURL)
	require.Equal(t, "http://127.0.0.1:9999/oidc", cfg.OAuthGoogleIssuer)

	for _, env := range []map[string]string{
		{"TW_OAUTH_GITHUB_CLIENT_ID": "id"},
		{"TW_OAUTH_GITHUB_CLIENT_SECRET": "s"},
		{"TW_OAUTH_GOOGLE_CLIENT_ID": "id"},
	} {
		env["TW_JWT_SECRET"] = secret
		_, err := loadConfig(context.Background(), envconfig.MapLookuper(env))
		require.Error(t, err, "%v", env)
		require.Contains(t, err.Error(), "TW_OAUTH_")
	}
}
