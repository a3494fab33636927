package automation

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/automation/creator"
	"github.com/taskweave/taskweave/store"
)

// Audit actions of every change to a rule (WRITE level), besides AuditEnabled and
// AuditTakenOver.
const (
	AuditCreated = "AUTOMATION_RULE_CREATED"
	AuditUpdated = "AUTOMATION_RULE_UPDATED"
	AuditDeleted = "AUTOMATION_RULE_DELETED"
	AuditToggled = "AUTOMATION_RULE_TOGGLED"
)

// RuleChange is an update of a saved rule: the members set replace the rule's, the
// others keep their values (a nil Root keeps the condition tree, a nil Actions the
// actions, a nil TriggerPayload the filters; JSON null clears them).
type RuleChange struct {
	Name           *string
	TriggerType    *string
	TriggerPayload json.RawMessage
	Root           *GroupInput
	Actions        []ActionInput
	ActionsSet     bool
	Enabled        *bool
	// Schedule, Timezone and Filter replace a scheduled rule's (a nil Filter keeps it,
	// JSON null clears it).
	Schedule *string
	Timezone *string
	Filter   json.RawMessage
}

// Update applies ch to a saved rule and validates the result whole, as Create does:
// trigger, filters, condition tree and actions. The rule keeps its id, scope, creator
// and execution log. Turning a rule on needs a creator who may have it act
// (ErrCreatorIneligible otherwise), as Toggle does.
func (s *Service) Update(ctx context.Context, sc Scope, by audit.Actor, id uuid.UUID, ch RuleChange) (*Rule, error) {
	var project *uuid.UUID
	if sc.Project != nil {
		project = &sc.Project.ID
	}
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		cur, err := lockRule(ctx, tx, sc, id)
		if err != nil {
			return err
		}
		saved, err := loadRules(ctx, tx, func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("r.id = ?", id) })
		if err != nil {
			return err
		}
		if len(saved) == 0 {
			return ErrNotFound
		}
		unmask(ch.Actions, saved[0].Actions)
		in := ch.apply(inputOf(&saved[0]))
		r, rs, ps := check(in, sc.Project != nil)
		if r == nil {
			return &ValidationError{Problems: ps}
		}
		if len(ps) == 0 {
			ps = checkSelfTrigger(r, project)
		}
		more, err := checkRefs(ctx, tx, sc, rs)
		if err != nil {
			return err
		}
		if ps = append(append(ps, more...), s.checkURLs(ctx, rs.urls)...); len(ps) > 0 {
			return &ValidationError{Problems: ps}
		}
		if r.Enabled && !cur.Enabled {
			reason, err := creator.Refusal(ctx, tx, id)
			if err != nil {
				return err
			}
			if reason != "" {
				return fmt.Errorf("%w: %s", ErrCreatorIneligible, reason)
			}
		}
		if err := replaceRule(ctx, tx, cur, r); err != nil {
			return err
		}
		return s.record(ctx, tx, by, AuditUpdated, cur, map[string]any{"ruleName": r.Name, "previousName": cur.Name,
			"triggerType": r.TriggerType, "previousTriggerType": cur.TriggerType, "enabled": r.Enabled,
			"conditions": countConditions(r.Root), "actions": len(r.Actions)})
	})
	if err != nil {
		return nil, err
	}
	return s.Get(ctx, sc, id)
}

// NameOnly reports whether ch renames the rule and changes nothing else.
func (ch RuleChange) NameOnly() bool {
	return ch.Name != nil && ch.withoutName().Empty()
}

// Empty reports whether ch changes nothing.
func (ch RuleChange) Empty() bool {
	return ch.Name == nil && ch.TriggerType == nil && ch.TriggerPayload == nil && ch.Root == nil && !ch.ActionsSet &&
		ch.Enabled == nil && ch.Schedule == nil && ch.Timezone == nil && ch.Filter == nil
}

func (ch RuleChange) withoutName() RuleChange { ch.Name = nil; return ch }

