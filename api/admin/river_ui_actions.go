package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/queue"
)

// River UI's mutating API calls, answered here with the request and reply River UI's
// front end uses (riverui v0.22.0's handler_api_endpoint.go), so that each change and its
// audit entries commit in one transaction: River UI's own endpoints commit on a
// connection of their own, where no audit job could join them.
//
//	POST /api/jobs/cancel         {"ids": ["1", "2"]}  JOB_CANCELLED per job
//	POST /api/jobs/retry          {"ids": [...]}       JOB_RETRIED per job
//	POST /api/jobs/delete         {"ids": [...]}       JOB_DELETED per job
//	PUT  /api/queues/{name}/pause                      QUEUE_PAUSED
//	PUT  /api/queues/{name}/resume                     QUEUE_RESUMED
//
// River UI's one other mutating call, PATCH /api/queues/{name} (a queue's concurrency
// limits, which only River Pro's workers obey), is not served: nothing is registered for
// it, so it is 405 and changes nothing.

// riverUIVia tags the audit entries of River UI's operations.
const riverUIVia = "river-ui"

// riverUIOK is River UI's success reply to its mutating calls.
var riverUIOK = fiber.Map{"status": "ok"}

// parseRiverUIJobIDs reads {"ids": [...]} as River UI sends it: ids as strings (its
// front end always sends strings, so that every int64 survives JavaScript) or as JSON
// numbers, 1 to queue.MaxBatch of them, each a positive whole number. Anything else is
// one BAD_REQUEST naming the rule.
func parseRiverUIJobIDs(body core.Body) ([]int64, error) {
	var req struct {
		IDs *[]json.RawMessage `json:"ids"`
	}
	if err := body.Decode(&req); err != nil {
		return nil, err
	}
	if req.IDs == nil {
		return nil, core.Required("ids")
	}
	invalid := core.BadRequest("INVALID_JOB_IDS", "max", strconv.Itoa(queue.MaxBatch))
	raw := *req.IDs
	if len(raw) == 0 || len(raw) > queue.MaxBatch {
		return nil, invalid
	}
	ids := make([]int64, 0, len(raw))
	for _, r := range raw {
		text := string(bytes.TrimSpace(r))
		var quoted string
		if json.Unmarshal(r, &quoted) == nil {
			text = quoted
		}
		id, err := strconv.ParseInt(text, 10, 64)
		if err != nil || id < 1 {
			return nil, invalid
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// riverUIActor is the caller as the audit entries name it.
func riverUIActor(c *fiber.Ctx) queue.Actor {
	a := jobActor(c)
	a.Via = riverUIVia
	return a
}

// riverUIJobOp is a batch operation of the job service, as a method expression.
type riverUIJobOp func(*queue.Service, context.Context, queue.Actor, []int64) error

func (s *handlers) riverUIJobsDo(c *fiber.Ctx, op riverUIJobOp) error {
	ids, err := parseRiverUIJobIDs(core.BodyOf(c))
	if err != nil {
		return err
	}
	if err := op(s.jobOps(), c.UserContext(), riverUIActor(c), ids); err != nil {
		return err
	}
	return c.JSON(riverUIOK)
}

func (s *handlers) riverUICancelJobs(c *fiber.Ctx) error {
	return s.riverUIJobsDo(c, (*queue.Service).CancelMany)
}

func (s *handlers) riverUIRetryJobs(c *fiber.Ctx) error {
	return s.riverUIJobsDo(c, (*queue.Service).RetryMany)
}

func (s *handlers) riverUIDeleteJobs(c *fiber.Ctx) error {
	return s.riverUIJobsDo(c, (*queue.Service).DeleteMany)
}

func (s *handlers) riverUIPauseQueue(c *fiber.Ctx) error {
	if err := s.jobOps().PauseQueue(c.UserContext(), riverUIActor(c), c.Params("name")); err != nil {
		return err
	}
	return c.JSON(riverUIOK)
}

func (s *handlers) riverUIResumeQueue(c *fiber.Ctx) error {
	if err := s.jobOps().ResumeQueue(c.UserContext(), riverUIActor(c), c.Params("name")); err != nil {
		return err
	}
	return c.JSON(riverUIOK)
}
