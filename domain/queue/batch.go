package queue

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/store"
)

// Audit actions of the operations River UI offers beyond retry and cancel; WRITE level.
const (
	ActionJobDeleted   = "JOB_DELETED"
	ActionQueuePaused  = "QUEUE_PAUSED"
	ActionQueueResumed = "QUEUE_RESUMED"
)

// ResourceQueue is the audit resourceType of a queue; the resourceId is its name.
const ResourceQueue = "QUEUE"

// MaxBatch is the most jobs one batch operation takes, River UI's own limit.
const MaxBatch = 1000

var (
	// ErrJobRunning is returned when a running job is to be deleted: River refuses
	// until its worker returns.
	ErrJobRunning = errors.New("queue: job is running")
	// ErrQueueNotFound is returned for a queue River's queue table does not hold.
	ErrQueueNotFound = errors.New("queue: queue not found")
)

// CancelMany cancels every job of ids with Cancel's rules, in one transaction with one
// audit entry per job: an unknown id rolls every change back.
func (s *Service) CancelMany(ctx context.Context, actor Actor, ids []int64) error {
	return s.batch(ctx, ids, func(ctx context.Context, tx bun.Tx, id int64) error {
		_, err := s.changeTx(ctx, tx, actor, id, ActionJobCancelled, "cancel", s.river.JobCancelTx)
		return err
	})
}

// RetryMany retries every job of ids with Retry's rules, all or none, each audited.
func (s *Service) RetryMany(ctx context.Context, actor Actor, ids []int64) error {
	return s.batch(ctx, ids, func(ctx context.Context, tx bun.Tx, id int64) error {
		_, err := s.changeTx(ctx, tx, actor, id, ActionJobRetried, "retry", s.river.JobRetryTx)
		return err
	})
}

// DeleteMany removes every job of ids from River's table, all or none: a running job
// (ErrJobRunning) or an unknown id (ErrJobNotFound) rolls every deletion back. Each
// deletion is audited with the job's kind, queue and last state; its args are not
// copied into the audit log.
func (s *Service) DeleteMany(ctx context.Context, actor Actor, ids []int64) error {
	return s.batch(ctx, ids, func(ctx context.Context, tx bun.Tx, id int64) error {
		row, err := s.river.JobDeleteTx(ctx, tx.Tx, id)
		if err != nil {
			return jobError("delete", id, err)
		}
		return s.record(ctx, tx, actor, ActionJobDeleted, ResourceJob, fmt.Sprint(id),
			map[string]any{"kind": row.Kind, "queue": row.Queue, "state": string(row.State)})
	})
}

// batch runs op for each distinct id, in the order given, in one transaction.
func (s *Service) batch(ctx context.Context, ids []int64, op func(context.Context, bun.Tx, int64) error) error {
	seen := make(map[int64]bool, len(ids))
	return store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		for _, id := range ids {
			if seen[id] {
				continue
			}
			seen[id] = true
			if err := op(ctx, tx, id); err != nil {
				return err
			}
		}
		return nil
	})
}

// PauseQueue pauses a queue River knows: its workers fetch no more jobs until it is
// resumed. Pausing a paused queue changes nothing but is still audited.
func (s *Service) PauseQueue(ctx context.Context, actor Actor, name string) error {
	return s.pauseOrResume(ctx, actor, name, ActionQueuePaused, s.river.QueuePauseTx)
}

// ResumeQueue resumes a queue River knows.
func (s *Service) ResumeQueue(ctx context.Context, actor Actor, name string) error {
	return s.pauseOrResume(ctx, actor, name, ActionQueueResumed, s.river.QueueResumeTx)
}

// pauseOrResume reads the queue first, so a name River does not hold is ErrQueueNotFound
// (River's "*", every queue at once, included: the UI never sends it), and the audit
// entry tells whether the queue was paused before.
func (s *Service) pauseOrResume(ctx context.Context, actor Actor, name, action string,
	op func(context.Context, *sql.Tx, string, *river.QueuePauseOpts) error) error {
	return store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		q, err := s.river.QueueGetTx(ctx, tx.Tx, name)
		if errors.Is(err, rivertype.ErrNotFound) {
			return ErrQueueNotFound
		}
		if err != nil {
			return fmt.Errorf("get queue %q: %w", name, store.Translate(err))
		}
		if err := op(ctx, tx.Tx, name, nil); err != nil {
			return fmt.Errorf("%s queue %q: %w", action, name, store.Translate(err))
		}
		return s.record(ctx, tx, actor, action, ResourceQueue, name,
			map[string]any{"queue": name, "pausedBefore": q.PausedAt != nil})
	})
}

// record writes one audit entry of actor on tx, with details as JSON (and the tool the
// request came through, when the actor names one).
func (s *Service) record(ctx context.Context, tx bun.Tx, actor Actor, action, resourceType, resourceID string, details map[string]any) error {
	if actor.Via != "" {
		details["via"] = actor.Via
	}
	raw, err := json.Marshal(details)
	if err != nil {
		return err
	}
	return s.audit.Record(ctx, tx, actor.Entry(action, resourceType, resourceID, string(raw)))
}
