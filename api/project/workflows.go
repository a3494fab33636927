package project

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/samber/lo"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/domain/workflow"
)

// Replies (api/openapi/30-workflows.yaml).

type workflowStatusJSON struct {
	ID       uuid.UUID `json:"id"`
	Name     string    `json:"name"`
	Category string    `json:"category"`
	Color    string    `json:"color"`
	Position int       `json:"position"`
}

// workflowTransitionJSON carries guards as a string of JSON text (or null), as the
// existing clients expect.
type workflowTransitionJSON struct {
	ID           uuid.UUID  `json:"id"`
	FromStatusID *uuid.UUID `json:"fromStatusId"`
	ToStatusID   uuid.UUID  `json:"toStatusId"`
	Guards       *string    `json:"guards"`
}

type workflowPositionJSON struct {
	StatusID uuid.UUID `json:"statusId"`
	X        int       `json:"x"`
	Y        int       `json:"y"`
}

type workflowSummaryJSON struct {
	ID       uuid.UUID            `json:"id"`
	Name     string               `json:"name"`
	Statuses []workflowStatusJSON `json:"statuses"`
}

type workflowJSON struct {
	ID          uuid.UUID                `json:"id"`
	Name        string                   `json:"name"`
	Statuses    []workflowStatusJSON     `json:"statuses"`
	Transitions []workflowTransitionJSON `json:"transitions"`
	Layout      []workflowPositionJSON   `json:"layout"`
	ProjectID   uuid.UUID                `json:"projectId"`
	IsDefault   bool                     `json:"isDefault"`
}

func toWorkflowStatusJSON(s workflow.Status) workflowStatusJSON {
	return workflowStatusJSON{ID: s.ID, Name: s.Name, Category: s.Category, Color: s.Color, Position: s.Position}
}

func toWorkflowStatusesJSON(ss []workflow.Status) []workflowStatusJSON {
	return lo.Map(ss, func(s workflow.Status, _ int) workflowStatusJSON { return toWorkflowStatusJSON(s) })
}

func toWorkflowTransitionJSON(t workflow.Transition) workflowTransitionJSON {
	out := workflowTransitionJSON{ID: t.ID, FromStatusID: t.FromStatusID, ToStatusID: t.ToStatusID}
	if len(t.Guards) > 0 && string(t.Guards) != "null" {
		// Postgres returns jsonb with spaces; the wire carries the compact text.
		var buf bytes.Buffer
		text := string(t.Guards)
		if json.Compact(&buf, t.Guards) == nil {
			text = buf.String()
		}
		out.Guards = &text
	}
	return out
}

func toWorkflowJSON(wf *workflow.Workflow) workflowJSON {
	out := workflowJSON{
		ID: wf.ID, Name: wf.Name, Statuses: toWorkflowStatusesJSON(wf.Statuses), ProjectID: wf.ProjectID, IsDefault: wf.IsDefault,
		Transitions: make([]workflowTransitionJSON, 0, len(wf.Transitions)),
		Layout:      make([]workflowPositionJSON, 0, len(wf.Layout)),
	}
	for _, t := range wf.Transitions {
		out.Transitions = append(out.Transitions, toWorkflowTransitionJSON(t))
	}
	for _, p := range wf.Layout {
		out.Layout = append(out.Layout, workflowPositionJSON{StatusID: p.StatusID, X: p.X, Y: p.Y})
	}
	return out
}

// projectWorkflow checks the caller's project role and returns the id of the project's
// assigned workflow, the one every /workflow call reads and edits; a project without
// one is 404 WORKFLOW_NOT_FOUND.
func (s *handlers) projectWorkflow(c *fiber.Ctx, min project.Role) (uuid.UUID, error) {
	a, err := s.ProjectAccess(c, min)
	if err != nil {
		return uuid.Nil, err
	}
	if a.Project.WorkflowID == nil {
		return uuid.Nil, workflow.ErrWorkflowNotFound
	}
	return *a.Project.WorkflowID, nil
}

// workflowItem is the preamble of the admin endpoints on one status or transition of
// the project's workflow: the workflow, then the item's UUID from path parameter param.
func (s *handlers) workflowItem(c *fiber.Ctx, param string) (wfID, id uuid.UUID, err error) {
	if wfID, err = s.projectWorkflow(c, project.Admin); err != nil {
		return uuid.Nil, uuid.Nil, err
	}
	if id, err = core.PathUUID(c, param); err != nil {
		return uuid.Nil, uuid.Nil, err
	}
	return wfID, id, nil
}

func (s *handlers) listWorkflows(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Viewer)
	if err != nil {
		return err
	}
	wfs, err := workflow.List(c.UserContext(), s.DB.Bun, a.Project.ID)
	if err != nil {
		return err
	}
	out := make([]workflowSummaryJSON, 0, len(wfs))
	for _, wf := range wfs {
		out = append(out, workflowSummaryJSON{ID: wf.ID, Name: wf.Name, Statuses: toWorkflowStatusesJSON(wf.Statuses)})
	}
	return c.JSON(out)
}

