package audit_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/audit"
)

func TestLevelOf(t *testing.T) {
	t.Parallel()
	cases := map[string]audit.Level{
		"LOGIN_SUCCESS": audit.LevelSecurity, "LOGIN_FAILED": audit.LevelSecurity, "LOGOUT": audit.LevelSecurity,
		"PASSWORD_CHANGED": audit.LevelSecurity, "PROFILE_UPDATED": audit.LevelSecurity, "ROLE_CHANGED": audit.LevelSecurity,
		"API_KEY_CREATED": audit.LevelSecurity, "API_KEY_DELETED": audit.LevelSecurity, "OAUTH_LOGIN": audit.LevelSecurity,
		"USER_REGISTERED": audit.LevelSecurity,
		"ISSUE_VIEWED":    audit.LevelAll, "BOARD_OPENED": audit.LevelAll, "REPORT_VIEWED": audit.LevelAll,
		"ISSUE_CREATED": audit.LevelWrite, "SLA_BREACHED": audit.LevelWrite, "USER_DELETED": audit.LevelWrite, "ANYTHING_NEW": audit.LevelWrite,
	}
	for action, want := range cases {
		require.Equal(t, want, audit.LevelOf(action), action)
	}
}
