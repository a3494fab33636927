package main

import (
	"context"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/sethvargo/go-envconfig"
	"github.com/stretchr/testify/require"
)

func TestShortJWTSecretStopsEverySubcommand(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"api", "worker", "migrate", "all"} {
		for _, secret := range []string{"", "too-short-secret-31-bytes-long!"} {
			err := run(context.Background(), []string{cmd}, envconfig.MapLookuper(map[string]string{"TW_JWT_SECRET": secret}))
			require.Error(t, err, cmd)
			require.Contains(t, err.Error(), "TW_JWT_SECRET", cmd)
			require.NotContains(t, err.Error(), "\n", "one line")
		}
	}
}

func TestUsage(t *testing.T) {
	t.Parallel()
	err := run(context.Background(), []string{"serve"}, envconfig.MapLookuper(nil))
	require.Error(t, err)
	require.True(t, strings.HasPrefix(err.Error(), "usage:"))
}

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig(context.Background(), envconfig.MapLookuper(map[string]string{"TW_JWT_SECRET": strings.Repeat("s", 32)}))
	require.NoError(t, err)
	require.Equal(t, "postgres://postgres@127.0.0.1:5432/taskweave?sslmode=disable", cfg.DatabaseURL)
	require.Equal(t, 10, cfg.AuthRateLimit)
	require.Equal(t, "1m0s", cfg.AuthRateWindow.String())
	require.Equal(t, "15m0s", cfg.AccessTokenTTL.String())
	require.Equal(t, "168h0m0s", cfg.RefreshTokenTTL.String())
	require.Len(t, cfg.WebhookRetryDelays, 2)
	require.Equal(t, "X-Taskweave", cfg.WebhookHeaderPrefix)
	require.EqualValues(t, 26214400, cfg.MaxUploadBytes)
	require.True(t, cfg.RegistrationEnabled)
	require.Equal(t, "2160h0m0s", cfg.AutomationRetention.String(), "90 days")
	require.Equal(t, 100, cfg.AutomationChainBudget)
	require.Equal(t, 1000, cfg.AutomationProjectRate)
}

// TestWorkerGC: a worker collects at WorkerGCPercent unless the operator set GOGC, which
// the runtime has applied and which stays. Not parallel: the target is process-wide.
func TestWorkerGC(t *testing.T) {
	prev := debug.SetGCPercent(150) // as if the runtime had read GOGC=150 at start
	defer debug.SetGCPercent(prev)

	require.False(t, workerGC(envconfig.MapLookuper(map[string]string{"GOGC": "150"})))
	require.Equal(t, 150, debug.SetGCPercent(150))

	require.True(t, workerGC(envconfig.MapLookuper(nil)))
	require.Equal(t, WorkerGCPercent, debug.SetGCPercent(100))
}

// TestStatementTimeoutConfig: every API statement ends before the request deadline:
// nine tenths of it unless set, and a setting at or past the deadline is refused.
func TestStatementTimeoutConfig(t *testing.T) {
	t.Parallel()
	load := func(env map[string]string) (*Config, error) {
		env["TW_JWT_SECRET"] = strings.Repeat("s", 32)
		return loadConfig(context.Background(), envconfig.MapLookuper(env))
	}
	cfg, err := load(map[string]string{})
	require.NoError(t, err)
	require.Equal(t, "9s", cfg.StatementTimeout.String())
	cfg, err = load(map[string]string{"TW_REQUEST_TIMEOUT": "4s"})
	require.NoError(t, err)
	require.Equal(t, "3.6s", cfg.StatementTimeout.String())
	cfg, err = load(map[string]string{"TW_STATEMENT_TIMEOUT": "2s"})
	require.NoError(t, err)
	require.Equal(t, "2s", cfg.StatementTimeout.String())
	for _, v := range []string{"10s", "11s", "-1s"} {
		_, err := load(map[string]string{"TW_STATEMENT_TIMEOUT": v})
		require.ErrorContains(t, err, "TW_STATEMENT_TIMEOUT", v)
	}
}