func (s *handlers) getWorkflow(c *fiber.Ctx) error {
	id, err := s.projectWorkflow(c, project.Viewer)
	if err != nil {
		return err
	}
	wf, err := workflow.Load(c.UserContext(), s.DB.Bun, id)
	if err != nil {
		return err
	}
	return c.JSON(toWorkflowJSON(wf))
}

// Statuses.

// maxStatusName bounds a workflow status's name (api/openapi/30-workflows.yaml).
const maxStatusName = 100

type workflowStatusRequest struct {
	Name     *string `json:"name"`
	Category *string `json:"category"`
	Color    *string `json:"color"`
}

// check validates the present members: an unknown category is BAD_REQUEST (an enum),
// a blank or long name and a malformed color are VALIDATION_ERRORs. The name is
// stored trimmed.
func (r *workflowStatusRequest) check() error {
	if r.Category != nil && !workflow.IsCategory(*r.Category) {
		return core.BadRequest("INVALID_STATUS_CATEGORY")
	}
	var f core.Fields
	if r.Name != nil {
		name := strings.TrimSpace(*r.Name)
		f.Text("name", name, true, maxStatusName)
		r.Name = &name
	}
	if r.Color != nil && !workflow.IsColor(*r.Color) {
		f.Add("color", "PATTERN", "field.STATUS_COLOR")
	}
	return f.Err()
}

func parseNewWorkflowStatus(body core.Body) (workflow.NewStatus, error) {
	var r workflowStatusRequest
	if err := body.Decode(&r); err != nil {
		return workflow.NewStatus{}, err
	}
	if r.Name == nil {
		return workflow.NewStatus{}, core.Required("name")
	}
	if r.Category == nil {
		return workflow.NewStatus{}, core.Required("category")
	}
	if err := r.check(); err != nil {
		return workflow.NewStatus{}, err
	}
	in := workflow.NewStatus{Name: *r.Name, Category: *r.Category, Color: workflow.DefaultColor}
	if r.Color != nil {
		in.Color = *r.Color
	}
	return in, nil
}

func parseWorkflowStatusChange(body core.Body) (workflow.StatusChange, error) {
	var r workflowStatusRequest
	if err := body.Decode(&r); err != nil {
		return workflow.StatusChange{}, err
	}
	if err := r.check(); err != nil {
		return workflow.StatusChange{}, err
	}
	return workflow.StatusChange{Name: r.Name, Category: r.Category, Color: r.Color}, nil
}

func (s *handlers) createWorkflowStatus(c *fiber.Ctx) error {
	wfID, err := s.projectWorkflow(c, project.Admin)
	if err != nil {
		return err
	}
	in, err := parseNewWorkflowStatus(core.BodyOf(c))
	if err != nil {
		return err
	}
	st, err := workflow.AddStatus(c.UserContext(), s.DB.Bun, wfID, in)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(toWorkflowStatusJSON(*st))
}

func (s *handlers) updateWorkflowStatus(c *fiber.Ctx) error {
	wfID, sid, err := s.workflowItem(c, "sid")
	if err != nil {
		return err
	}
	ch, err := parseWorkflowStatusChange(core.BodyOf(c))
	if err != nil {
		return err
	}
	st, err := workflow.UpdateStatus(c.UserContext(), s.DB.Bun, wfID, sid, ch)
	if err != nil {
		return err
	}
	return c.JSON(toWorkflowStatusJSON(*st))
}

