package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIssueIDOfFindsTheDataMember(t *testing.T) {
	t.Parallel()
	body := []byte(`{"event":"issue.created","timestamp":"2026-11-21T17:40:00Z","projectKey":"BENCH",` +
		`"data":{"issueId":"0e6f9a1c-6f0d-4d3b-9a57-2b8f5c1d9e01","issueKey":"BENCH-1","title":"T"},` +
		`"deliveryId":"5f1c9a1c-6f0d-4d3b-9a57-2b8f5c1d9e02"}`)
	require.Equal(t, "0e6f9a1c-6f0d-4d3b-9a57-2b8f5c1d9e01", issueIDOf(body))
	require.Empty(t, issueIDOf([]byte(`{"event":"sprint.started","data":{}}`)))
	require.Empty(t, issueIDOf([]byte(`{"data":{"issueId":"unterminated`)))
}
