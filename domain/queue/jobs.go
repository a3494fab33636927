package queue

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/store"
)

// ErrJobNotFound is returned for a job id River does not (or no longer) know.
var ErrJobNotFound = errors.New("queue: job not found")

// Audit actions of the job operations; both are WRITE level (audit.LevelOf's default).
const (
	ActionJobRetried   = "JOB_RETRIED"
	ActionJobCancelled = "JOB_CANCELLED"
)

// ResourceJob is the audit resourceType of a job; the resourceId is the job's id.
const ResourceJob = "JOB"

// States are River's job states, in the order the ops page offers them.
var States = []string{
	string(rivertype.JobStateAvailable), string(rivertype.JobStateCancelled), string(rivertype.JobStateCompleted),
	string(rivertype.JobStateDiscarded), string(rivertype.JobStatePending), string(rivertype.JobStateRetryable),
	string(rivertype.JobStateRunning), string(rivertype.JobStateScheduled),
}

// ValidState reports whether s names a River job state.
func ValidState(s string) bool {
	for _, st := range States {
		if st == s {
			return true
		}
	}
	return false
}

// Job is one River job as support staff see it.
type Job struct {
	ID          int64
	Kind        string
	Queue       string
	State       string
	Attempt     int
	MaxAttempts int
	Priority    int
	// Args and Metadata are River's JSON objects, passed through unchanged.
	Args     json.RawMessage
	Metadata json.RawMessage
	// Errors holds every attempt's error, oldest first; List leaves it nil and fills
	// only ErrorCount and LastError, since traces make a page heavy.
	Errors      []rivertype.AttemptError
	ErrorCount  int
	LastError   *rivertype.AttemptError
	AttemptedAt *time.Time
	AttemptedBy []string
	CreatedAt   time.Time
	ScheduledAt time.Time
	FinalizedAt *time.Time
	Tags        []string
}

// Filter selects jobs; zero members do not filter. Every member given is one more AND
// condition.
type Filter struct {
	State string
	Kind  string
	Queue string
	// ProjectID and IssueID match the "projectId" / "issueId" members of a job's args;
	// IssueID also matches an "issueIds" array holding it (a webhook job's issues).
	ProjectID *uuid.UUID
	IssueID   *uuid.UUID
	// ProjectKey and IssueKey are resolved to ids first; an unknown key matches nothing.
	ProjectKey string
	IssueKey   string
}

// Actor is the support staff member behind a job or queue operation, for the audit
// entry.
type Actor struct {
	audit.Actor
	// Via names the tool the request came through ("river-ui"); the audit details
	// carry it when set.
	Via string
}

// Service reads River's tables for the job views and changes jobs through River's own
// client, so the state rules stay River's.
type Service struct {
	db    *bun.DB
	river *river.Client[*sql.Tx]
	audit *audit.Recorder
}

// NewService builds a Service. client is the insert-only River client on db's
// database/sql handle, so its changes share the transaction of the audit job.
func NewService(db *bun.DB, client *river.Client[*sql.Tx], rec *audit.Recorder) *Service {
	return &Service{db: db, river: client, audit: rec}
}

// jobRow is the list query's projection: JSON columns arrive as text, the errors array
// only as its length and last element.
type jobRow struct {
	ID          int64      `bun:"id"`
	Kind        string     `bun:"kind"`
	Queue       string     `bun:"queue"`
	State       string     `bun:"state"`
	Attempt     int        `bun:"attempt"`
	MaxAttempts int        `bun:"max_attempts"`
	Priority    int        `bun:"priority"`
	Args        string     `bun:"args"`
	Metadata    string     `bun:"metadata"`
	ErrorCount  int        `bun:"error_count"`
	LastError   *string    `bun:"last_error"`
	AttemptedAt *time.Time `bun:"attempted_at"`
	AttemptedBy string     `bun:"attempted_by"`
	CreatedAt   time.Time  `bun:"created_at"`
	ScheduledAt time.Time  `bun:"scheduled_at"`
	FinalizedAt *time.Time `bun:"finalized_at"`
	Tags        string     `bun:"tags"`
}

const listColumns = `id, kind, queue, state::text AS state, attempt, max_attempts, priority,
	args::text AS args, metadata::text AS metadata,
	coalesce(array_length(errors, 1), 0) AS error_count,
	errors[array_upper(errors, 1)]::text AS last_error,
	attempted_at, array_to_json(coalesce(attempted_by, '{}'))::text AS attempted_by,
	created_at, scheduled_at, finalized_at, array_to_json(coalesce(tags, '{}'))::text AS tags`

