package servicedesk

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/store"
)

// Enable creates the project's desk, or re-enables the existing one and sets its
// address (nil clears it). An address another project's desk uses is ErrEmailTaken.
func (s *Service) Enable(ctx context.Context, by audit.Actor, p Project, email *string) (*store.ServiceDesk, error) {
	d := &store.ServiceDesk{ProjectID: p.ID, EmailAddress: email, Enabled: true}
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewInsert().Model(d).
			On("CONFLICT (project_id) DO UPDATE").
			Set("enabled = true, email_address = EXCLUDED.email_address, updated_at = clock_timestamp()").
			Returning("*").Exec(ctx)
		if err != nil {
			if store.IsUnique(err, "service_desks_email_key") {
				return ErrEmailTaken
			}
			return fmt.Errorf("enable service desk: %w", err)
		}
		return s.record(ctx, tx, by, p, AuditDeskEnabled, "SERVICE_DESK", d.ID, map[string]any{"emailAddress": d.EmailAddress})
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// Desk returns the project's desk, or ErrDeskNotFound.
func (s *Service) Desk(ctx context.Context, p Project) (*store.ServiceDesk, error) {
	return deskOf(ctx, s.db, p.ID, false)
}
