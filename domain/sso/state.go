package sso

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// StateTTL bounds a browser flow: the user has this long at the provider.
const StateTTL = 10 * time.Minute

// stateSigner makes and checks the OAuth state parameter. The state is an HS256 token
// under a key derived from the JWT secret (never the access-token key itself, so
// neither can pass for the other) naming the registration id, a random flow id and an
// expiry. The PKCE verifier and the OIDC nonce are derived from the flow id under the
// same key, so the state carries nothing secret and no replica keeps flow memory.
type stateSigner struct{ key []byte }

func newStateSigner(jwtSecret string) *stateSigner {
	mac := hmac.New(sha256.New, []byte(jwtSecret))
	mac.Write([]byte("taskweave/sso-state/v1"))
	return &stateSigner{key: mac.Sum(nil)}
}

type stateClaims struct {
	// Registration is the registration id the flow began with.
	Registration string `json:"reg"`
	jwt.RegisteredClaims
}

// flow is a begun login as the state describes it.
type flow struct {
	Registration string
	// ID binds the flow to the browser that began it (the state cookie holds it).
	ID string
}

// issue signs a new flow's state.
func (s *stateSigner) issue(registration string, now time.Time) (string, flow, error) {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		return "", flow{}, fmt.Errorf("flow id: %w", err)
	}
	id := base64.RawURLEncoding.EncodeToString(b)
	c := stateClaims{Registration: registration, RegisteredClaims: jwt.RegisteredClaims{
		ID: id, IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(StateTTL)),
	}}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(s.key)
	if err != nil {
		return "", flow{}, fmt.Errorf("sign state: %w", err)
	}
	return tok, flow{Registration: registration, ID: id}, nil
}

var errBadState = errors.New("sso: state is malformed, tampered with or expired")

// check verifies a returned state's signature and expiry.
func (s *stateSigner) check(state string, now time.Time) (flow, error) {
	var c stateClaims
	p := jwt.NewParser(jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}), jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(), jwt.WithTimeFunc(func() time.Time { return now }))
	if _, err := p.ParseWithClaims(state, &c, func(*jwt.Token) (any, error) { return s.key, nil }); err != nil {
		return flow{}, fmt.Errorf("%w: %w", errBadState, err)
	}
	if c.ID == "" || c.Registration == "" {
		return flow{}, errBadState
	}
	return flow{Registration: c.Registration, ID: c.ID}, nil
}

// derive is a flow's secret value for purpose (the PKCE verifier, the nonce): 32 bytes
// of HMAC, URL-safe base64 (43 characters, a valid PKCE verifier).
func (s *stateSigner) derive(purpose string, f flow) string {
	mac := hmac.New(sha256.New, s.key)
	mac.Write([]byte(purpose + "\x00" + f.Registration + "\x00" + f.ID))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}
