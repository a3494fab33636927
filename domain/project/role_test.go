package project

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEffectiveRole pins the inheritance table: organization OWNER/ADMIN grant ADMIN,
// MEMBER grants VIEWER, and inheritance only ever raises the explicit role.
func TestEffectiveRole(t *testing.T) {
	t.Parallel()
	str := func(s string) *string { return &s }
	for _, c := range []struct {
		member, org *string
		want        Role
	}{
		{nil, nil, None},
		{str("VIEWER"), nil, Viewer},
		{str("MEMBER"), nil, Member},
		{str("ADMIN"), nil, Admin},
		{nil, str("MEMBER"), Viewer},
		{nil, str("ADMIN"), Admin},
		{nil, str("OWNER"), Admin},
		{str("VIEWER"), str("MEMBER"), Viewer},
		{str("MEMBER"), str("MEMBER"), Member},
		{str("ADMIN"), str("MEMBER"), Admin},
		{str("VIEWER"), str("ADMIN"), Admin},
		{str("MEMBER"), str("OWNER"), Admin},
	} {
		r := roleRow{MemberRole: c.member, OrgRole: c.org}
		a := r.access()
		require.Equal(t, c.want, a.Role, "member %v org %v", c.member, c.org)
		if c.member != nil {
			require.Equal(t, Role(*c.member), a.MemberRole, "the explicit role is kept apart")
		} else {
			require.Equal(t, None, a.MemberRole)
		}
	}
}
