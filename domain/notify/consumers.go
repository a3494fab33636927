package notify

import (
	"context"
	"html"
	"regexp"
	"strings"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/comment"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/jobs"
)

// RegisterConsumers subscribes notifications to the issue and comment events: each
// event becomes one job the workers turn into notifications (and e-mails).
func RegisterConsumers(bus *event.Bus) {
	bus.Register(Consumer, issue.EventCreated, issue.EventFieldChanged, issue.EventStatusChanged, comment.EventCreated)
}

// Consumer maps an event to its notification job. It drops what can never notify
// anybody (an issue created unassigned or assigned to its creator, a field other than
// the assignee, an assignee cleared) so those cost no job; who else is excluded (the
// actor, inactive users, switched-off preferences) is the worker's business.
func Consumer(ctx context.Context, _ bun.Tx, ev event.Event) ([]river.InsertManyParams, error) {
	args, ok := jobFor(ev)
	if !ok {
		return nil, nil
	}
	args.TaskID = event.TaskOf(ctx)
	return []river.InsertManyParams{{Args: args}}, nil
}

// jobFor builds the job of ev; ok is false when the event notifies nobody.
func jobFor(ev event.Event) (jobs.NotifyEvent, bool) {
	switch e := ev.(type) {
	case issue.Created:
		if e.AssigneeID == nil || same(e.AssigneeID, e.By.ID) {
			return jobs.NotifyEvent{}, false
		}
		j := base(jobs.NotifyAssigned, e.Subject, e.By)
		j.AssigneeID = e.AssigneeID
		return j, true
	case issue.FieldChanged:
		if e.Field != issue.FieldAssignee || e.NewRaw == "" {
			return jobs.NotifyEvent{}, false
		}
		id, err := uuid.Parse(e.NewRaw)
		if err != nil || same(&id, e.By.ID) {
			return jobs.NotifyEvent{}, false
		}
		j := base(jobs.NotifyAssigned, e.Subject, e.By)
		j.AssigneeID = &id
		return j, true
	case issue.StatusChanged:
		j := base(jobs.NotifyStatusChanged, e.Subject, e.By)
		j.OldStatus, j.NewStatus = e.OldStatusName, e.NewStatusName
		return j, true
	case comment.Created:
		j := base(jobs.NotifyCommented, e.Subject, e.By)
		id := e.CommentID
		j.CommentID, j.Excerpt, j.Mentioned = &id, Excerpt(e.Body), e.Mentioned
		return j, true
	}
	return jobs.NotifyEvent{}, false
}

func base(kind string, s issue.Subject, by issue.By) jobs.NotifyEvent {
	return jobs.NotifyEvent{Event: kind, ProjectID: s.ProjectID, ProjectKey: s.ProjectKey, IssueID: s.IssueID,
		IssueKey: s.IssueKey, IssueTitle: s.Title, ActorID: by.ID}
}

// same reports whether two optional ids name the same user (a nil actor is nobody).
func same(a, b *uuid.UUID) bool { return a != nil && b != nil && *a == *b }

// ExcerptRunes is how much of a comment a notification quotes.
const ExcerptRunes = 200

var (
	tags   = regexp.MustCompile(`<[^>]*>`)
	spaces = regexp.MustCompile(`\s+`)
)

// Excerpt is the start of a comment body as one line of plain text: the sanitized HTML
// a comment may hold loses its tags and entities, whitespace collapses, and a long body
// is cut at ExcerptRunes with an ellipsis.
func Excerpt(body string) string {
	s := html.UnescapeString(tags.ReplaceAllString(body, " "))
	s = strings.TrimSpace(spaces.ReplaceAllString(s, " "))
	return truncate(s, ExcerptRunes)
}

// truncate cuts s to at most n runes, the last being an ellipsis when it cut.
func truncate(s string, n int) string {
	if len(s) <= n { // bytes ≥ runes: short enough either way
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
