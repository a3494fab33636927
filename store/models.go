package store

import (
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// User is a row of users.
type User struct {
	bun.BaseModel `bun:"table:users"`

	ID              uuid.UUID  `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	Email           string     `bun:"email"`
	DisplayName     string     `bun:"display_name"`
	AvatarURL       *string    `bun:"avatar_url"`
	PasswordHash    *string    `bun:"password_hash"`
	OAuthProvider   *string    `bun:"oauth_provider"` // no longer written: see SSOIdentity
	OAuthSubject    *string    `bun:"oauth_subject"`  // no longer written: see SSOIdentity
	SystemRole      string     `bun:"system_role"`
	OrgID           *uuid.UUID `bun:"org_id,type:uuid"`
	Active          bool       `bun:"active"`
	Language        *string    `bun:"language"`
	TokensNotBefore time.Time  `bun:"tokens_not_before,nullzero,default:'epoch'"`
	DeletedAt       *time.Time `bun:"deleted_at"`
	CreatedAt       time.Time  `bun:"created_at,nullzero,default:now()"`
	UpdatedAt       time.Time  `bun:"updated_at,nullzero,default:now()"`
}

// RefreshToken is a row of refresh_tokens: only the SHA-256 of the JWT is kept.
type RefreshToken struct {
	bun.BaseModel `bun:"table:refresh_tokens"`

	ID        uuid.UUID `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	TokenHash string    `bun:"token_hash"`
	UserID    uuid.UUID `bun:"user_id,type:uuid"`
	ExpiresAt time.Time `bun:"expires_at"`
	Revoked   bool      `bun:"revoked"`
	CreatedAt time.Time `bun:"created_at,nullzero,default:now()"`
	// FamilyID is the login the token descends from: set at login, passed on by each
	// rotation. RotatedAt is when a rotation consumed the token.
	FamilyID  uuid.UUID  `bun:"family_id,type:uuid"`
	RotatedAt *time.Time `bun:"rotated_at"`
}

// PersonalAccessToken is a row of personal_access_tokens.
type PersonalAccessToken struct {
	bun.BaseModel `bun:"table:personal_access_tokens"`

	ID          uuid.UUID  `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	UserID      uuid.UUID  `bun:"user_id,type:uuid"`
	Name        string     `bun:"name"`
	TokenHash   string     `bun:"token_hash"`
	TokenPrefix string     `bun:"token_prefix"`
	Scope       string     `bun:"scope"`
	LastUsedAt  *time.Time `bun:"last_used_at"`
	ExpiresAt   *time.Time `bun:"expires_at"`
	RevokedAt   *time.Time `bun:"revoked_at"`
	CreatedAt   time.Time  `bun:"created_at,nullzero,default:now()"`
}

// ProjectAPIKey is a row of project_api_keys.
type ProjectAPIKey struct {
	bun.BaseModel `bun:"table:project_api_keys"`

	ID         uuid.UUID  `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	Name       string     `bun:"name"`
	KeyHash    string     `bun:"key_hash"`
	KeyPrefix  string     `bun:"key_prefix"`
	ProjectID  *uuid.UUID `bun:"project_id,type:uuid"`
	CreatedBy  uuid.UUID  `bun:"created_by,type:uuid"`
	LastUsedAt *time.Time `bun:"last_used_at"`
	ExpiresAt  *time.Time `bun:"expires_at"`
	CreatedAt  time.Time  `bun:"created_at,nullzero,default:now()"`
}

// NotificationPreference is an opt-out row; a missing row means both channels are on.
type NotificationPreference struct {
	bun.BaseModel `bun:"table:notification_preferences"`

	UserID uuid.UUID `bun:"user_id,pk,type:uuid"`
	Type   string    `bun:"type,pk"`
	InApp  bool      `bun:"in_app"`
	Email  bool      `bun:"email"`
}

// AuditEvent is a row of the append-only audit log.
type AuditEvent struct {
	bun.BaseModel `bun:"table:audit_events"`

	ID           uuid.UUID  `bun:"id,pk,type:uuid"`
	Timestamp    time.Time  `bun:"timestamp"`
	UserID       *uuid.UUID `bun:"user_id,type:uuid"`
	UserEmail    string     `bun:"user_email"`
	ProjectID    *uuid.UUID `bun:"project_id,type:uuid"`
	OrgID        *uuid.UUID `bun:"org_id,type:uuid"`
	Action       string     `bun:"action"`
	Level        string     `bun:"level"`
	ResourceType *string    `bun:"resource_type"`
	ResourceID   *string    `bun:"resource_id"`
	Details      *string    `bun:"details"`
	IPAddress    *string    `bun:"ip_address"`
	UserAgent    *string    `bun:"user_agent"`
}

// AuditConfig is one level's toggle.
type AuditConfig struct {
	bun.BaseModel `bun:"table:audit_config"`

	Level   string `bun:"level,pk"`
	Enabled bool   `bun:"enabled"`
}
