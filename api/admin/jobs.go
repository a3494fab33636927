package admin

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/riverqueue/river/rivertype"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/queue"
)

// jobListPageSize is GET /admin/jobs's default page size (docs/api-conventions.md#pages).
const jobListPageSize = 20

// jobOps builds the job service; it holds no state, so one per request costs nothing.
func (s *handlers) jobOps() *queue.Service { return queue.NewService(s.DB.Bun, s.River, s.Audit) }

// jobErrorResponse is one failed attempt, as River records it.
type jobErrorResponse struct {
	At      string `json:"at"`
	Attempt int    `json:"attempt"`
	Error   string `json:"error"`
	Trace   string `json:"trace"`
}

// jobSummaryResponse is a job in the list: every member but the error history, of
// which it tells the count and the last entry.
type jobSummaryResponse struct {
	ID          int64             `json:"id"`
	Kind        string            `json:"kind"`
	Queue       string            `json:"queue"`
	State       string            `json:"state"`
	Attempt     int               `json:"attempt"`
	MaxAttempts int               `json:"maxAttempts"`
	Priority    int               `json:"priority"`
	Args        json.RawMessage   `json:"args"`
	Metadata    json.RawMessage   `json:"metadata"`
	ErrorCount  int               `json:"errorCount"`
	LastError   *jobErrorResponse `json:"lastError"`
	AttemptedAt *string           `json:"attemptedAt"`
	AttemptedBy []string          `json:"attemptedBy"`
	CreatedAt   string            `json:"createdAt"`
	ScheduledAt string            `json:"scheduledAt"`
	FinalizedAt *string           `json:"finalizedAt"`
	Tags        []string          `json:"tags"`
}

// jobResponse is one job with every attempt's error, oldest first.
type jobResponse struct {
	jobSummaryResponse
	Errors []jobErrorResponse `json:"errors"`
}

func toJobError(e rivertype.AttemptError) jobErrorResponse {
	return jobErrorResponse{At: core.Instant(e.At), Attempt: e.Attempt, Error: e.Error, Trace: e.Trace}
}

// rawObject keeps River's JSON as sent, with {} for an empty column.
func rawObject(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("{}")
	}
	return b
}

func toJobSummary(j *queue.Job) jobSummaryResponse {
	r := jobSummaryResponse{
		ID: j.ID, Kind: j.Kind, Queue: j.Queue, State: j.State, Attempt: j.Attempt, MaxAttempts: j.MaxAttempts,
		Priority: j.Priority, Args: rawObject(j.Args), Metadata: rawObject(j.Metadata), ErrorCount: j.ErrorCount,
		AttemptedAt: core.InstantPtr(j.AttemptedAt), AttemptedBy: j.AttemptedBy, CreatedAt: core.Instant(j.CreatedAt),
		ScheduledAt: core.Instant(j.ScheduledAt), FinalizedAt: core.InstantPtr(j.FinalizedAt), Tags: j.Tags,
	}
	if j.LastError != nil {
		e := toJobError(*j.LastError)
		r.LastError = &e
	}
	if r.AttemptedBy == nil {
		r.AttemptedBy = []string{}
	}
	if r.Tags == nil {
		r.Tags = []string{}
	}
	return r
}

func toJobResponse(j *queue.Job) jobResponse {
	r := jobResponse{jobSummaryResponse: toJobSummary(j), Errors: make([]jobErrorResponse, 0, len(j.Errors))}
	for _, e := range j.Errors {
		r.Errors = append(r.Errors, toJobError(e))
	}
	return r
}

// parseJobFilter reads the list filters from a query getter (the JSON list and the ops
// page share it). state is one of River's states (case-insensitive); ids must be UUIDs.
func parseJobFilter(query func(string) string) (queue.Filter, error) {
	var f queue.Filter
	if v := query("state"); v != "" {
		v = strings.ToLower(v)
		if !queue.ValidState(v) {
			return f, core.BadRequest("INVALID_ENUM", "field", "state", "values", strings.Join(queue.States, ", "))
		}
		f.State = v
	}
	// Slices, not maps: with several bad parameters the reply names the same one every time.
	for _, p := range []struct {
		name string
		dst  *string
	}{{"kind", &f.Kind}, {"queue", &f.Queue}, {"projectKey", &f.ProjectKey}, {"issueKey", &f.IssueKey}} {
		name, dst := p.name, p.dst
		v := query(name)
		if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
			return f, core.BadRequest("INVALID_QUERY", "field", name)
		}
		*dst = strings.Clone(v)
	}
	for _, p := range []struct {
		name string
		dst  **uuid.UUID
	}{{"projectId", &f.ProjectID}, {"issueId", &f.IssueID}} {
		var err error
		if *p.dst, err = core.QueryID(p.name, query(p.name)); err != nil {
			return f, err
		}
	}
	return f, nil
}

