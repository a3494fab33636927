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
	"github.com/google/uuid"
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
	// Link is the id of the signed-in user a link flow links the identity to; absent
	// for a login.
	Link string `json:"lnk,omitempty"`
	jwt.RegisteredClaims
}

// flow is a begun login (or link) as the state describes it.
type flow struct {
	Registration string
	// ID binds the flow to the browser that began it (the state cookie holds it).
	ID string
	// Link is the account a link flow links to; uuid.Nil for a login.
	Link uuid.UUID
	// IssuedAt and Expires are the state's issue time and expiry.
	IssuedAt, Expires time.Time
}

// issue signs a new flow's state; link is uuid.Nil for a login.
func (s *stateSigner) issue(registration string, link uuid.UUID, now time.Time) (string, flow, error) {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		return "", flow{}, fmt.Errorf("flow id: %w", err)
	}
	id := base64.RawURLEncoding.EncodeToString(b)
	exp := jwt.NewNumericDate(now.Add(StateTTL))
	c := stateClaims{Registration: registration, RegisteredClaims: jwt.RegisteredClaims{
		ID: id, IssuedAt: jwt.NewNumericDate(now), ExpiresAt: exp,
	}}
	if link != uuid.Nil {
		c.Link = link.String()
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(s.key)
	if err != nil {
		return "", flow{}, fmt.Errorf("sign state: %w", err)
	}
	return tok, flow{Registration: registration, ID: id, Link: link, IssuedAt: c.IssuedAt.Time, Expires: exp.Time}, nil
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
	if c.ID == "" || c.Registration == "" || len(c.ID) > 64 {
		return flow{}, errBadState
	}
	f := flow{Registration: c.Registration, ID: c.ID, Expires: c.ExpiresAt.Time}
	if c.IssuedAt != nil {
		f.IssuedAt = c.IssuedAt.Time
	}
	if c.Link != "" {
		id, err := uuid.Parse(c.Link)
		if err != nil {
			return flow{}, errBadState
		}
		f.Link = id
	}
	return f, nil
}

// derive is a flow's secret value for purpose (the PKCE verifier, the nonce): 32 bytes
// of HMAC, URL-safe base64 (43 characters, a valid PKCE verifier).
func (s *stateSigner) derive(purpose string, f flow) string {
	mac := hmac.New(sha256.New, s.key)
	mac.Write([]byte(purpose + "\x00" + f.Registration + "\x00" + f.ID))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}
