package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/automation"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/store"
)

// Settings is what a taskweave export's project.json brings besides the names its
// issues use (Setup): the members, the workflow, the automation rules and the service
// desk's settings (docs/tasks.md#project-settings).
type Settings struct {
	Owner   *string `json:"owner"`
	Members []struct {
		Email string `json:"email"`
		Role  string `json:"role"`
	} `json:"members"`
	Workflow struct {
		Statuses []struct {
			Name     string `json:"name"`
			Category string `json:"category"`
			Color    string `json:"color"`
			Position int    `json:"position"`
		} `json:"statuses"`
		Transitions []struct {
			From   *string         `json:"from"`
			To     string          `json:"to"`
			Guards json.RawMessage `json:"guards"`
		} `json:"transitions"`
	} `json:"workflow"`
	AutomationRules []exportedRule `json:"automationRules"`
	ServiceDesk     *struct {
		Enabled     *bool `json:"enabled"`
		SLAPolicies []struct {
			Name              string `json:"name"`
			Priority          string `json:"priority"`
			ResponseMinutes   int    `json:"responseMinutes"`
			ResolutionMinutes int    `json:"resolutionMinutes"`
		} `json:"slaPolicies"`
	} `json:"serviceDesk"`
}

// exportedRule is a rule of project.json: its row (snake_case, as the row reads) with
// its groups, conditions and actions.
type exportedRule struct {
	Name           string  `json:"name"`
	TriggerType    string  `json:"trigger_type"`
	TriggerPayload *string `json:"trigger_payload"`
	Groups         []struct {
		ID      uuid.UUID  `json:"id"`
		Parent  *uuid.UUID `json:"parent"`
		Logic   string     `json:"logic"`
		Ordinal int        `json:"ordinal"`
	} `json:"groups"`
	Conditions []struct {
		Group    uuid.UUID                  `json:"group"`
		Type     string                     `json:"type"`
		Operator string                     `json:"operator"`
		Params   map[string]json.RawMessage `json:"params"`
	} `json:"conditions"`
	Actions []struct {
		Position int                        `json:"position"`
		Type     string                     `json:"type"`
		Params   map[string]json.RawMessage `json:"params"`
	} `json:"actions"`
}

// colorPattern is a colour the workflow's statuses accept.
var colorPattern = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// settingsContext is what applying the settings needs of the import beyond the applier.
type settingsContext struct {
	workflowID *uuid.UUID
	// role is the importer's role in the project: no member gets more.
	role  project.Role
	by    audit.Actor
	rules *automation.Service
}

// settings applies s to the project; what cannot be applied is an item error.
func (a *applier) settings(ctx context.Context, s *Settings, sc settingsContext) ([]store.TaskError, error) {
	var out []store.TaskError
	for _, step := range []func(context.Context, *Settings, settingsContext) ([]store.TaskError, error){
		a.members, a.workflow, a.rules, a.desk} {
		errs, err := step(ctx, s, sc)
		if err != nil {
			return nil, err
		}
		out = append(out, errs...)
	}
	return out, nil
}

