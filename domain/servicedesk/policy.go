package servicedesk

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/store"
)

// NewPolicy is a validated SLA policy.
type NewPolicy struct {
	Name              string
	Priority          string
	ResponseMinutes   int
	ResolutionMinutes int
	// CalendarID makes the policy's clocks count business time of that calendar of the
	// desk only (nil: around the clock); PauseStatusIDs (statuses of the project's
	// workflow, no duplicates) stop them while the issue is in one.
	CalendarID     *uuid.UUID
	PauseStatusIDs []uuid.UUID
}

// Policy is a policy with its escalation rules (oldest first).
type Policy struct {
	store.SLAPolicy
	Rules []store.EscalationRule
}

// NewRule is a validated escalation rule; NotifyUserIDs holds no duplicates.
type NewRule struct {
	EscalateAfterMinutes int
	AssigneeID           *uuid.UUID
	NotifyUserIDs        []uuid.UUID
}

// CreatePolicy adds a policy to the project's desk: ErrDeskNotFound without one,
// ErrPolicyExists when the priority has one already.
func (s *Service) CreatePolicy(ctx context.Context, by audit.Actor, p Project, in NewPolicy) (*Policy, error) {
	pol := &Policy{Rules: []store.EscalationRule{}}
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		d, err := deskOf(ctx, tx, p.ID, true)
		if err != nil {
			return err
		}
		if in.CalendarID != nil {
			// KEY SHARE: the calendar cannot be deleted before the policy commits.
			if _, err := calendarOf(ctx, tx, p, *in.CalendarID, "KEY SHARE"); err != nil {
				return err
			}
		}
		if err := checkStatuses(ctx, tx, p, in.PauseStatusIDs); err != nil {
			return err
		}
		pause := in.PauseStatusIDs
		if pause == nil {
			pause = []uuid.UUID{}
		}
		pol.SLAPolicy = store.SLAPolicy{ServiceDeskID: d.ID, Name: in.Name, Priority: in.Priority,
			ResponseMinutes: in.ResponseMinutes, ResolutionMinutes: in.ResolutionMinutes,
			CalendarID: in.CalendarID, PauseStatusIDs: pause}
		if _, err := tx.NewInsert().Model(&pol.SLAPolicy).Returning("*").Exec(ctx); err != nil {
			if store.IsUnique(err, "sla_policies_desk_priority_key") {
				return ErrPolicyExists
			}
			return fmt.Errorf("insert SLA policy: %w", err)
		}
		return s.record(ctx, tx, by, p, AuditPolicyCreated, "SLA_POLICY", pol.ID, map[string]any{
			"name": in.Name, "priority": in.Priority, "responseMinutes": in.ResponseMinutes,
			"resolutionMinutes": in.ResolutionMinutes, "calendarId": in.CalendarID, "pauseStatusIds": pause})
	})
	if err != nil {
		return nil, err
	}
	return pol, nil
}

// Policies returns the policies of the project's desk (by creation) with their rules,
// in two queries; ErrDeskNotFound without a desk.
func (s *Service) Policies(ctx context.Context, p Project) ([]Policy, error) {
	d, err := deskOf(ctx, s.db, p.ID, false)
	if err != nil {
		return nil, err
	}
	var pols []store.SLAPolicy
	if err := s.db.NewSelect().Model(&pols).Where("sp.service_desk_id = ?", d.ID).OrderExpr("sp.created_at, sp.id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("list SLA policies: %w", err)
	}
	out := make([]Policy, len(pols))
	if len(pols) == 0 {
		return out, nil
	}
	ids := make([]uuid.UUID, len(pols))
	byID := make(map[uuid.UUID]*Policy, len(pols))
	for i := range pols {
		out[i] = Policy{SLAPolicy: pols[i], Rules: []store.EscalationRule{}}
		ids[i] = pols[i].ID
		byID[pols[i].ID] = &out[i]
	}
	var rules []store.EscalationRule
	err = s.db.NewSelect().Model(&rules).Where("er.sla_policy_id IN (?)", bun.In(ids)).OrderExpr("er.created_at, er.id").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("list escalation rules: %w", err)
	}
	for _, r := range rules {
		pol := byID[r.SLAPolicyID]
		pol.Rules = append(pol.Rules, r)
	}
	return out, nil
}

