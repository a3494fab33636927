package core

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/store"
)

// ReadEntry is the audit entry of a read (REPORT_VIEWED, BOARD_OPENED, ISSUE_VIEWED):
// actor read resourceType resourceID of project projectID, with details (a JSON object)
// marshalled.
func ReadEntry(actor audit.Actor, action, resourceType, resourceID string, projectID uuid.UUID, details any) (audit.Entry, error) {
	raw, err := json.Marshal(details)
	if err != nil {
		return audit.Entry{}, err
	}
	e := actor.Entry(action, resourceType, resourceID, string(raw))
	e.ProjectID = &projectID
	return e, nil
}

// RecordInTx records e in a transaction of its own, after run (nil: nothing else) on
// that transaction, so a run that fails records nothing. It is how a read, which changes
// no rows, gets its audit entry; the entry's job is inserted only when its level is on.
func (s *Env) RecordInTx(ctx context.Context, e audit.Entry, run func(ctx context.Context, db bun.IDB) error) error {
	return store.InTx(ctx, s.DB.Bun, func(ctx context.Context, tx bun.Tx) error {
		if run != nil {
			if err := run(ctx, tx); err != nil {
				return err
			}
		}
		return s.Audit.Record(ctx, tx, e)
	})
}
