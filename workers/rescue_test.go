package workers

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/webhook"
)

func TestRescueAfterFitsTheLongestJob(t *testing.T) {
	t.Parallel()
	// Default: a minute past the longest timeout, here the webhook attempt (10 s + margin).
	got, err := Config{JobTimeout: 5 * time.Second}.rescueAfter()
	require.NoError(t, err)
	require.Equal(t, 10*time.Second+webhookTimeoutMargin+time.Minute, got)

	// A long client-wide job timeout wins over the webhook attempt.
	got, err = Config{JobTimeout: 2 * time.Minute}.rescueAfter()
	require.NoError(t, err)
	require.Equal(t, 3*time.Minute, got)

	// An explicit value must exceed every timeout, or River would rescue live jobs.
	got, err = Config{JobTimeout: 10 * time.Second, RescueAfter: 16 * time.Second}.rescueAfter()
	require.NoError(t, err)
	require.Equal(t, 16*time.Second, got)
	_, err = Config{JobTimeout: 10 * time.Second, RescueAfter: 12 * time.Second,
		Webhook: webhook.Config{Timeout: 10 * time.Second}}.rescueAfter()
	require.ErrorContains(t, err, "TW_JOB_RESCUE_AFTER")
}
