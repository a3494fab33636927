package workers

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/taskweave/taskweave/store"
)

// Unavailable turns a run that failed because the database was unavailable (refused new
// connections with 53300, was shutting down, or a deadlock) into a snooze: River runs the job
// again after a short pause without counting the run as one of its attempts. So an
// outage does not use up a webhook delivery's attempts (3 over about six minutes) on
// work that never reached its target, and a delivery is given up only after its real
// attempts (docs/operations.md#a-refusing-database).
type Unavailable struct {
	river.MiddlewareDefaults
	log *slog.Logger
}

// NewUnavailable builds the middleware.
func NewUnavailable(log *slog.Logger) *Unavailable { return &Unavailable{log: log} }

// unavailableSnooze is the pause before a job that met an unavailable database runs
// again; it grows with the job's snoozes so far, up to a minute.
func unavailableSnooze(snoozes int) time.Duration {
	d := 5 * time.Second << min(snoozes, 4)
	return min(d, time.Minute)
}

// Work implements rivertype.WorkerMiddleware.
func (m *Unavailable) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	err := doInner(ctx)
	if err == nil || !databaseUnavailable(err) {
		return err
	}
	var cancel *river.JobCancelError
	var snooze *river.JobSnoozeError
	if errors.As(err, &cancel) || errors.As(err, &snooze) {
		return err
	}
	d := unavailableSnooze(snoozeCount(job))
	if m.log != nil {
		m.log.WarnContext(ctx, "job met an unavailable database; snoozed without spending an attempt",
			"kind", job.Kind, "job_id", job.ID, "attempt", job.Attempt, "retry_in", d.String(), "err", err)
	}
	return river.JobSnooze(d)
}

// snoozeCount is how often River has snoozed the job (its metadata's snoozes).
func snoozeCount(job *rivertype.JobRow) int {
	var meta struct {
		Snoozes int `json:"snoozes"`
	}
	_ = json.Unmarshal(job.Metadata, &meta)
	return meta.Snoozes
}

// databaseUnavailable reports whether err came from Postgres being unavailable: an error
// Postgres answered with one of the codes store.Translate counts as unavailable, or a
// failure to connect to it. A network error of anything else (a webhook receiver that
// refuses connections) is a real failure of the job and spends its attempt, so only
// pgx's own error types are trusted here, never a bare net.Error.
func databaseUnavailable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return errors.Is(store.Translate(pgErr), store.ErrUnavailable)
	}
	var connErr *pgconn.ConnectError
	return errors.As(err, &connErr)
}