func (s *handlers) deleteWorkflowStatus(c *fiber.Ctx) error {
	wfID, sid, err := s.workflowItem(c, "sid")
	if err != nil {
		return err
	}
	if err := workflow.DeleteStatus(c.UserContext(), s.DB.Bun, wfID, sid); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// Transitions.

// parseWorkflowTransition reads {fromStatusId, toStatusId}; an absent fromStatusId
// means null, "from any status".
func parseWorkflowTransition(body core.Body) (from *uuid.UUID, to uuid.UUID, err error) {
	var r struct {
		FromStatusID *string `json:"fromStatusId"`
		ToStatusID   *string `json:"toStatusId"`
	}
	if err := body.Decode(&r); err != nil {
		return nil, uuid.Nil, err
	}
	if r.ToStatusID == nil {
		return nil, uuid.Nil, core.Required("toStatusId")
	}
	if to, err = core.ParseID("toStatusId", *r.ToStatusID); err != nil {
		return nil, uuid.Nil, err
	}
	if r.FromStatusID != nil {
		id, err := core.ParseID("fromStatusId", *r.FromStatusID)
		if err != nil {
			return nil, uuid.Nil, err
		}
		from = &id
	}
	return from, to, nil
}

func (s *handlers) createWorkflowTransition(c *fiber.Ctx) error {
	wfID, err := s.projectWorkflow(c, project.Admin)
	if err != nil {
		return err
	}
	from, to, err := parseWorkflowTransition(core.BodyOf(c))
	if err != nil {
		return err
	}
	t, err := workflow.AddTransition(c.UserContext(), s.DB.Bun, wfID, from, to)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(toWorkflowTransitionJSON(*t))
}

func (s *handlers) deleteWorkflowTransition(c *fiber.Ctx) error {
	wfID, tid, err := s.workflowItem(c, "tid")
	if err != nil {
		return err
	}
	if err := workflow.DeleteTransition(c.UserContext(), s.DB.Bun, wfID, tid); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

type workflowGuardInput struct {
	Type  *string   `json:"type"`
	Field *string   `json:"field"`
	Roles *[]string `json:"roles"`
}

// parseWorkflowGuards reads {"guards": [...]}. A missing member or an unknown type or
// role (enums) is BAD_REQUEST; a REQUIRED_FIELD naming an issue field no guard can
// check is a VALIDATION_ERROR on guards[i].field.
func parseWorkflowGuards(body core.Body) ([]workflow.Guard, error) {
	var r struct {
		Guards *[]workflowGuardInput `json:"guards"`
	}
	if err := body.Decode(&r); err != nil {
		return nil, err
	}
	if r.Guards == nil {
		return nil, core.Required("guards")
	}
	out := make([]workflow.Guard, 0, len(*r.Guards))
	var f core.Fields
	for i, in := range *r.Guards {
		at := "guards[" + strconv.Itoa(i) + "]."
		if in.Type == nil {
			return nil, core.Required(at + "type")
		}
		g := workflow.Guard{Type: *in.Type}
		switch g.Type {
		case workflow.GuardRequiredField:
			if in.Field == nil {
				return nil, core.Required(at + "field")
			}
			g.Field = *in.Field
			if !workflow.IsGuardField(g.Field) {
				return nil, core.BadRequest("INVALID_ENUM", "field", at+"field", "values", strings.Join(workflow.GuardFields, ", "))
			}
		case workflow.GuardRoleRestriction:
			if in.Roles == nil {
				return nil, core.Required(at + "roles")
			}
			g.Roles = make([]string, 0, len(*in.Roles))
			for _, role := range *in.Roles {
				if !workflow.IsGuardRole(role) {
					return nil, core.BadRequest("UNKNOWN_GUARD_ROLE", "role", role)
				}
				g.Roles = append(g.Roles, role)
			}
		default:
			return nil, core.BadRequest("UNKNOWN_GUARD_TYPE", "type", g.Type)
		}
		out = append(out, g)
	}
	return out, f.Err()
}

func (s *handlers) putWorkflowGuards(c *fiber.Ctx) error {
	wfID, tid, err := s.workflowItem(c, "tid")
	if err != nil {
		return err
	}
	guards, err := parseWorkflowGuards(core.BodyOf(c))
	if err != nil {
		return err
	}
	t, err := workflow.SetGuards(c.UserContext(), s.DB.Bun, wfID, tid, guards)
	if err != nil {
		return err
	}
	return c.JSON(toWorkflowTransitionJSON(*t))
}

// Layout.

type workflowPositionInput struct {
	StatusID *string `json:"statusId"`
	X        *int64  `json:"x"`
	Y        *int64  `json:"y"`
}

// parseWorkflowLayout reads {"positions": [{statusId, x?, y?}]}; x and y default to 0
// and must fit the database's integer.
func parseWorkflowLayout(body core.Body) ([]workflow.Position, error) {
	var r struct {
		Positions *[]workflowPositionInput `json:"positions"`
	}
	if err := body.Decode(&r); err != nil {
		return nil, err
	}
	if r.Positions == nil {
		return nil, core.Required("positions")
	}
	out := make([]workflow.Position, 0, len(*r.Positions))
	var f core.Fields
	coordinate := func(field string, v *int64) int {
		if v == nil {
			return 0
		}
		if *v < math.MinInt32 || *v > math.MaxInt32 {
			f.Add(field, "RANGE", "field.LAYOUT_COORDINATE",
				"min", strconv.Itoa(math.MinInt32), "max", strconv.Itoa(math.MaxInt32))
			return 0
		}
		return int(*v)
	}
	for i, in := range *r.Positions {
		at := "positions[" + strconv.Itoa(i) + "]."
		if in.StatusID == nil {
			return nil, core.Required(at + "statusId")
		}
		id, err := core.ParseID(at+"statusId", *in.StatusID)
		if err != nil {
			return nil, err
		}
		out = append(out, workflow.Position{StatusID: id, X: coordinate(at+"x", in.X), Y: coordinate(at+"y", in.Y)})
	}
	return out, f.Err()
}

func (s *handlers) putWorkflowLayout(c *fiber.Ctx) error {
	wfID, err := s.projectWorkflow(c, project.Admin)
	if err != nil {
		return err
	}
	positions, err := parseWorkflowLayout(core.BodyOf(c))
	if err != nil {
		return err
	}
	if err := workflow.ReplaceLayout(c.UserContext(), s.DB.Bun, wfID, positions); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
