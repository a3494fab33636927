package automation

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/automation/creator"
	"github.com/taskweave/taskweave/domain/webhook"
	"github.com/taskweave/taskweave/store"
)

// Service administers rules and reads their execution log.
type Service struct {
	db      bun.IDB
	audit   *audit.Recorder
	checker webhook.Checker
}

// NewService builds a Service; it holds no state of its own. rec records re-enables
// and take-overs.
func NewService(db *bun.DB, rec *audit.Recorder) *Service { return &Service{db: db, audit: rec} }

// WithTx returns a Service whose calls run inside tx, the caller's transaction (each
// change in a savepoint of it): an import creates its rules with its batch.
func (s *Service) WithTx(tx bun.Tx) *Service {
	c := *s
	c.db = tx
	return &c
}

// Scope is where a call works: one project (its rules), or SYSTEM (Project nil).
type Scope struct {
	Project *Project
}

// Project is what rule validation needs of a project.
type Project struct {
	ID         uuid.UUID
	WorkflowID *uuid.UUID
}

// where restricts rules (aliased r) to the scope.
func (sc Scope) where(q *bun.SelectQuery) *bun.SelectQuery {
	if sc.Project == nil {
		return q.Where("r.project_id IS NULL")
	}
	return q.Where("r.project_id = ?", sc.Project.ID)
}

// Create validates in whole and stores it with its tree and actions in one
// transaction; a *ValidationError lists every problem and nothing is stored.
func (s *Service) Create(ctx context.Context, sc Scope, by audit.Actor, in RuleInput) (*Rule, error) {
	r, rs, ps := check(in, sc.Project != nil)
	if r == nil { // past the limits: nothing more is looked at
		return nil, &ValidationError{Problems: ps}
	}
	if len(ps) == 0 {
		var project *uuid.UUID
		if sc.Project != nil {
			project = &sc.Project.ID
		}
		ps = checkSelfTrigger(r, project)
	}
	var id uuid.UUID
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		more, err := checkRefs(ctx, tx, sc, rs)
		if err != nil {
			return err
		}
		if ps = append(append(ps, more...), s.checkURLs(ctx, rs.urls)...); len(ps) > 0 {
			return &ValidationError{Problems: ps}
		}
		r.Scope, r.CreatedBy = ScopeSystem, &by.UserID
		if sc.Project != nil {
			r.Scope, r.ProjectID = ScopeProject, &sc.Project.ID
		}
		if id, err = insertRule(ctx, tx, r); err != nil {
			return err
		}
		return s.record(ctx, tx, by, AuditCreated, &store.AutomationRule{ID: id, ProjectID: r.ProjectID},
			map[string]any{"ruleName": r.Name, "triggerType": r.TriggerType, "enabled": r.Enabled,
				"conditions": countConditions(r.Root), "actions": len(r.Actions)})
	})
	if err != nil {
		return nil, err
	}
	return s.Get(ctx, sc, id)
}

// insertRule writes the rule row, its groups, conditions and actions: four statements
// whatever the size of the tree.
func insertRule(ctx context.Context, tx bun.Tx, r *Rule) (uuid.UUID, error) {
	row := store.AutomationRule{ProjectID: r.ProjectID, Scope: r.Scope, Name: r.Name, TriggerType: r.TriggerType,
		TriggerPayload: r.TriggerPayload, Enabled: r.Enabled, CreatedBy: r.CreatedBy, Schedule: r.Schedule,
		Timezone: r.Timezone, Filter: r.Filter}
	if _, err := tx.NewInsert().Model(&row).Returning("id").Exec(ctx); err != nil {
		return uuid.Nil, fmt.Errorf("insert rule: %w", err)
	}
	if err := syncSchedule(ctx, tx, row.ID, r, true); err != nil {
		return uuid.Nil, err
	}
	return row.ID, insertTree(ctx, tx, row.ID, r)
}