// List returns one page of jobs, newest (highest id) first, and the number of matches
// counted up to store.CountLimit(offset): River keeps a day of finished jobs, a million
// at the scale bench's size, and counting them all cost 0.7 s. exact is false when the
// count stopped at the bound. At most three queries (key resolution, count, page)
// whatever the page holds.
//
// afterID, in a cursor walk, is the last job handed out: the page is the jobs below it,
// a range of the primary key rather than skipped rows.
func (s *Service) List(ctx context.Context, f Filter, afterID *int64, offset, limit int) (jobs []Job, total int, exact bool, err error) {
	ok, err := s.resolveKeys(ctx, &f)
	if err != nil || !ok {
		return nil, 0, true, err
	}
	where, err := f.where()
	if err != nil {
		return nil, 0, false, err
	}
	countLimit := store.CountLimit(offset)
	matches := s.db.NewSelect().TableExpr("river_job").ColumnExpr("1").Apply(where).Limit(int64(countLimit))
	var n int
	if err := s.db.NewSelect().TableExpr("(?) AS matches", matches).ColumnExpr("count(*)").Scan(ctx, &n); err != nil {
		return nil, 0, false, fmt.Errorf("count jobs: %w", store.Translate(err))
	}
	total, exact = n, n < countLimit
	if total == 0 || offset >= total {
		return nil, total, exact, nil
	}
	var rows []jobRow
	q := s.db.NewSelect().TableExpr("river_job").ColumnExpr(listColumns).Apply(where)
	if afterID != nil {
		q = q.Where("id < ?", *afterID)
	}
	err = q.OrderExpr("id DESC").Limit(int64(limit)).Offset(int64(offset)).Scan(ctx, &rows)
	if err != nil {
		return nil, 0, false, fmt.Errorf("list jobs: %w", store.Translate(err))
	}
	out := make([]Job, len(rows))
	for i := range rows {
		if out[i], err = rows[i].job(); err != nil {
			return nil, 0, false, err
		}
	}
	return out, total, exact, nil
}

// resolveKeys turns ProjectKey / IssueKey into ids in one query; ok is false when a
// key names nothing, so the caller answers an empty page rather than an error (a job
// of a deleted issue is still found by its issueId).
func (s *Service) resolveKeys(ctx context.Context, f *Filter) (ok bool, err error) {
	if f.ProjectKey == "" && f.IssueKey == "" {
		return true, nil
	}
	var pid, iid *uuid.UUID
	err = s.db.NewRaw(`SELECT (SELECT id FROM projects WHERE key = ?) AS pid, (SELECT id FROM issues WHERE key = ?) AS iid`,
		strings.ToUpper(f.ProjectKey), strings.ToUpper(f.IssueKey)).Scan(ctx, &pid, &iid)
	if err != nil {
		return false, fmt.Errorf("resolve job filter keys: %w", store.Translate(err))
	}
	if f.ProjectKey != "" {
		if pid == nil || (f.ProjectID != nil && *f.ProjectID != *pid) {
			return false, nil
		}
		f.ProjectID = pid
	}
	if f.IssueKey != "" {
		if iid == nil || (f.IssueID != nil && *f.IssueID != *iid) {
			return false, nil
		}
		f.IssueID = iid
	}
	return true, nil
}

// where builds the filter's conditions. The project and issue ids become jsonb
// containment tests, which the GIN index on river_job.args answers: one document, or
// two ORed when an issue is asked for (its id alone, or within an issueIds array).
func (f Filter) where() (func(*bun.SelectQuery) *bun.SelectQuery, error) {
	base := map[string]any{}
	if f.ProjectID != nil {
		base["projectId"] = f.ProjectID.String()
	}
	var shapes []map[string]any
	switch {
	case f.IssueID != nil:
		one, many := maps.Clone(base), maps.Clone(base)
		one["issueId"], many["issueIds"] = f.IssueID.String(), []string{f.IssueID.String()}
		shapes = []map[string]any{one, many}
	case len(base) > 0:
		shapes = []map[string]any{base}
	}
	docs := make([]string, len(shapes))
	for i, shape := range shapes {
		doc, err := json.Marshal(shape)
		if err != nil {
			return nil, err
		}
		docs[i] = string(doc)
	}
	return func(q *bun.SelectQuery) *bun.SelectQuery {
		if f.State != "" {
			q = q.Where("state = ?", f.State)
		}
		if f.Kind != "" {
			q = q.Where("kind = ?", f.Kind)
		}
		if f.Queue != "" {
			q = q.Where("queue = ?", f.Queue)
		}
		if len(docs) > 0 {
			q = q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
				for _, doc := range docs {
					q = q.WhereOr("args @> ?::jsonb", doc)
				}
				return q
			})
		}
		return q
	}, nil
}