// members adds the export's members (its owner as an ADMIN) who are users here and not
// yet members, each with their role capped at the importer's.
func (a *applier) members(ctx context.Context, s *Settings, sc settingsContext) ([]store.TaskError, error) {
	type want struct{ email, role string }
	var wants []want
	if s.Owner != nil && *s.Owner != "" {
		wants = append(wants, want{*s.Owner, string(project.Admin)})
	}
	for _, m := range s.Members {
		wants = append(wants, want{m.Email, m.Role})
	}
	var out []store.TaskError
	seen := map[string]bool{}
	for _, w := range wants {
		email := lower(w.email)
		if email == "" || seen[email] {
			continue
		}
		seen[email] = true
		item := "member " + w.email
		role := project.Role(w.role)
		if role != project.Admin && role != project.Member && role != project.Viewer {
			out = append(out, store.TaskError{Item: item, Code: "MEMBER_ROLE_INVALID", Message: fmt.Sprintf("role %q is no project role; not added", w.role)})
			continue
		}
		if !sc.role.AtLeast(role) {
			out = append(out, store.TaskError{Item: item, Code: "MEMBER_ROLE_CAPPED",
				Message: fmt.Sprintf("role %s is above the importer's; added as %s", role, sc.role)})
			role = sc.role
		}
		var u struct {
			ID     uuid.UUID `bun:"id"`
			Member bool      `bun:"member"`
		}
		err := a.tx.NewRaw(`SELECT u.id, (u.id = p.owner_id OR EXISTS (SELECT FROM project_members m WHERE m.project_id = p.id
			AND m.user_id = u.id)) AS member FROM users u, projects p WHERE lower(u.email) = ? AND u.deleted_at IS NULL AND p.id = ?`,
			email, a.target.projectID).Scan(ctx, &u)
		if store.IsNotFound(err) {
			out = append(out, store.TaskError{Item: item, Code: "MEMBER_NOT_FOUND", Message: "no user here has this e-mail; not added"})
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read member %s: %w", w.email, err)
		}
		if u.Member {
			continue // as they are: an import changes no one's role
		}
		var id uuid.UUID
		if err := a.tx.NewRaw("INSERT INTO project_members (project_id, user_id, role) VALUES (?, ?, ?) RETURNING id",
			a.target.projectID, u.ID, string(role)).Scan(ctx, &id); err != nil {
			return nil, fmt.Errorf("add member %s: %w", w.email, err)
		}
		if err := a.created(ctx, "member", id); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// workflow brings the export's statuses and transitions, by name. A project without
// issues takes the workflow whole: its statuses become the export's (by name, with their
// category, colour and order; others go) and so do its transitions. A project with
// issues keeps what it has and gains the statuses and transitions it lacks.
func (a *applier) workflow(ctx context.Context, s *Settings, sc settingsContext) ([]store.TaskError, error) {
	wf := s.Workflow
	if sc.workflowID == nil || len(wf.Statuses) == 0 {
		return nil, nil
	}
	var issues int
	if err := a.tx.NewSelect().Table("issues").ColumnExpr("count(*)").Where("project_id = ?", a.target.projectID).
		Scan(ctx, &issues); err != nil {
		return nil, fmt.Errorf("count issues: %w", err)
	}
	whole := issues == 0
	ids := map[string]uuid.UUID{}
	for _, st := range a.target.statuses {
		ids[lower(st.Name)] = st.ID
	}
	var out []store.TaskError
	keep := map[uuid.UUID]bool{}
	for _, st := range wf.Statuses {
		color := st.Color
		if !colorPattern.MatchString(color) {
			color = "#6c8fef"
		}
		bad := st.Category != "TODO" && st.Category != "IN_PROGRESS" && st.Category != "DONE"
		if bad || strings.TrimSpace(st.Name) == "" || utf8.RuneCountInString(st.Name) > 100 {
			out = append(out, store.TaskError{Item: "status " + st.Name, Code: "STATUS_INVALID", Message: "not a valid status; left out"})
			continue
		}
		if id, ok := ids[lower(st.Name)]; ok {
			keep[id] = true
			if whole {
				if _, err := a.tx.NewRaw("UPDATE workflow_statuses SET category = ?, color = ?, position = ? WHERE id = ?",
					st.Category, color, st.Position, id).Exec(ctx); err != nil {
					return nil, fmt.Errorf("update status %s: %w", st.Name, err)
				}
			}
			continue
		}
		var id uuid.UUID
		if err := a.tx.NewRaw("INSERT INTO workflow_statuses (workflow_id, name, category, color, position) VALUES (?, ?, ?, ?, ?) RETURNING id",
			*sc.workflowID, st.Name, st.Category, color, st.Position).Scan(ctx, &id); err != nil {
			return nil, fmt.Errorf("add status %s: %w", st.Name, err)
		}
		ids[lower(st.Name)], keep[id] = id, true
	}
	if whole {
		var gone []uuid.UUID
		for _, st := range a.target.statuses {
			if !keep[st.ID] {
				gone = append(gone, st.ID)
			}
		}
		if len(gone) > 0 {
			if _, err := a.tx.NewDelete().Table("workflow_statuses").Where("id IN (?)", bun.In(gone)).Exec(ctx); err != nil {
				return nil, fmt.Errorf("remove statuses: %w", err)
			}
		}
		if _, err := a.tx.NewDelete().Table("workflow_transitions").Where("workflow_id = ?", *sc.workflowID).Exec(ctx); err != nil {
			return nil, fmt.Errorf("replace transitions: %w", err)
		}
	}
	for _, tr := range wf.Transitions {
		to, ok := ids[lower(tr.To)]
		var from *uuid.UUID
		if tr.From != nil {
			id, found := ids[lower(*tr.From)]
			ok, from = ok && found, &id
		}
		if !ok {
			out = append(out, store.TaskError{Item: "transition to " + tr.To, Code: "TRANSITION_INVALID",
				Message: "names a status the workflow does not have; left out"})
			continue
		}
		var guards *string
		if len(tr.Guards) > 0 && string(tr.Guards) != "null" {
			g := string(tr.Guards)
			guards = &g
		}
		if _, err := a.tx.NewRaw(`INSERT INTO workflow_transitions (workflow_id, from_status_id, to_status_id, guards)
			SELECT ?, ?, ?, ?::jsonb WHERE NOT EXISTS (SELECT FROM workflow_transitions WHERE workflow_id = ?
				AND from_status_id IS NOT DISTINCT FROM ? AND to_status_id = ?)`,
			*sc.workflowID, from, to, guards, *sc.workflowID, from, to).Exec(ctx); err != nil {
			return nil, fmt.Errorf("add transition to %s: %w", tr.To, err)
		}
	}
	// The issues of the import are put in statuses read again.
	if err := a.tx.NewSelect().Table("workflow_statuses").Column("id", "name", "category").Where("workflow_id = ?", *sc.workflowID).
		OrderExpr("position, name").Scan(ctx, &a.target.statuses); err != nil {
		return nil, fmt.Errorf("read statuses: %w", err)
	}
	return out, nil
}

// rules creates the export's automation rules DISABLED and owned by the importer,
// through the rules' own validation: a rule never acts with the identity of whoever
// made it elsewhere, and one the project cannot hold (a status or user of the source
// project) is an item error.
func (a *applier) rules(ctx context.Context, s *Settings, sc settingsContext) ([]store.TaskError, error) {
	if len(s.AutomationRules) == 0 {
		return nil, nil
	}
	if sc.rules == nil {
		return []store.TaskError{{Item: "automation rules", Code: "RULES_SKIPPED", Message: "this worker imports no rules"}}, nil
	}
	svc := sc.rules.WithTx(a.tx)
	scope := automation.Scope{Project: &automation.Project{ID: a.target.projectID, WorkflowID: sc.workflowID}}
	var out []store.TaskError
	for _, r := range s.AutomationRules {
		in := automation.RuleInput{Name: r.Name, TriggerType: r.TriggerType, Enabled: false, Root: r.tree()}
		if r.TriggerPayload != nil {
			raw, err := json.Marshal(*r.TriggerPayload)
			if err != nil {
				return nil, err
			}
			in.TriggerPayload = raw
		}
		for _, act := range r.Actions {
			pos := act.Position
			in.Actions = append(in.Actions, automation.ActionInput{Position: &pos, Type: act.Type, Params: act.Params})
		}
		rule, err := svc.Create(ctx, scope, sc.by, in)
		var invalid *automation.ValidationError
		if errors.As(err, &invalid) {
			var fields []string
			for _, p := range invalid.Problems {
				fields = append(fields, p.Field+": "+p.Code)
			}
			out = append(out, store.TaskError{Item: "rule " + r.Name, Code: "RULE_INVALID",
				Message: "the rule cannot be made here (" + strings.Join(fields, ", ") + "); not created"})
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("create rule %s: %w", r.Name, err)
		}
		if err := a.created(ctx, "rule", rule.ID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// tree is the rule's condition tree from its flat groups and conditions.
func (r *exportedRule) tree() automation.GroupInput {
	var build func(id *uuid.UUID) automation.GroupInput
	build = func(id *uuid.UUID) automation.GroupInput {
		var g automation.GroupInput
		for _, grp := range r.Groups {
			if id != nil && grp.ID == *id {
				g.Logic = grp.Logic
			}
		}
		if id == nil {
			return g
		}
		for _, c := range r.Conditions {
			if c.Group == *id {
				g.Conditions = append(g.Conditions, automation.ConditionInput{Type: c.Type, Operator: c.Operator, Params: c.Params})
			}
		}
		for _, child := range r.Groups { // in ordinal order, as exported
			if child.Parent != nil && *child.Parent == *id {
				cid := child.ID
				g.Groups = append(g.Groups, build(&cid))
			}
		}
		return g
	}
	for _, grp := range r.Groups {
		if grp.Parent == nil {
			id := grp.ID
			return build(&id)
		}
	}
	return automation.GroupInput{}
}

// desk brings the service desk's settings (enabled, the SLA policies by priority) into
// the project's desk; a project without a desk gets none (the desk is made on purpose).
// The desk's e-mail address is not imported: it is verified per desk.
func (a *applier) desk(ctx context.Context, s *Settings, _ settingsContext) ([]store.TaskError, error) {
	if s.ServiceDesk == nil {
		return nil, nil
	}
	var deskID uuid.UUID
	err := a.tx.NewSelect().Table("service_desks").Column("id").Where("project_id = ?", a.target.projectID).Scan(ctx, &deskID)
	if store.IsNotFound(err) {
		return []store.TaskError{{Item: "service desk", Code: "DESK_SKIPPED",
			Message: "the project has no service desk; the export's desk settings were not imported"}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read desk: %w", err)
	}
	if s.ServiceDesk.Enabled != nil {
		if _, err := a.tx.NewRaw("UPDATE service_desks SET enabled = ?, updated_at = clock_timestamp() WHERE id = ?",
			*s.ServiceDesk.Enabled, deskID).Exec(ctx); err != nil {
			return nil, fmt.Errorf("update desk: %w", err)
		}
	}
	var out []store.TaskError
	for _, p := range s.ServiceDesk.SLAPolicies {
		valid := p.Priority == "CRITICAL" || p.Priority == "HIGH" || p.Priority == "MEDIUM" || p.Priority == "LOW"
		if !valid || p.ResponseMinutes < 1 || p.ResolutionMinutes < 1 || strings.TrimSpace(p.Name) == "" || len(p.Name) > 100 {
			out = append(out, store.TaskError{Item: "SLA policy " + p.Name, Code: "SLA_POLICY_INVALID", Message: "not a valid policy; left out"})
			continue
		}
		if _, err := a.tx.NewRaw(`INSERT INTO sla_policies (service_desk_id, name, priority, response_minutes, resolution_minutes)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (service_desk_id, priority) DO UPDATE SET name = EXCLUDED.name,
			response_minutes = EXCLUDED.response_minutes, resolution_minutes = EXCLUDED.resolution_minutes`,
			deskID, p.Name, p.Priority, p.ResponseMinutes, p.ResolutionMinutes).Exec(ctx); err != nil {
			return nil, fmt.Errorf("import SLA policy %s: %w", p.Name, err)
		}
	}
	return out, nil
}
