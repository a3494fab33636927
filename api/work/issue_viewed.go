package work

import (
	"context"
	"encoding/json"
	"github.com/taskweave/taskweave/api/core"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/store"
)

// issueViewedTimeout bounds the enqueueing of one ISSUE_VIEWED entry.
const issueViewedTimeout = 10 * time.Second

// issueViewed records a single-issue read as ISSUE_VIEWED (audit level ALL; Get read the
// toggle with the issue, so with the level off this costs nothing). The audit job is
// enqueued off the request, by a goroutine, so the read answers without waiting for the
// insert; a worker writes the row, as for every audit entry. The price: a process that
// dies in the milliseconds between the reply and the insert loses that one view entry
// (a view changes nothing, and nothing else depends on the entry).
func (s *handlers) issueViewed(c *fiber.Ctx, a *project.Access, v *issue.View) {
	actor := core.AuditActor(c)
	// The request's strings live in buffers fasthttp reuses once the handler returns.
	actor.Email, actor.IP, actor.UserAgent = strings.Clone(actor.Email), strings.Clone(actor.IP), strings.Clone(actor.UserAgent)
	details, err := json.Marshal(map[string]string{"issueKey": v.Key, "projectKey": a.Project.Key})
	if err != nil {
		s.Log.Warn("ISSUE_VIEWED details", "err", err)
		return
	}
	e := actor.Entry(audit.IssueViewed, "ISSUE", v.ID.String(), string(details))
	projectID := a.Project.ID
	e.ProjectID = &projectID
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), issueViewedTimeout)
		defer cancel()
		err := store.InTx(ctx, s.DB.Bun, func(ctx context.Context, tx bun.Tx) error { return s.Audit.Record(ctx, tx, e) })
		if err != nil {
			s.Log.Warn("record ISSUE_VIEWED", "issue", e.ResourceID, "err", err)
		}
	}()
}
