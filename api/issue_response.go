package api

import (
	"time"

	"github.com/google/uuid"

	"github.com/taskweave/taskweave/domain/issue"
)

// issueResponse is IssueResponse in api/openapi/40-issues.yaml. Every nullable member is
// always sent; there is deliberately no `status` member (ticket items use that name for a
// string).
type issueResponse struct {
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
	Refs            []issueRefResponse         `json:"refs"`
	Labels          []issueLabelResponse       `json:"labels"`
	FixVersions     []versionResponse          `json:"fixVersions"`
	AffectsVersions []versionResponse          `json:"affectsVersions"`
	CustomFields    []customFieldValueResponse `json:"customFields"`
	ProjectKey      string                     `json:"projectKey"`
	SLAStartTime    *string                    `json:"slaStartTime"`
}

// issueLabelResponse is a label on an issue.
type issueLabelResponse struct {
	ID    uuid.UUID `json:"id"`
	Name  string    `json:"name"`
	Color string    `json:"color"`
}

// versionResponse is Version in api/openapi/40-issues.yaml, also used for an issue's
// versions.
type versionResponse struct {
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name"`
}

func toIssueResponse(v *issue.View) issueResponse {
	r := issueResponse{
		ID: v.ID, Key: v.Key, Title: v.Title, Description: v.Description, Type: v.Type, Priority: v.Priority,
		StoryPoints: v.StoryPoints, StatusID: v.StatusID, StatusName: v.StatusName, StatusCategory: v.StatusCategory,
		ProjectID: v.ProjectID, AssigneeID: v.AssigneeID, AssigneeName: v.AssigneeName, ReporterID: v.ReporterID,
		ReporterName: v.ReporterName, ParentID: v.ParentID, SprintID: v.SprintID, SprintName: v.SprintName,
		CreatedAt: instant(v.CreatedAt), UpdatedAt: instant(v.UpdatedAt), ProjectKey: v.ProjectKey,
		SLAStartTime: instantPtr(v.SLAStartTime),
		Refs:         []issueRefResponse{}, CustomFields: toCustomFieldValueResponses(v.CustomFields),
		Labels:      make([]issueLabelResponse, len(v.Labels)),
		FixVersions: toVersionResponses(v.FixVersions), AffectsVersions: toVersionResponses(v.AffectsVersions),
	}
	if v.DueDate != nil {
		d := v.DueDate.Format(time.DateOnly)
		r.DueDate = &d
	}
	for i, l := range v.Labels {
		r.Labels[i] = issueLabelResponse{ID: l.ID, Name: l.Name, Color: l.Color}
	}
	return r
}

func toVersionResponses(vs []issue.VersionRef) []versionResponse {
	out := make([]versionResponse, len(vs))
	for i, v := range vs {
		out[i] = versionResponse{ID: v.ID, Name: v.Name}
	}
	return out
}
