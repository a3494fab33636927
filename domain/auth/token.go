package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
)

func init() {
	// Sub-second iat, so a token issued right after a reactivation is never mistaken for
	// one issued before the deactivation in the same second.
	jwt.TimePrecision = time.Microsecond
}

// Token types carried in the `type` claim.
const (
	TypeAccess  = "access"
	TypeRefresh = "refresh"
)

// Prefixes that tell the three credential kinds apart.
const (
	APIKeyPrefix = "tw_"
	PATPrefix    = "twk_"
)

// Claims are Taskweave's JWT claims: sub, type, jti, iat, exp, for switch-org tokens
// orgId, and on access tokens fam, the refresh-token family (the login session) that
// issued them: its end (logout, password change, reuse, sign-out) ends the token too.
// Access tokens signed before fam existed carry none (docs/api-conventions.md#authentication).
type Claims struct {
	Type   string     `json:"type"`
	OrgID  *uuid.UUID `json:"orgId,omitempty"`
	Family *uuid.UUID `json:"fam,omitempty"`
	jwt.RegisteredClaims
}

// Tokens signs and verifies HS256 JWTs.
type Tokens struct {
	secret     []byte
	accessTTL  time.Duration
	refreshTTL time.Duration
	parser     *jwt.Parser
	now        func() time.Time
}

// MinSecretLen is the shortest signing secret Taskweave accepts.
const MinSecretLen = 32

// NewTokens builds the signer; it refuses secrets shorter than MinSecretLen bytes.
func NewTokens(secret string, accessTTL, refreshTTL time.Duration) (*Tokens, error) {
	if len(secret) < MinSecretLen {
		return nil, fmt.Errorf("TW_JWT_SECRET must be at least %d bytes", MinSecretLen)
	}
	return &Tokens{
		secret: []byte(secret), accessTTL: accessTTL, refreshTTL: refreshTTL,
		parser: jwt.NewParser(jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}), jwt.WithExpirationRequired(), jwt.WithIssuedAt()),
		now:    time.Now,
	}, nil
}

// AccessTTL is the lifetime of access tokens (the AuthResponse's expiresIn).
func (t *Tokens) AccessTTL() time.Duration { return t.accessTTL }

// RefreshTTL is the lifetime of refresh tokens.
func (t *Tokens) RefreshTTL() time.Duration { return t.refreshTTL }

// Issue signs a token of the given type for user; orgID is set on switch-org tokens.
// An access token signed so belongs to no login session; IssueAccess binds one.
func (t *Tokens) Issue(userID uuid.UUID, typ string, orgID *uuid.UUID) (string, time.Time, error) {
	return t.issue(userID, typ, orgID, nil)
}

// IssueAccess signs an access token of the login session family (nil: none).
func (t *Tokens) IssueAccess(userID uuid.UUID, orgID, family *uuid.UUID) (string, time.Time, error) {
	return t.issue(userID, TypeAccess, orgID, family)
}

func (t *Tokens) issue(userID uuid.UUID, typ string, orgID, family *uuid.UUID) (string, time.Time, error) {
	now := t.now()
	ttl := t.accessTTL
	if typ == TypeRefresh {
		ttl = t.refreshTTL
	}
	exp := now.Add(ttl)
	c := Claims{Type: typ, OrgID: orgID, Family: family, RegisteredClaims: jwt.RegisteredClaims{
		Subject: userID.String(), ID: uuid.NewString(), IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(exp),
	}}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(t.secret)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("sign %s token: %w", typ, err)
	}
	return s, exp, nil
}

// Parse verifies signature, expiry and type. leeway extends the expiry check (the STOMP
// CONNECT grace, which the caller then binds to the token's login session); it is 0
// everywhere else. A token of wantType whose signature is valid but whose exp (plus
// leeway) has passed is ErrTokenExpired; any other failure is ErrUnauthenticated.
func (t *Tokens) Parse(token, wantType string, leeway time.Duration) (*Claims, uuid.UUID, error) {
	var c Claims
	p := t.parser
	if leeway > 0 {
		p = jwt.NewParser(jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}), jwt.WithExpirationRequired(),
			jwt.WithIssuedAt(), jwt.WithLeeway(leeway))
	}
	_, err := p.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return t.secret, nil })
	if err != nil {
		// The library verifies the signature before the claims, so an expiry error
		// means the token is ours; only a lone expiry is reported as one.
		if errors.Is(err, jwt.ErrTokenExpired) && !errors.Is(err, jwt.ErrTokenSignatureInvalid) &&
			!errors.Is(err, jwt.ErrTokenUsedBeforeIssued) && !errors.Is(err, jwt.ErrTokenNotValidYet) && c.Type == wantType {
			return nil, uuid.Nil, fmt.Errorf("%w: %w", ErrTokenExpired, err)
		}
		return nil, uuid.Nil, fmt.Errorf("%w: %w", ErrUnauthenticated, err)
	}
	if c.Type != wantType {
		return nil, uuid.Nil, fmt.Errorf("%w: token type %q, want %q", ErrUnauthenticated, c.Type, wantType)
	}
	uid, err := uuid.Parse(c.Subject)
	if err != nil {
		return nil, uuid.Nil, fmt.Errorf("%w: bad subject", ErrUnauthenticated)
	}
	if c.IssuedAt == nil {
		return nil, uuid.Nil, errors.Join(ErrUnauthenticated, errors.New("no iat"))
	}
	return &c, uid, nil
}

// expired reports whether c's exp has passed (a token parsed with a leeway).
func (t *Tokens) expired(c *Claims) bool {
	return c.ExpiresAt == nil || !t.now().Before(c.ExpiresAt.Time)
}

// HashToken is the SHA-256 hex digest under which refresh tokens, API keys and personal
// access tokens are stored.
func HashToken(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// newSecret returns prefix + URL-safe base64 of n random bytes.
func newSecret(prefix string, n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random token: %w", err)
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// NewAPIKey returns a fresh project API key plaintext (tw_ + 24 random bytes).
func NewAPIKey() (string, error) { return newSecret(APIKeyPrefix, 24) }

// NewPAT returns a fresh personal access token plaintext (twk_ + 32 random bytes).
func NewPAT() (string, error) { return newSecret(PATPrefix, 32) }

// Prefix is the first 12 characters kept to recognise a key or token in lists.
func Prefix(plaintext string) string {
	if len(plaintext) <= 12 {
		return plaintext
	}
	return plaintext[:12]
}
