package work

import (
	"context"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/project"
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
	details := map[string]string{"issueKey": v.Key, "projectKey": a.Project.Key}
	e, err := core.ReadEntry(actor, audit.IssueViewed, "ISSUE", v.ID.String(), a.Project.ID, details)
	if err != nil {
		s.Log.Warn("ISSUE_VIEWED details", "err", err)
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), issueViewedTimeout)
		defer cancel()
		if err := s.RecordInTx(ctx, e, nil); err != nil {
			s.Log.Warn("record ISSUE_VIEWED", "issue", e.ResourceID, "err", err)
		}
	}()
}
