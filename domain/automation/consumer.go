package automation

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/comment"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/sprint"
	"github.com/taskweave/taskweave/jobs"
)

// depthKey marks the chain depth in a context; chainKey the chain.
type (
	depthKey struct{}
	chainKey struct{}
)

// WithChainDepth returns ctx carrying the chain depth of the changes made under it: the
// worker runs a depth-n evaluation's actions under n+1, so the events they publish
// become depth-(n+1) evaluations.
func WithChainDepth(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, depthKey{}, n)
}

// ChainDepth is the chain depth ctx carries: 0 for a change a person made.
func ChainDepth(ctx context.Context) int {
	n, _ := ctx.Value(depthKey{}).(int)
	return n
}

// WithChain returns ctx carrying the chain (the root event's id) and depth of the
// changes made under it: the evaluations their events cause spend the same action
// budget (docs/automation.md#action-budget).
func WithChain(ctx context.Context, chain uuid.UUID, depth int) context.Context {
	return context.WithValue(WithChainDepth(ctx, depth), chainKey{}, chain)
}

// Chain is the chain ctx carries; uuid.Nil for a change a person made (which starts
// one of its own).
func Chain(ctx context.Context) uuid.UUID {
	id, _ := ctx.Value(chainKey{}).(uuid.UUID)
	return id
}

// RegisterConsumers subscribes automation to every event with a trigger, and the audit
// log to Fired.
func RegisterConsumers(bus *event.Bus, rec *audit.Recorder) {
	bus.Register(Consumer, issue.EventCreated, issue.EventStatusChanged, issue.EventFieldChanged,
		comment.EventCreated, sprint.EventStarted, sprint.EventCompleted)
	bus.Register(auditConsumer(rec), EventFired)
	bus.RegisterPrefetch(triggersPrefetch, issue.EventCreated, issue.EventStatusChanged, issue.EventFieldChanged,
		comment.EventCreated, sprint.EventStarted, sprint.EventCompleted)
}

// triggersPrefetch lets an emitter read activeTriggers' answer ahead, with a statement of
// its own, instead of the consumer reading it while the emitter holds its locks.
var triggersPrefetch = event.Prefetch{
	Key: triggersKey,
	SQL: func(project string) string {
		return `(SELECT coalesce(string_agg(DISTINCT trigger_type, ','), '') FROM automation_rules
			WHERE enabled AND (project_id = ` + project + ` OR project_id IS NULL))`
	},
	Decode: func(s string) (any, error) {
		out := map[string]bool{}
		for _, t := range strings.Split(s, ",") {
			if t != "" {
				out[t] = true
			}
		}
		return out, nil
	},
}

func triggersKey(projectID uuid.UUID) string { return "automation.triggers." + projectID.String() }

// Consumer turns an event with a trigger into one evaluation job per issue it is about,
// in the event's transaction. The job carries a fresh event id (the exactly-once key),
// the extras the trigger's filters compare, the chain depth and the event's time. An
// event of a project with no enabled rule for its trigger (none of its own, no SYSTEM
// one) costs no job: one indexed read per project and Emit call tells.
func Consumer(ctx context.Context, tx bun.Tx, ev event.Event) ([]river.InsertManyParams, error) {
	trigger, projectID, issues, extras := triggerOf(ev)
	if trigger == "" || len(issues) == 0 {
		return nil, nil
	}
	active, err := activeTriggers(ctx, tx, projectID)
	if err != nil || !active[trigger] {
		return nil, err
	}
	depth, chain, at := ChainDepth(ctx), Chain(ctx), time.Now().UTC()
	out := make([]river.InsertManyParams, 0, len(issues))
	for _, id := range issues {
		ev := newID()
		root := chain
		if root == uuid.Nil {
			root = ev // a person's change: the root of its own chain
		}
		out = append(out, river.InsertManyParams{Args: jobs.AutomationEvaluate{EventID: ev, ChainID: root, Trigger: trigger,
			ProjectID: projectID, IssueID: id, Extras: extras, ChainDepth: depth, EventAt: at}})
	}
	return out, nil
}

// triggerOf maps an event to its trigger, project, issues and extras; "" when the event
// triggers nothing (a field change other than priority or assignee, a comment an
// automation rule wrote).
func triggerOf(ev event.Event) (trigger string, project uuid.UUID, issues []uuid.UUID, extras map[string]string) {
	switch e := ev.(type) {
	case issue.Created:
		return TriggerIssueCreated, e.ProjectID, []uuid.UUID{e.IssueID}, nil
	case issue.StatusChanged:
		return TriggerStatusChanged, e.ProjectID, []uuid.UUID{e.IssueID},
			map[string]string{payloadKeyToStatusID: e.NewStatusID.String()}
	case issue.FieldChanged:
		switch e.Field {
		case issue.FieldPriority:
			return TriggerPriorityChanged, e.ProjectID, []uuid.UUID{e.IssueID}, map[string]string{payloadKeyPriority: e.NewRaw}
		case issue.FieldAssignee:
			return TriggerAssigneeChanged, e.ProjectID, []uuid.UUID{e.IssueID}, nil
		}
	case comment.Created:
		if !e.Automated {
			return TriggerCommentAdded, e.ProjectID, []uuid.UUID{e.IssueID}, nil
		}
	case sprint.Started:
		return TriggerSprintStarted, e.ProjectID, e.IssueIDs, nil
	case sprint.Completed:
		return TriggerSprintCompleted, e.ProjectID, e.IssueIDs, nil
	}
	return "", uuid.Nil, nil, nil
}

// activeTriggers reads which triggers have an enabled rule for the project (its own or
// SYSTEM), once per Emit call.
func activeTriggers(ctx context.Context, tx bun.Tx, projectID uuid.UUID) (map[string]bool, error) {
	return event.Memo(ctx, triggersKey(projectID), func() (map[string]bool, error) {
		// Positional, on the *sql.Tx: prepared once per connection, as it runs with
		// every change of every project.
		rows, err := tx.Tx.QueryContext(ctx, `SELECT DISTINCT trigger_type FROM automation_rules
			WHERE enabled AND (project_id = $1 OR project_id IS NULL)`, projectID)
		if err != nil {
			return nil, fmt.Errorf("read automation triggers: %w", err)
		}
		defer rows.Close()
		out := map[string]bool{}
		for rows.Next() {
			var t string
			if err := rows.Scan(&t); err != nil {
				return nil, fmt.Errorf("read automation triggers: %w", err)
			}
			out[t] = true
		}
		return out, rows.Err()
	})
}