func (r *jobRow) job() (Job, error) {
	j := Job{
		ID: r.ID, Kind: r.Kind, Queue: r.Queue, State: r.State, Attempt: r.Attempt, MaxAttempts: r.MaxAttempts,
		Priority: r.Priority, Args: json.RawMessage(r.Args), Metadata: json.RawMessage(r.Metadata),
		ErrorCount: r.ErrorCount, AttemptedAt: r.AttemptedAt, CreatedAt: r.CreatedAt, ScheduledAt: r.ScheduledAt,
		FinalizedAt: r.FinalizedAt,
	}
	if r.LastError != nil {
		var e rivertype.AttemptError
		if err := json.Unmarshal([]byte(*r.LastError), &e); err != nil {
			return Job{}, fmt.Errorf("job %d: decode last error: %w", r.ID, err)
		}
		j.LastError = &e
	}
	if err := json.Unmarshal([]byte(r.AttemptedBy), &j.AttemptedBy); err != nil {
		return Job{}, fmt.Errorf("job %d: decode attempted_by: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(r.Tags), &j.Tags); err != nil {
		return Job{}, fmt.Errorf("job %d: decode tags: %w", r.ID, err)
	}
	return j, nil
}

// fromRow converts River's row (detail, retry, cancel) into a Job with every error.
func fromRow(r *rivertype.JobRow) *Job {
	j := &Job{
		ID: r.ID, Kind: r.Kind, Queue: r.Queue, State: string(r.State), Attempt: r.Attempt, MaxAttempts: r.MaxAttempts,
		Priority: r.Priority, Args: json.RawMessage(r.EncodedArgs), Metadata: json.RawMessage(r.Metadata),
		Errors: r.Errors, ErrorCount: len(r.Errors), AttemptedAt: r.AttemptedAt, AttemptedBy: r.AttemptedBy,
		CreatedAt: r.CreatedAt, ScheduledAt: r.ScheduledAt, FinalizedAt: r.FinalizedAt, Tags: r.Tags,
	}
	if len(r.Errors) > 0 {
		last := r.Errors[len(r.Errors)-1]
		j.LastError = &last
	}
	return j
}

// Get returns one job with every attempt's error.
func (s *Service) Get(ctx context.Context, id int64) (*Job, error) {
	r, err := s.river.JobGet(ctx, id)
	if err != nil {
		return nil, jobError("get", id, err)
	}
	return fromRow(r), nil
}

// Retry makes a job available again now, with River's rules: a running job is left
// alone (the reply shows it still running), any other state becomes available, and
// max attempts grows by one when they were used up. The audit job commits with it.
func (s *Service) Retry(ctx context.Context, actor Actor, id int64) (*Job, error) {
	return s.change(ctx, actor, id, ActionJobRetried, "retry", s.river.JobRetryTx)
}

// Cancel cancels a job with River's rules: a finalized job (completed, cancelled,
// discarded) is left as it is, a running one is marked for cancellation and its worker
// told to stop (it stays running until the worker returns), any other is cancelled at
// once. The audit job commits with it.
func (s *Service) Cancel(ctx context.Context, actor Actor, id int64) (*Job, error) {
	return s.change(ctx, actor, id, ActionJobCancelled, "cancel", s.river.JobCancelTx)
}

// change runs one River operation and its audit entry in one transaction. The entry is
// written even when River leaves the job untouched: it records what support staff asked
// for, and its details tell the state before and after.
func (s *Service) change(ctx context.Context, actor Actor, id int64, action, verb string,
	op func(context.Context, *sql.Tx, int64) (*rivertype.JobRow, error)) (*Job, error) {
	var out *Job
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		after, err := s.changeTx(ctx, tx, actor, id, action, verb, op)
		if err != nil {
			return err
		}
		out = fromRow(after)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// changeTx is change's work on the caller's transaction.
func (s *Service) changeTx(ctx context.Context, tx bun.Tx, actor Actor, id int64, action, verb string,
	op func(context.Context, *sql.Tx, int64) (*rivertype.JobRow, error)) (*rivertype.JobRow, error) {
	before, err := s.river.JobGetTx(ctx, tx.Tx, id)
	if err != nil {
		return nil, jobError(verb, id, err)
	}
	after, err := op(ctx, tx.Tx, id)
	if err != nil {
		return nil, jobError(verb, id, err)
	}
	err = s.record(ctx, tx, actor, action, ResourceJob, fmt.Sprint(id), map[string]any{"kind": after.Kind,
		"queue": after.Queue, "stateBefore": string(before.State), "stateAfter": string(after.State)})
	if err != nil {
		return nil, err
	}
	return after, nil
}

func jobError(op string, id int64, err error) error {
	if errors.Is(err, rivertype.ErrNotFound) {
		return ErrJobNotFound
	}
	if errors.Is(err, rivertype.ErrJobRunning) {
		return ErrJobRunning
	}
	return fmt.Errorf("%s job %d: %w", op, id, store.Translate(err))
}