// policyOf reads a policy of the project's desk, locked FOR UPDATE when lock is set;
// another project's policy is ErrPolicyNotFound.
func policyOf(ctx context.Context, db bun.IDB, p Project, id uuid.UUID, lock bool) (*store.SLAPolicy, error) {
	pol := new(store.SLAPolicy)
	q := db.NewSelect().Model(pol).
		Join("JOIN service_desks AS d ON d.id = sp.service_desk_id").
		Where("sp.id = ? AND d.project_id = ?", id, p.ID)
	if lock {
		q = q.For("UPDATE OF sp")
	}
	if err := q.Scan(ctx); err != nil {
		if store.IsNotFound(err) {
			return nil, ErrPolicyNotFound
		}
		return nil, fmt.Errorf("load SLA policy: %w", err)
	}
	return pol, nil
}

// DeletePolicy removes a policy of the project's desk with its escalation rules and
// its breach records (the foreign keys cascade).
func (s *Service) DeletePolicy(ctx context.Context, by audit.Actor, p Project, id uuid.UUID) error {
	return store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		pol, err := policyOf(ctx, tx, p, id, true)
		if err != nil {
			return err
		}
		if _, err := tx.NewDelete().Model((*store.SLAPolicy)(nil)).Where("id = ?", id).Exec(ctx); err != nil {
			return fmt.Errorf("delete SLA policy: %w", err)
		}
		return s.record(ctx, tx, by, p, AuditPolicyDeleted, "SLA_POLICY", id, map[string]any{
			"name": pol.Name, "priority": pol.Priority})
	})
}

// AddEscalationRule adds a rule to a policy of the project's desk. The assignee and
// every recipient must be able to see the project (ErrUserNotMember).
func (s *Service) AddEscalationRule(ctx context.Context, by audit.Actor, p Project, policyID uuid.UUID, in NewRule) (*store.EscalationRule, error) {
	r := &store.EscalationRule{SLAPolicyID: policyID, EscalateAfterMinutes: in.EscalateAfterMinutes,
		AssigneeID: in.AssigneeID, NotifyUserIDs: unique(in.NotifyUserIDs)}
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		// FOR KEY SHARE: the policy cannot be deleted before the rule commits.
		pol := new(store.SLAPolicy)
		err := tx.NewSelect().Model(pol).
			Join("JOIN service_desks AS d ON d.id = sp.service_desk_id").
			Where("sp.id = ? AND d.project_id = ?", policyID, p.ID).For("KEY SHARE OF sp").Scan(ctx)
		if err != nil {
			if store.IsNotFound(err) {
				return ErrPolicyNotFound
			}
			return fmt.Errorf("load SLA policy: %w", err)
		}
		users := r.NotifyUserIDs
		if r.AssigneeID != nil {
			users = unique(append([]uuid.UUID{*r.AssigneeID}, users...))
		}
		if err := checkMembers(ctx, tx, p.ID, users); err != nil {
			return err
		}
		if _, err := tx.NewInsert().Model(r).Returning("*").Exec(ctx); err != nil {
			return fmt.Errorf("insert escalation rule: %w", err)
		}
		// The new rule's clocks (a policy with a calendar or pauses) come with the next scan.
		if _, err := tx.NewRaw("UPDATE sla_policies SET clocks_stale = true WHERE id = ?", policyID).Exec(ctx); err != nil {
			return fmt.Errorf("mark clocks stale: %w", err)
		}
		return s.record(ctx, tx, by, p, AuditRuleCreated, "ESCALATION_RULE", r.ID, map[string]any{
			"slaPolicyId": policyID, "escalateAfterMinutes": r.EscalateAfterMinutes, "assigneeId": r.AssigneeID,
			"notifyUserIds": r.NotifyUserIDs})
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// checkStatuses fails with ErrStatusNotInWorkflow unless every id is a status of the
// project's workflow.
func checkStatuses(ctx context.Context, db bun.IDB, p Project, ids []uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	if p.WorkflowID == nil {
		return ErrStatusNotInWorkflow
	}
	n, err := db.NewSelect().Table("workflow_statuses").Where("workflow_id = ? AND id IN (?)", *p.WorkflowID, bun.In(ids)).Count(ctx)
	if err != nil {
		return fmt.Errorf("check pause statuses: %w", err)
	}
	if int(n) != len(unique(ids)) {
		return ErrStatusNotInWorkflow
	}
	return nil
}