// parseJobID reads the :id path parameter: River's ids are positive 64-bit integers.
func parseJobID(c *fiber.Ctx) (int64, error) {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil || id < 1 {
		return 0, core.BadRequest("INVALID_JOB_ID")
	}
	return id, nil
}

// parseJobPage parses page and size of the job list.
func parseJobPage(c *fiber.Ctx) (core.PageRequest, error) { return core.ParsePage(c, jobListPageSize) }

func (s *handlers) listJobs(c *fiber.Ctx) error {
	pr, err := parseJobPage(c)
	if err != nil {
		return err
	}
	f, err := parseJobFilter(func(k string) string { return c.Query(k) })
	if err != nil {
		return err
	}
	after, err := pr.AfterInt("jobs")
	if err != nil {
		return err
	}
	js, total, exact, err := s.jobOps().List(c.UserContext(), f, after, pr.Offset(), pr.Limit())
	if err != nil {
		return err
	}
	next := pr.Next(c, "jobs", len(js), total, func(i int) []string { return []string{strconv.FormatInt(js[i].ID, 10)} })
	js = core.Trim(js, pr)
	content := make([]jobSummaryResponse, len(js))
	for i := range js {
		content[i] = toJobSummary(&js[i])
	}
	return c.JSON(core.NewCountedPage(content, pr, total, exact, next))
}

func (s *handlers) getJob(c *fiber.Ctx) error {
	id, err := parseJobID(c)
	if err != nil {
		return err
	}
	j, err := s.jobOps().Get(c.UserContext(), id)
	if err != nil {
		return err
	}
	return c.JSON(toJobResponse(j))
}

// jobActor is the audit identity of a retry or cancel.
func jobActor(c *fiber.Ctx) queue.Actor { return queue.Actor{Actor: core.AuditActor(c)} }

func (s *handlers) retryJob(c *fiber.Ctx) error {
	id, err := parseJobID(c)
	if err != nil {
		return err
	}
	j, err := s.jobOps().Retry(c.UserContext(), jobActor(c), id)
	if err != nil {
		return err
	}
	return c.JSON(toJobResponse(j))
}

func (s *handlers) cancelJob(c *fiber.Ctx) error {
	id, err := parseJobID(c)
	if err != nil {
		return err
	}
	j, err := s.jobOps().Cancel(c.UserContext(), jobActor(c), id)
	if err != nil {
		return err
	}
	return c.JSON(toJobResponse(j))
}

// queueResponse is one queue of GET /admin/queues.
type queueResponse struct {
	Name                      string  `json:"name"`
	Available                 int     `json:"available"`
	Scheduled                 int     `json:"scheduled"`
	Running                   int     `json:"running"`
	Retryable                 int     `json:"retryable"`
	Pending                   int     `json:"pending"`
	Completed                 int     `json:"completed"`
	Discarded                 int     `json:"discarded"`
	Cancelled                 int     `json:"cancelled"`
	OldestAvailableAgeSeconds float64 `json:"oldestAvailableAgeSeconds"`
	Paused                    bool    `json:"paused"`
}

func toQueueResponse(q queue.QueueStats) queueResponse {
	return queueResponse{Name: q.Name, Available: q.Available, Scheduled: q.Scheduled, Running: q.Running,
		Retryable: q.Retryable, Pending: q.Pending, Completed: q.Completed, Discarded: q.Discarded,
		Cancelled: q.Cancelled, OldestAvailableAgeSeconds: q.OldestAvailableAgeSeconds, Paused: q.Paused}
}

func (s *handlers) listQueues(c *fiber.Ctx) error {
	qs, err := s.jobOps().Queues(c.UserContext())
	if err != nil {
		return err
	}
	out := make([]queueResponse, len(qs))
	for i, q := range qs {
		out[i] = toQueueResponse(q)
	}
	return c.JSON(out)
}