// insertTree writes the groups, conditions and actions of rule id.
func insertTree(ctx context.Context, tx bun.Tx, id uuid.UUID, r *Rule) error {
	var (
		groups []store.AutomationGroup
		conds  []store.AutomationCondition
	)
	var walk func(g Group, parent *uuid.UUID, ordinal int)
	walk = func(g Group, parent *uuid.UUID, ordinal int) {
		gid := uuid.New()
		groups = append(groups, store.AutomationGroup{ID: gid, RuleID: id, ParentGroupID: parent, Logic: g.Logic, Ordinal: ordinal})
		for i, c := range g.Conditions {
			conds = append(conds, store.AutomationCondition{ID: uuid.New(), RuleID: id, GroupID: gid, Ordinal: i,
				Type: c.Type, Operator: c.Operator, Params: c.Params})
		}
		for i, child := range g.Groups {
			walk(child, &gid, i)
		}
	}
	walk(r.Root, nil, 0)
	// Parents precede their children in groups, which one INSERT writes in order.
	if _, err := tx.NewInsert().Model(&groups).Exec(ctx); err != nil {
		return fmt.Errorf("insert condition groups: %w", err)
	}
	if len(conds) > 0 {
		if _, err := tx.NewInsert().Model(&conds).Exec(ctx); err != nil {
			return fmt.Errorf("insert conditions: %w", err)
		}
	}
	if len(r.Actions) > 0 {
		acts := make([]store.AutomationAction, len(r.Actions))
		for i, a := range r.Actions {
			acts[i] = store.AutomationAction{ID: uuid.New(), RuleID: id, Position: a.Position, Ordinal: i,
				Type: a.Type, Params: a.Params}
		}
		if _, err := tx.NewInsert().Model(&acts).Exec(ctx); err != nil {
			return fmt.Errorf("insert actions: %w", err)
		}
	}
	return nil
}

// Get returns one rule of the scope (a rule of another project, or a project rule
// asked for as SYSTEM, is not found).
func (s *Service) Get(ctx context.Context, sc Scope, id uuid.UUID) (*Rule, error) {
	rules, err := loadRules(ctx, s.db, func(q *bun.SelectQuery) *bun.SelectQuery {
		return sc.where(q.Where("r.id = ?", id))
	})
	if err != nil {
		return nil, err
	}
	if len(rules) == 0 {
		return nil, ErrNotFound
	}
	r := masked(rules[0])
	return &r, nil
}

// List returns one page of the scope's rules, oldest first, and their total: two
// queries whatever the page holds.
//
// after, in a cursor walk, is the last rule handed out: the page is the rules after it
// in that order (store.After), not skipped ones.
func (s *Service) List(ctx context.Context, sc Scope, after *store.After, offset, limit int) ([]Rule, int, error) {
	n, err := sc.where(s.db.NewSelect().TableExpr("automation_rules AS r")).Count(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("count rules: %w", err)
	}
	total := int(n)
	if total <= offset {
		return []Rule{}, total, nil
	}
	rules, err := loadRules(ctx, s.db, func(q *bun.SelectQuery) *bun.SelectQuery {
		q = sc.where(q)
		if after != nil {
			q = q.Where("(r.created_at, r.id) > (?, ?)", after.Time, after.ID)
		}
		return q.Offset(int64(offset)).Limit(int64(limit))
	})
	for i := range rules {
		rules[i] = masked(rules[i])
	}
	return rules, total, err
}

// Rename changes a rule's name (the only change a saved rule takes besides its
// enabled flag).
func (s *Service) Rename(ctx context.Context, sc Scope, by audit.Actor, id uuid.UUID, name string) (*Rule, error) {
	var ps problems
	switch {
	case strings.TrimSpace(name) == "":
		ps.add("name", "BLANK", "field.BLANK")
	case utf8.RuneCountInString(name) > MaxName:
		ps.add("name", "LENGTH", "field.TOO_LONG", "max", strconv.Itoa(MaxName))
	}
	if len(ps) > 0 {
		return nil, &ValidationError{Problems: ps}
	}
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		r, err := lockRule(ctx, tx, sc, id)
		if err != nil {
			return err
		}
		if err := s.update(ctx, tx, sc, id, "name = ?", name); err != nil {
			return err
		}
		return s.record(ctx, tx, by, AuditUpdated, r, map[string]any{"ruleName": name, "previousName": r.Name})
	})
	if err != nil {
		return nil, err
	}
	return s.Get(ctx, sc, id)
}