// apply overrides in with the members ch sets.
func (ch RuleChange) apply(in RuleInput) RuleInput {
	if ch.Name != nil {
		in.Name = *ch.Name
	}
	if ch.TriggerType != nil {
		in.TriggerType = *ch.TriggerType
	}
	if ch.TriggerPayload != nil {
		in.TriggerPayload = ch.TriggerPayload
	}
	if ch.Root != nil {
		in.Root = *ch.Root
	}
	if ch.ActionsSet {
		in.Actions = ch.Actions
	}
	if ch.Enabled != nil {
		in.Enabled = *ch.Enabled
	}
	if ch.Schedule != nil {
		in.Schedule = ch.Schedule
	}
	if ch.Timezone != nil {
		in.Timezone = ch.Timezone
	}
	if ch.Filter != nil {
		in.Filter = ch.Filter
	}
	// A rule turned into one of another trigger drops the scheduled members it had
	// unless the change sends them again (and is refused then).
	if ch.TriggerType != nil && *ch.TriggerType != TriggerScheduled {
		if ch.Schedule == nil {
			in.Schedule = nil
		}
		if ch.Timezone == nil {
			in.Timezone = nil
		}
		if ch.Filter == nil {
			in.Filter = nil
		}
	}
	return in
}

// inputOf is a saved rule as the request that would create it.
func inputOf(r *Rule) RuleInput {
	in := RuleInput{Name: r.Name, TriggerType: r.TriggerType, Enabled: r.Enabled, Root: groupInputOf(r.Root),
		Schedule: r.Schedule, Timezone: r.Timezone}
	if r.Filter != nil {
		in.Filter = filterJSON(*r.Filter)
	}
	if r.TriggerPayload != nil {
		in.TriggerPayload, _ = json.Marshal(*r.TriggerPayload)
	}
	for _, a := range r.Actions {
		pos := a.Position
		in.Actions = append(in.Actions, ActionInput{Position: &pos, Type: a.Type, Params: rawParams(a.Params)})
	}
	return in
}

func groupInputOf(g Group) GroupInput {
	out := GroupInput{Logic: g.Logic}
	for _, c := range g.Conditions {
		out.Conditions = append(out.Conditions, ConditionInput{Type: c.Type, Operator: c.Operator, Params: rawParams(c.Params)})
	}
	for _, c := range g.Groups {
		out.Groups = append(out.Groups, groupInputOf(c))
	}
	return out
}

// rawParams are stored parameters as request members (strings, as they are stored).
func rawParams(m map[string]string) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		out[k], _ = json.Marshal(v)
	}
	return out
}

// replaceRule writes r over the row cur and replaces its tree and actions: the
// groups' deletion cascades to their conditions.
func replaceRule(ctx context.Context, tx bun.Tx, cur *store.AutomationRule, r *Rule) error {
	row := *cur
	row.Name, row.TriggerType, row.TriggerPayload, row.Enabled = r.Name, r.TriggerType, r.TriggerPayload, r.Enabled
	changed := deref(cur.Schedule) != deref(r.Schedule) || deref(cur.Timezone) != deref(r.Timezone) || (r.Enabled && !cur.Enabled)
	row.Schedule, row.Timezone, row.Filter = r.Schedule, r.Timezone, r.Filter
	if r.Enabled {
		row.DisabledReason, row.DisabledAt = nil, nil
	}
	if _, err := tx.NewUpdate().Model(&row).WherePK().
		Column("name", "trigger_type", "trigger_payload", "enabled", "disabled_reason", "disabled_at", "schedule", "timezone",
			"filter").Exec(ctx); err != nil {
		return fmt.Errorf("update rule: %w", err)
	}
	if err := syncSchedule(ctx, tx, cur.ID, r, changed); err != nil {
		return err
	}
	if _, err := tx.NewDelete().Table("automation_groups").Where("rule_id = ?", cur.ID).Exec(ctx); err != nil {
		return fmt.Errorf("delete condition groups: %w", err)
	}
	if _, err := tx.NewDelete().Table("automation_actions").Where("rule_id = ?", cur.ID).Exec(ctx); err != nil {
		return fmt.Errorf("delete actions: %w", err)
	}
	return insertTree(ctx, tx, cur.ID, r)
}

func countConditions(g Group) int {
	n := len(g.Conditions)
	for _, c := range g.Groups {
		n += countConditions(c)
	}
	return n
}
