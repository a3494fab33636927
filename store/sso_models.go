package store

import (
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// SSOConfig is a row of sso_configs: an OIDC provider an admin registered at run time.
// Its id is the registration id of the login paths.
type SSOConfig struct {
	bun.BaseModel `bun:"table:sso_configs"`

	ID        uuid.UUID `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	Name      string    `bun:"name"`
	IssuerURL string    `bun:"issuer_url"`
	ClientID  string    `bun:"client_id"`
	// ClientSecretEnc is the client secret sealed by domain/sso's secret box; it never
	// leaves the server.
	ClientSecretEnc string `bun:"client_secret_enc"`
	Enabled         bool   `bun:"enabled"`
	AutoProvision   bool   `bun:"auto_provision"`
	// AllowedDomains are the e-mail domains whose existing accounts a first login may
	// link to automatically; empty: none.
	AllowedDomains []string  `bun:"allowed_domains,array"`
	CreatedAt      time.Time `bun:"created_at,nullzero,default:now()"`
	UpdatedAt      time.Time `bun:"updated_at,nullzero,default:now()"`
}

// SSOIdentity is a row of sso_identities: an external identity linked to an account.
// Provider is the registration id (an SSO config id, github or google).
type SSOIdentity struct {
	bun.BaseModel `bun:"table:sso_identities"`

	Provider  string    `bun:"provider,pk"`
	Subject   string    `bun:"subject,pk"`
	UserID    uuid.UUID `bun:"user_id,type:uuid"`
	CreatedAt time.Time `bun:"created_at,nullzero,default:now()"`
}