// Toggle flips a rule's enabled flag. Enabling a rule needs a creator who may have it
// act (ErrCreatorIneligible otherwise; TakeOver is the way then) and clears the reason
// it was disabled for, which is audited.
func (s *Service) Toggle(ctx context.Context, sc Scope, by audit.Actor, id uuid.UUID) (*Rule, error) {
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		r, err := lockRule(ctx, tx, sc, id)
		if err != nil {
			return err
		}
		if r.Enabled {
			if err := s.update(ctx, tx, sc, id, "enabled = false"); err != nil {
				return err
			}
			return s.record(ctx, tx, by, AuditToggled, r, map[string]any{"ruleName": r.Name, "enabled": false})
		}
		reason, err := creator.Refusal(ctx, tx, id)
		if err != nil {
			return err
		}
		if reason != "" {
			return fmt.Errorf("%w: %s", ErrCreatorIneligible, reason)
		}
		if err := s.update(ctx, tx, sc, id, "enabled = true, disabled_reason = NULL, disabled_at = NULL"); err != nil {
			return err
		}
		if err := s.record(ctx, tx, by, AuditToggled, r, map[string]any{"ruleName": r.Name, "enabled": true}); err != nil {
			return err
		}
		if r.DisabledReason == nil {
			return nil
		}
		return s.record(ctx, tx, by, AuditEnabled, r, map[string]any{"ruleName": r.Name, "creatorId": r.CreatedBy,
			"disabledReason": *r.DisabledReason})
	})
	if err != nil {
		return nil, err
	}
	return s.Get(ctx, sc, id)
}

// TakeOver makes by the rule's creator and enables it: the way an admin restores a
// rule whose creator may no longer have it act. Audited with the former creator.
func (s *Service) TakeOver(ctx context.Context, sc Scope, by audit.Actor, id uuid.UUID) (*Rule, error) {
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		r, err := lockRule(ctx, tx, sc, id)
		if err != nil {
			return err
		}
		if err := s.update(ctx, tx, sc, id, "created_by = ?, enabled = true, disabled_reason = NULL, disabled_at = NULL",
			by.UserID); err != nil {
			return err
		}
		return s.record(ctx, tx, by, AuditTakenOver, r, map[string]any{"ruleName": r.Name, "formerCreatorId": r.CreatedBy,
			"creatorId": by.UserID, "disabledReason": r.DisabledReason})
	})
	if err != nil {
		return nil, err
	}
	return s.Get(ctx, sc, id)
}

// lockRule reads the rule row of the scope for update.
func lockRule(ctx context.Context, tx bun.Tx, sc Scope, id uuid.UUID) (*store.AutomationRule, error) {
	var r store.AutomationRule
	err := sc.where(tx.NewSelect().Model(&r).ModelTableExpr("automation_rules AS r").ColumnExpr("r.*").
		Where("r.id = ?", id)).For("UPDATE").Scan(ctx)
	if store.IsNotFound(err) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read rule: %w", err)
	}
	return &r, nil
}

// record enqueues the audit entry of a rule administration action in tx.
func (s *Service) record(ctx context.Context, tx bun.Tx, by audit.Actor, action string, r *store.AutomationRule, details map[string]any) error {
	raw, err := json.Marshal(details)
	if err != nil {
		return fmt.Errorf("audit details: %w", err)
	}
	e := by.Entry(action, "AUTOMATION_RULE", r.ID.String(), string(raw))
	e.ProjectID = r.ProjectID
	return s.audit.Record(ctx, tx, e)
}

