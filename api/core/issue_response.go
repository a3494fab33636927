package core

import (
	"encoding/json"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/taskweave/taskweave/domain/customfield"
	"github.com/taskweave/taskweave/domain/integration"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/store"
)

// IssueResponse is IssueResponse in api/openapi/40-issues.yaml. Every nullable member is
// always sent; there is deliberately no `status` member (ticket items use that name for a
// string).
type IssueResponse struct {
	ID              uuid.UUID                  `json:"id"`
	Key             string                     `json:"key"`
	Title           string                     `json:"title"`
	Description     *string                    `json:"description"`
	Type            string                     `json:"type"`
	Priority        string                     `json:"priority"`
	StoryPoints     *int                       `json:"storyPoints"`
	StatusID        uuid.UUID                  `json:"statusId"`
	StatusName      string                     `json:"statusName"`
	StatusCategory  string                     `json:"statusCategory"`
	ProjectID       uuid.UUID                  `json:"projectId"`
	AssigneeID      *uuid.UUID                 `json:"assigneeId"`
	AssigneeName    *string                    `json:"assigneeName"`
	ReporterID      uuid.UUID                  `json:"reporterId"`
	ReporterName    string                     `json:"reporterName"`
	ParentID        *uuid.UUID                 `json:"parentId"`
	DueDate         *string                    `json:"dueDate"`
	SprintID        *uuid.UUID                 `json:"sprintId"`
	SprintName      *string                    `json:"sprintName"`
	CreatedAt       string                     `json:"createdAt"`
	UpdatedAt       string                     `json:"updatedAt"`
	Refs            []IssueRefResponse         `json:"refs"`
	Labels          []IssueLabelResponse       `json:"labels"`
	FixVersions     []VersionResponse          `json:"fixVersions"`
	AffectsVersions []VersionResponse          `json:"affectsVersions"`
	CustomFields    []CustomFieldValueResponse `json:"customFields"`
	ProjectKey      string                     `json:"projectKey"`
	SLAStartTime    *string                    `json:"slaStartTime"`
	// ImportedKey is the original key of an imported issue, null otherwise
	// (docs/tasks.md#import).
	ImportedKey *string `json:"importedKey"`
	// Highlight is a searched list's snippet: HTML-escaped text, each match in <mark>.
	Highlight *string `json:"highlight,omitempty"`
}

// IssueLabelResponse is a label on an issue.
type IssueLabelResponse struct {
	ID    uuid.UUID `json:"id"`
	Name  string    `json:"name"`
	Color string    `json:"color"`
}

// VersionResponse is Version in api/openapi/40-issues.yaml, also used for an issue's
// versions.
type VersionResponse struct {
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name"`
}

// ToIssueResponse is v on the wire; Refs is left empty for the caller to fill.
func ToIssueResponse(v *issue.View) IssueResponse {
	r := IssueResponse{
		ID: v.ID, Key: v.Key, Title: v.Title, Description: v.Description, Type: v.Type, Priority: v.Priority,
		StoryPoints: v.StoryPoints, StatusID: v.StatusID, StatusName: v.StatusName, StatusCategory: v.StatusCategory,
		ProjectID: v.ProjectID, AssigneeID: v.AssigneeID, AssigneeName: v.AssigneeName, ReporterID: v.ReporterID,
		ReporterName: v.ReporterName, ParentID: v.ParentID, SprintID: v.SprintID, SprintName: v.SprintName,
		CreatedAt: Instant(v.CreatedAt), UpdatedAt: Instant(v.UpdatedAt), ProjectKey: v.ProjectKey,
		SLAStartTime: InstantPtr(v.SLAStartTime), ImportedKey: v.ImportedKey, Highlight: v.Highlight,
		Refs: []IssueRefResponse{}, CustomFields: ToCustomFieldValueResponses(v.CustomFields),
		Labels:      make([]IssueLabelResponse, len(v.Labels)),
		FixVersions: ToVersionResponses(v.FixVersions), AffectsVersions: ToVersionResponses(v.AffectsVersions),
	}
	if v.DueDate != nil {
		d := v.DueDate.Format(time.DateOnly)
		r.DueDate = &d
	}
	for i, l := range v.Labels {
		r.Labels[i] = IssueLabelResponse{ID: l.ID, Name: l.Name, Color: l.Color}
	}
	return r
}

// ToVersionResponses is vs on the wire.
func ToVersionResponses(vs []issue.VersionRef) []VersionResponse {
	out := make([]VersionResponse, len(vs))
	for i, v := range vs {
		out[i] = VersionResponse{ID: v.ID, Name: v.Name}
	}
	return out
}

// CustomFieldValueResponse is CustomFieldValue in api/openapi/93-custom-fields.yaml: one
// per field of the project, every value member null when unset.
type CustomFieldValueResponse struct {
	FieldID      uuid.UUID    `json:"fieldId"`
	FieldName    string       `json:"fieldName"`
	Type         string       `json:"type"`
	Required     bool         `json:"required"`
	TextValue    *string      `json:"textValue"`
	NumberValue  *json.Number `json:"numberValue"`
	DateValue    *string      `json:"dateValue"`
	BooleanValue *bool        `json:"booleanValue"`
	OptionID     *uuid.UUID   `json:"optionId"`
	OptionLabel  *string      `json:"optionLabel"`
}

// ToCustomFieldValueResponses is fvs on the wire.
func ToCustomFieldValueResponses(fvs []customfield.FieldValue) []CustomFieldValueResponse {
	out := make([]CustomFieldValueResponse, len(fvs))
	for i, fv := range fvs {
		r := CustomFieldValueResponse{FieldID: fv.Field.ID, FieldName: fv.Field.Name, Type: fv.Field.Type,
			Required: fv.Field.Required, TextValue: fv.Text, BooleanValue: fv.Bool, OptionID: fv.OptionID,
			OptionLabel: fv.OptionLabel}
		if fv.Number != nil {
			n := json.Number(*fv.Number)
			r.NumberValue = &n
		}
		if fv.Date != nil {
			d := fv.Date.Format(time.DateOnly)
			r.DateValue = &d
		}
		out[i] = r
	}
	return out
}

// IssueRefResponse is IssueRef in api/openapi/55-integrations.yaml.
type IssueRefResponse struct {
	ID         uuid.UUID `json:"id"`
	Provider   string    `json:"provider"`
	RefType    string    `json:"refType"`
	ExternalID string    `json:"externalId"`
	URL        string    `json:"url"`
	Title      *string   `json:"title"`
	CreatedAt  string    `json:"createdAt"`
}

// ToIssueRefResponses is rows on the wire.
func ToIssueRefResponses(rows []store.IssueRef) []IssueRefResponse {
	out := make([]IssueRefResponse, len(rows))
	for i, r := range rows {
		out[i] = IssueRefResponse{ID: r.ID, Provider: r.Provider, RefType: r.RefType, ExternalID: r.ExternalID,
			URL: r.URL, Title: r.Title, CreatedAt: Instant(r.CreatedAt)}
	}
	return out
}

// IssueRefs loads an issue's references for the single-issue replies: one query.
func (s *Env) IssueRefs(c *fiber.Ctx, issueID uuid.UUID) ([]IssueRefResponse, error) {
	rows, err := integration.Refs(c.UserContext(), s.DB.Bun, issueID)
	if err != nil {
		return nil, err
	}
	return ToIssueRefResponses(rows), nil
}
