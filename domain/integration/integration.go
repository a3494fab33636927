// Package integration links projects to GitHub and GitLab: the per-project integration
// with its webhook secret, the incoming provider events it authenticates, and the issue
// references (commits, pull/merge requests) parsed from them.
package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/store"
)

// Provider is a code host Taskweave accepts events from.
type Provider string

// The two providers.
const (
	GitHub Provider = "GITHUB"
	GitLab Provider = "GITLAB"
)

// Providers lists every provider, for messages naming the allowed values.
var Providers = []Provider{GitHub, GitLab}

// ParseProvider accepts a provider name in any letter case.
func ParseProvider(s string) (Provider, bool) {
	p := Provider(strings.ToUpper(strings.TrimSpace(s)))
	return p, p == GitHub || p == GitLab
}

// PathSegment is the provider's segment of the incoming webhook path
// (/api/v1/integrations/{segment}/{KEY}/webhook).
func (p Provider) PathSegment() string { return strings.ToLower(string(p)) }

// MaxRepoURLLength is the longest repository address (docs/api-conventions.md#limits).
const MaxRepoURLLength = 2048

// Audit actions of integrations; WRITE level (stored as text, no migration needed).
const (
	ActionCreated = "INTEGRATION_CREATED"
	ActionDeleted = "INTEGRATION_DELETED"
)

// Errors of integrations.
var (
	ErrExists   = errors.New("integration: the project already has one for this provider")
	ErrNotFound = errors.New("integration: not found")
)

// Service changes integrations and accepts incoming events; both write their rows and
// the jobs they cause (audit, parsing) in one transaction.
type Service struct {
	db    bun.IDB
	bus   *event.Bus
	audit *audit.Recorder
}

// NewService builds a Service.
func NewService(db bun.IDB, bus *event.Bus, rec *audit.Recorder) *Service {
	return &Service{db: db, bus: bus, audit: rec}
}

// entry is the audit entry of action by a on integration id of the project.
func entry(a audit.Actor, action string, projectID, id uuid.UUID, p Provider) audit.Entry {
	e := a.Entry(action, "INTEGRATION", id.String(), string(p))
	e.ProjectID = &projectID
	return e
}

// List returns the project's integrations in creation order.
func List(ctx context.Context, db bun.IDB, projectID uuid.UUID) ([]store.ProjectIntegration, error) {
	out := []store.ProjectIntegration{}
	if err := db.NewSelect().Model(&out).Where("project_id = ?", projectID).Order("created_at", "id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("list integrations: %w", err)
	}
	return out, nil
}

// NewIntegration is a validated create request.
type NewIntegration struct {
	Provider Provider
	RepoURL  *string
}

// Create adds the project's integration with p and a fresh secret; one per provider.
// The secret is returned in the row (plaintext: verification needs it).
func (s *Service) Create(ctx context.Context, by audit.Actor, projectID uuid.UUID, in NewIntegration) (*store.ProjectIntegration, error) {
	secret, err := newSecret()
	if err != nil {
		return nil, err
	}
	row := &store.ProjectIntegration{ProjectID: projectID, Provider: string(in.Provider), WebhookSecret: secret, RepoURL: in.RepoURL}
	err = store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(row).Returning("*").Exec(ctx); err != nil {
			if store.IsUnique(err, "project_integrations_project_provider_key") {
				return ErrExists
			}
			return err
		}
		return s.audit.Record(ctx, tx, entry(by, ActionCreated, projectID, row.ID, in.Provider))
	})
	if err != nil {
		return nil, fmt.Errorf("create %s integration: %w", in.Provider, err)
	}
	return row, nil
}

// Delete removes an integration of the project; one of another project is not found.
// Payloads already received stay and are still parsed.
func (s *Service) Delete(ctx context.Context, by audit.Actor, projectID, id uuid.UUID) error {
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		var provider string
		err := tx.NewDelete().Model((*store.ProjectIntegration)(nil)).
			Where("id = ? AND project_id = ?", id, projectID).Returning("provider").Scan(ctx, &provider)
		if err != nil {
			if store.IsNotFound(err) {
				return ErrNotFound
			}
			return err
		}
		return s.audit.Record(ctx, tx, entry(by, ActionDeleted, projectID, id, Provider(provider)))
	})
	if err != nil {
		return fmt.Errorf("delete integration %s: %w", id, err)
	}
	return nil
}

// newSecret is 32 random bytes in hex: as strong as the HMAC-SHA256 key it becomes.
func newSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate integration secret: %w", err)
	}
	return hex.EncodeToString(b), nil
}