func (s *Service) update(ctx context.Context, db bun.IDB, sc Scope, id uuid.UUID, set string, args ...any) error {
	q := db.NewUpdate().TableExpr("automation_rules AS r").Set(set, args...).Where("r.id = ?", id)
	if sc.Project == nil {
		q = q.Where("r.project_id IS NULL")
	} else {
		q = q.Where("r.project_id = ?", sc.Project.ID)
	}
	res, err := q.Exec(ctx)
	if err != nil {
		return fmt.Errorf("update rule: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// Delete removes a rule with its tree, actions and execution log.
func (s *Service) Delete(ctx context.Context, sc Scope, by audit.Actor, id uuid.UUID) error {
	return store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		r, err := lockRule(ctx, tx, sc, id)
		if err != nil {
			return err
		}
		if _, err := tx.NewDelete().TableExpr("automation_rules").Where("id = ?", id).Exec(ctx); err != nil {
			return fmt.Errorf("delete rule: %w", err)
		}
		return s.record(ctx, tx, by, AuditDeleted, r, map[string]any{"ruleName": r.Name, "triggerType": r.TriggerType})
	})
}

// ExecutionFilter narrows a rule's execution log: by Status (one of the execution
// statuses) and by the issue the execution was about; zero values filter nothing.
type ExecutionFilter struct {
	Status  string
	IssueID *uuid.UUID
	// RunID keeps the executions of one scheduled run.
	RunID *uuid.UUID
}

// Executions returns one page of a rule's execution log, newest first, and its total.
func (s *Service) Executions(ctx context.Context, sc Scope, ruleID uuid.UUID, f ExecutionFilter, after *store.After, offset, limit int) ([]Execution, int, error) {
	exists, err := sc.where(s.db.NewSelect().TableExpr("automation_rules AS r").Where("r.id = ?", ruleID)).Exists(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("find rule: %w", err)
	}
	if !exists {
		return nil, 0, ErrNotFound
	}
	q := s.db.NewSelect().Model((*store.AutomationExecution)(nil)).Where("rule_id = ?", ruleID)
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if f.IssueID != nil {
		q = q.Where("issue_id = ?", *f.IssueID)
	}
	if f.RunID != nil {
		q = q.Where("run_id = ?", *f.RunID)
	}
	n, err := q.Count(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("count executions: %w", err)
	}
	total := int(n)
	out := []Execution{}
	if total <= offset {
		return out, total, nil
	}
	var rows []store.AutomationExecution
	if after != nil {
		q = q.Where("(created_at, id) < (?, ?)", after.Time, after.ID)
	}
	if err := q.OrderExpr("created_at DESC, id DESC").Offset(int64(offset)).Limit(int64(limit)).Scan(ctx, &rows); err != nil {
		return nil, 0, fmt.Errorf("list executions: %w", err)
	}
	for _, r := range rows {
		out = append(out, Execution{ID: r.ID, RuleID: r.RuleID, RunID: r.RunID, IssueID: r.IssueID, EventType: r.EventType,
			Status: r.Status, Detail: r.Detail, CreatedAt: r.CreatedAt})
	}
	return out, total, nil
}

// ruleRow is a rule with its groups, conditions and actions as JSON arrays, so any
// number of rules, whatever their trees, is read in one statement.
type ruleRow struct {
	store.AutomationRule `bun:",extend"`

	Groups     json.RawMessage `bun:"groups"`
	Conditions json.RawMessage `bun:"conditions"`
	Actions    json.RawMessage `bun:"actions"`
	NextRunAt  *time.Time      `bun:"next_run_at"`
}

type groupJSON struct {
	ID     uuid.UUID  `json:"i"`
	Parent *uuid.UUID `json:"p"`
	Logic  string     `json:"l"`
}

type conditionJSON struct {
	ID       uuid.UUID         `json:"i"`
	Group    uuid.UUID         `json:"g"`
	Type     string            `json:"t"`
	Operator string            `json:"o"`
	Params   map[string]string `json:"v"`
}

type actionJSON struct {
	ID       uuid.UUID         `json:"i"`
	Position int               `json:"n"`
	Type     string            `json:"t"`
	Params   map[string]string `json:"v"`
}

// loadRules reads the rules filter selects (rules aliased r), oldest first, each with
// its tree and actions, in one query.
func loadRules(ctx context.Context, db bun.IDB, filter func(*bun.SelectQuery) *bun.SelectQuery) ([]Rule, error) {
	var rows []ruleRow
	q := db.NewSelect().Model(&rows).ModelTableExpr("automation_rules AS r").ColumnExpr("r.*").
		ColumnExpr(`(SELECT json_agg(json_build_object('i', g.id, 'p', g.parent_group_id, 'l', g.logic) ORDER BY g.ordinal)
			FROM automation_groups AS g WHERE g.rule_id = r.id) AS groups`).
		ColumnExpr(`(SELECT json_agg(json_build_object('i', c.id, 'g', c.group_id, 't', c.type, 'o', c.operator, 'v', c.params)
			ORDER BY c.ordinal) FROM automation_conditions AS c WHERE c.rule_id = r.id) AS conditions`).
		ColumnExpr(`(SELECT json_agg(json_build_object('i', a.id, 'n', a.position, 't', a.type, 'v', a.params)
			ORDER BY a.position, a.ordinal) FROM automation_actions AS a WHERE a.rule_id = r.id) AS actions`).
		ColumnExpr(`(SELECT s.next_run_at FROM automation_schedules AS s WHERE s.rule_id = r.id AND r.enabled) AS next_run_at`).
		OrderExpr("r.created_at, r.id")
	if err := filter(q).Scan(ctx); err != nil && !store.IsNotFound(err) {
		return nil, fmt.Errorf("load rules: %w", err)
	}
	out := make([]Rule, 0, len(rows))
	for i := range rows {
		r, err := rows[i].rule()
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// rule assembles the tree from the flat lists.
func (row *ruleRow) rule() (Rule, error) {
	r := Rule{ID: row.ID, ProjectID: row.ProjectID, Scope: row.Scope, Name: row.Name, TriggerType: row.TriggerType,
		TriggerPayload: row.TriggerPayload, Enabled: row.Enabled, CreatedBy: row.CreatedBy, CreatedAt: row.CreatedAt,
		DisabledReason: row.DisabledReason, DisabledAt: row.DisabledAt, Actions: []Action{}, Schedule: row.Schedule,
		Timezone: row.Timezone, Filter: row.Filter, NextRunAt: row.NextRunAt}
	var (
		groups []groupJSON
		conds  []conditionJSON
		acts   []actionJSON
	)
	for _, part := range []struct {
		raw json.RawMessage
		dst any
	}{{row.Groups, &groups}, {row.Conditions, &conds}, {row.Actions, &acts}} {
		if len(part.raw) == 0 || string(part.raw) == "null" {
			continue
		}
		if err := json.Unmarshal(part.raw, part.dst); err != nil {
			return r, fmt.Errorf("decode rule %s: %w", row.ID, err)
		}
	}
	type node struct {
		g        Group
		children []*node
	}
	nodes := make(map[uuid.UUID]*node, len(groups))
	var root *node
	for _, g := range groups {
		nodes[g.ID] = &node{g: Group{ID: g.ID, Logic: g.Logic, Conditions: []Condition{}, Groups: []Group{}}}
	}
	for _, g := range groups {
		n := nodes[g.ID]
		if g.Parent == nil {
			root = n
		} else if p, ok := nodes[*g.Parent]; ok {
			p.children = append(p.children, n)
		}
	}
	for _, c := range conds {
		if n, ok := nodes[c.Group]; ok {
			n.g.Conditions = append(n.g.Conditions, Condition{ID: c.ID, Type: c.Type, Operator: c.Operator, Params: nonNil(c.Params)})
		}
	}
	var build func(n *node) Group
	build = func(n *node) Group {
		g := n.g
		for _, c := range n.children {
			g.Groups = append(g.Groups, build(c))
		}
		return g
	}
	if root != nil {
		r.Root = build(root)
	} else {
		r.Root = Group{Logic: LogicAnd, Conditions: []Condition{}, Groups: []Group{}}
	}
	for _, a := range acts {
		r.Actions = append(r.Actions, Action{ID: a.ID, Position: a.Position, Type: a.Type, Params: nonNil(a.Params)})
	}
	if r.TriggerPayload != nil {
		r.filters = decodeFilters(*r.TriggerPayload)
	}
	return r, nil
}

// decodeFilters reads stored filter text (validated when saved; a value that is not a
// string compares as its JSON text).
func decodeFilters(text string) map[string]string {
	var members map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &members); err != nil {
		return nil
	}
	out := make(map[string]string, len(members))
	for k, raw := range members {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			s = string(raw)
		}
		out[k] = s
	}
	return out
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// checkRefs looks up the ids a rule names, one query per kind: statuses of the
// project's workflow, members of the project, active users.
func checkRefs(ctx context.Context, db bun.IDB, sc Scope, rs refs) ([]Problem, error) {
	var ps problems
	if len(rs.statuses) > 0 && sc.Project != nil {
		var ok []uuid.UUID
		if sc.Project.WorkflowID != nil {
			err := db.NewSelect().Table("workflow_statuses").Column("id").
				Where("workflow_id = ? AND id IN (?)", *sc.Project.WorkflowID, bun.In(refIDs(rs.statuses))).Scan(ctx, &ok)
			if err != nil && !store.IsNotFound(err) {
				return nil, fmt.Errorf("check statuses: %w", err)
			}
		}
		missing(rs.statuses, ok, func(f string) { ps.add(f, "NOT_IN_WORKFLOW", "field.AUTOMATION_STATUS") })
	}
	if len(rs.members) > 0 && sc.Project != nil {
		var ok []uuid.UUID
		err := db.NewRaw(`SELECT u.id FROM users AS u WHERE u.id IN (?) AND u.deleted_at IS NULL
			AND (EXISTS (SELECT 1 FROM projects AS p WHERE p.id = ? AND p.owner_id = u.id)
			  OR EXISTS (SELECT 1 FROM project_members AS pm WHERE pm.project_id = ? AND pm.user_id = u.id))`,
			bun.In(refIDs(rs.members)), sc.Project.ID, sc.Project.ID).Scan(ctx, &ok)
		if err != nil && !store.IsNotFound(err) {
			return nil, fmt.Errorf("check members: %w", err)
		}
		missing(rs.members, ok, func(f string) { ps.add(f, "NOT_A_MEMBER", "field.AUTOMATION_MEMBER") })
	}
	if len(rs.users) > 0 {
		var ok []uuid.UUID
		err := db.NewSelect().Table("users").Column("id").
			Where("id IN (?) AND active AND deleted_at IS NULL", bun.In(refIDs(rs.users))).Scan(ctx, &ok)
		if err != nil && !store.IsNotFound(err) {
			return nil, fmt.Errorf("check users: %w", err)
		}
		missing(rs.users, ok, func(f string) { ps.add(f, "NOT_ACTIVE_USER", "field.AUTOMATION_USER") })
	}
	return ps, nil
}

func refIDs(rs []ref) []uuid.UUID {
	out := make([]uuid.UUID, len(rs))
	for i, r := range rs {
		out[i] = r.id
	}
	return out
}

// missing calls report with the field of every ref whose id is not in found.
func missing(rs []ref, found []uuid.UUID, report func(field string)) {
	set := make(map[uuid.UUID]bool, len(found))
	for _, id := range found {
		set[id] = true
	}
	for _, r := range rs {
		if !set[r.id] {
			report(r.field)
		}
	}
}
