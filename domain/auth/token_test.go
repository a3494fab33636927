package auth_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/auth"
)

const secret = "0123456789abcdef0123456789abcdef"

func TestTokensRoundTrip(t *testing.T) {
	t.Parallel()
	_, err := auth.NewTokens("short", time.Minute, time.Hour)
	require.ErrorContains(t, err, "TW_JWT_SECRET")

	tok, err := auth.NewTokens(secret, 15*time.Minute, time.Hour)
	require.NoError(t, err)
	uid, org := uuid.New(), uuid.New()
	access, exp, err := tok.Issue(uid, auth.TypeAccess, &org)
	require.NoError(t, err)
	require.WithinDuration(t, time.Now().Add(15*time.Minute), exp, 2*time.Second)
	claims, got, err := tok.Parse(access, auth.TypeAccess, 0)
	require.NoError(t, err)
	require.Equal(t, uid, got)
	require.Equal(t, org, *claims.OrgID)
	require.NotEmpty(t, claims.ID)

	_, _, err = tok.Parse(access, auth.TypeRefresh, 0)
	require.ErrorIs(t, err, auth.ErrUnauthenticated, "type is checked")
	_, _, err = tok.Parse(access+"x", auth.TypeAccess, 0)
	require.ErrorIs(t, err, auth.ErrUnauthenticated, "signature is checked")
	other, err := auth.NewTokens(strings.Repeat("z", 32), time.Minute, time.Hour)
	require.NoError(t, err)
	_, _, err = other.Parse(access, auth.TypeAccess, 0)
	require.ErrorIs(t, err, auth.ErrUnauthenticated)
}

// TestParseTellsExpiredFromBad: only a validly signed token of the wanted type whose exp
// has passed is ErrTokenExpired; a leeway accepts it; access tokens carry their login
// session's family.
func TestParseTellsExpiredFromBad(t *testing.T) {
	t.Parallel()
	tok, err := auth.NewTokens(secret, -time.Minute, time.Hour)
	require.NoError(t, err)
	uid, fam := uuid.New(), uuid.New()
	expired, _, err := tok.IssueAccess(uid, nil, &fam)
	require.NoError(t, err)
	_, _, err = tok.Parse(expired, auth.TypeAccess, 0)
	require.ErrorIs(t, err, auth.ErrTokenExpired)
	require.ErrorIs(t, err, auth.ErrUnauthenticated, "an expired token is still a 401")
	for name, bad := range map[string]func() error{
		"wrong type":    func() error { _, _, err := tok.Parse(expired, auth.TypeRefresh, 0); return err },
		"bad signature": func() error { _, _, err := tok.Parse(expired+"x", auth.TypeAccess, 0); return err },
		"garbage":       func() error { _, _, err := tok.Parse("a.b.c", auth.TypeAccess, 0); return err },
	} {
		err := bad()
		require.ErrorIs(t, err, auth.ErrUnauthenticated, name)
		require.NotErrorIs(t, err, auth.ErrTokenExpired, name)
	}
	claims, got, err := tok.Parse(expired, auth.TypeAccess, time.Hour)
	require.NoError(t, err, "within the leeway")
	require.Equal(t, uid, got)
	require.Equal(t, fam, *claims.Family)

	plain, _, err := tok.Issue(uid, auth.TypeAccess, nil)
	require.NoError(t, err)
	claims, _, err = tok.Parse(plain, auth.TypeAccess, time.Hour)
	require.NoError(t, err)
	require.Nil(t, claims.Family)
}

func TestSecretsAndPasswords(t *testing.T) {
	t.Parallel()
	k, err := auth.NewAPIKey()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(k, "tw_"))
	p, err := auth.NewPAT()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(p, "twk_"))
	require.Len(t, auth.HashToken(p), 64)
	require.Len(t, auth.Prefix(p), 12)

	hash, err := auth.HashPassword(auth.DefaultPasswordParams, "s3cret password")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(hash, "$argon2id$v=19$m=19456,t=2,p=1$"))
	ok, err := auth.VerifyPassword(hash, "s3cret password")
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = auth.VerifyPassword(hash, "s3cret passworD")
	require.NoError(t, err)
	require.False(t, ok)
	_, err = auth.VerifyPassword("$2a$bcrypt", "x")
	require.Error(t, err)
}

func TestAuthorities(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"ROLE_ADMIN"}, (&auth.Principal{SystemRole: auth.RoleAdmin}).Authorities())
	require.Equal(t, []string{"ROLE_MEMBER"}, (&auth.Principal{SystemRole: auth.RoleMember}).Authorities())
}

func BenchmarkVerifyAccessToken(b *testing.B) {
	tok, err := auth.NewTokens(secret, 15*time.Minute, time.Hour)
	require.NoError(b, err)
	access, _, err := tok.Issue(uuid.New(), auth.TypeAccess, nil)
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := tok.Parse(access, auth.TypeAccess, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkIssueAccessToken(b *testing.B) {
	tok, err := auth.NewTokens(secret, 15*time.Minute, time.Hour)
	require.NoError(b, err)
	uid := uuid.New()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := tok.Issue(uid, auth.TypeAccess, nil); err != nil {
			b.Fatal(err)
		}
	}
}
