package servicedesk

import (
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/domain/servicedesk"
)

// incidentResponse is Incident in api/openapi/91-servicedesk.yaml.
type incidentResponse struct {
	ID               uuid.UUID  `json:"id"`
	IssueID          uuid.UUID  `json:"issueId"`
	Severity         string     `json:"severity"`
	OnCallAssigneeID *uuid.UUID `json:"onCallAssigneeId"`
	PostmortemBody   *string    `json:"postmortemBody"`
	ResolvedAt       *string    `json:"resolvedAt"`
	IssueKey         string     `json:"issueKey"`
	CreatedAt        string     `json:"createdAt"`
}

func toIncidentResponse(v *servicedesk.IncidentView) incidentResponse {
	return incidentResponse{ID: v.ID, IssueID: v.IssueID, Severity: v.Severity, OnCallAssigneeID: v.OnCallAssigneeID,
		PostmortemBody: v.PostmortemBody, ResolvedAt: core.InstantPtr(v.ResolvedAt), IssueKey: v.IssueKey,
		CreatedAt: v.CreatedAt.UTC().Format(time.RFC3339Nano)}
}

// parseIncident reads an incident: issueId and severity required (an unknown severity
// is BAD_REQUEST), onCallAssigneeId and notifyUserIds optional.
func parseIncident(body core.Body) (servicedesk.NewIncident, error) {
	var r struct {
		IssueID          *string  `json:"issueId"`
		Severity         *string  `json:"severity"`
		OnCallAssigneeID *string  `json:"onCallAssigneeId"`
		NotifyUserIDs    []string `json:"notifyUserIds"`
	}
	if err := body.Decode(&r); err != nil {
		return servicedesk.NewIncident{}, err
	}
	switch {
	case r.IssueID == nil:
		return servicedesk.NewIncident{}, core.Required("issueId")
	case r.Severity == nil:
		return servicedesk.NewIncident{}, core.Required("severity")
	}
	var in servicedesk.NewIncident
	var err error
	id, key, err := core.IssueMember("issueId", r.IssueID)
	if err != nil {
		return in, err
	}
	if id != nil {
		in.IssueID = *id
	}
	in.IssueKey = key
	if !issue.Valid(servicedesk.Severities, *r.Severity) {
		return in, core.BadRequest("INVALID_ENUM", "field", "severity", "values", strings.Join(servicedesk.Severities, ", "))
	}
	in.Severity = *r.Severity
	if in.OnCallAssigneeID, err = core.OptionalID("onCallAssigneeId", r.OnCallAssigneeID); err != nil {
		return in, err
	}
	if in.NotifyUserIDs, err = core.ParseIDs("notifyUserIds", r.NotifyUserIDs); err != nil {
		return in, err
	}
	in.NotifyUserIDs = uniqueIDs(in.NotifyUserIDs)
	if len(in.NotifyUserIDs) > servicedesk.MaxNotifyUsers {
		var f core.Fields
		f.Add("notifyUserIds", "SIZE", "field.TOO_MANY", "max", strconv.Itoa(servicedesk.MaxNotifyUsers))
		return in, f.Err()
	}
	return in, nil
}

func (s *handlers) createIncident(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Member)
	if err != nil {
		return err
	}
	in, err := parseIncident(core.BodyOf(c))
	if err != nil {
		return err
	}
	v, err := s.serviceDesk().CreateIncident(c.UserContext(), core.AuditActor(c), deskProject(a), in)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(toIncidentResponse(v))
}

func (s *handlers) listIncidents(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Viewer)
	if err != nil {
		return err
	}
	vs, err := s.serviceDesk().Incidents(c.UserContext(), deskProject(a))
	if err != nil {
		return err
	}
	out := make([]incidentResponse, len(vs))
	for i := range vs {
		out[i] = toIncidentResponse(&vs[i])
	}
	return c.JSON(out)
}

// resolveIncident takes {postmortemBody: string|null} (an empty body is null): a
// postmortem must not be blank and is at most servicedesk.MaxPostmortem characters.
func (s *handlers) resolveIncident(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Member)
	if err != nil {
		return err
	}
	id, err := core.PathUUID(c, "id")
	if err != nil {
		return err
	}
	var body struct {
		PostmortemBody *string `json:"postmortemBody"`
	}
	if err := core.DecodeOptional(c, &body); err != nil {
		return err
	}
	if body.PostmortemBody != nil {
		var f core.Fields
		f.Text("postmortemBody", *body.PostmortemBody, true, servicedesk.MaxPostmortem)
		if err := f.Err(); err != nil {
			return err
		}
	}
	if err := s.serviceDesk().ResolveIncident(c.UserContext(), core.AuditActor(c), deskProject(a), id, body.PostmortemBody); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
