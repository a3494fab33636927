package issue

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/customfield"
	"github.com/taskweave/taskweave/store"
)

// insertIssue allocates the next key and inserts the issue in one statement. Keys are
// allocated under the project row's lock (the UPDATE), so concurrent creates never
// share a number, and a rolled-back create gives its number back. Everything else the
// create needs is read before (readCreateContext, with what the event consumers would
// read), so the lock is held only for this statement, the jobs and records the event
// writes, if any, and the commit. It takes positional parameters so the driver prepares it
// once per connection: with bun's inlined values every create would be parsed and
// planned anew inside the lock.
const insertIssue = `WITH seq AS (
	UPDATE projects SET issue_seq = issue_seq + 1 WHERE id = $1 RETURNING issue_seq
)
INSERT INTO issues (id, project_id, number, key, title, description, type, priority, story_points,
	status_id, assignee_id, reporter_id, parent_id, due_date, sprint_id)
SELECT $2, $1, seq.issue_seq, $3 || '-' || seq.issue_seq, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::date, $14
FROM seq
RETURNING number, key, created_at, updated_at`

// Create adds an issue in the project's default status and publishes Created.
func (s *Service) Create(ctx context.Context, p Project, actor Actor, in NewIssue) (*View, error) {
	return s.CreateRead(ctx, p, actor, in, nil)
}

// NeedsFields says whether creating in needs the project's custom fields.
func (in NewIssue) NeedsFields() bool { return len(in.CustomFieldValues) > 0 || in.RequireCustomFields }

// CreateRead is Create with its context already read by pre (NewContextRead, made with
// in.NeedsFields()); a pre that was not scanned, or nil, leaves the read to the create.
func (s *Service) CreateRead(ctx context.Context, p Project, actor Actor, in NewIssue, pre *ContextRead) (*View, error) {
	if in.Type == TypeSubtask && in.ParentID == nil && in.ParentKey == "" {
		return nil, ErrSubtaskNeedsParent
	}
	v := &View{
		Issue: store.Issue{
			ID: uuid.New(), ProjectID: p.ID, Title: in.Title, Description: in.Description, Type: in.Type,
			Priority: in.Priority, StoryPoints: in.StoryPoints, AssigneeID: in.AssigneeID, ReporterID: actor.UserID,
			ParentID: in.ParentID, DueDate: in.DueDate, SprintID: in.SprintID,
		},
		ProjectKey: p.Key, ReporterName: actor.DisplayName,
		Labels: []LabelRef{}, FixVersions: []VersionRef{}, AffectsVersions: []VersionRef{},
	}
	withFields := in.NeedsFields()
	if pre != nil && pre.Extra.Scanned && pre.withFields != withFields {
		pre = nil // read for another input: read again
	}
	err := s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		cc, err := pre.context(ctx, p)
		if err == nil && cc == nil {
			cc, err = s.readCreateContext(ctx, tx, p, withFields)
		}
		if err != nil {
			return err
		}
		ctx = cc.ctx
		v.StatusID, v.StatusName, v.StatusCategory = cc.status.ID, cc.status.Name, cc.status.Category
		if in.AssigneeID != nil {
			name, err := memberName(ctx, tx, p.ID, *in.AssigneeID)
			if err != nil {
				return err
			}
			v.AssigneeName = &name
		}
		switch {
		case in.ParentKey != "":
			id, err := parentByKey(ctx, tx, p.ID, in.ParentKey)
			if err != nil {
				return err
			}
			v.ParentID = &id
		case in.ParentID != nil:
			if err := checkParent(ctx, tx, p.ID, *in.ParentID); err != nil {
				return err
			}
		}
		if in.SprintID != nil {
			name, err := sprintName(ctx, tx, p.ID, *in.SprintID)
			if err != nil {
				return err
			}
			v.SprintName = &name
		}
		if v.Labels, err = projectLabels(ctx, tx, p.ID, in.LabelIDs); err != nil {
			return err
		}
		v.CustomFields = []customfield.FieldValue{}
		var values []customfield.Change
		if withFields {
			if v.CustomFields, values, err = customfield.Plan(customfield.Blank(cc.fields), in.CustomFieldValues, in.RequireCustomFields); err != nil {
				return err
			}
		}

		var due *string
		if in.DueDate != nil {
			d := dateString(in.DueDate)
			due = &d
		}
		err = tx.Tx.QueryRowContext(ctx, insertIssue, store.UUID(p.ID), store.UUID(v.ID), p.Key, v.Title, v.Description,
			v.Type, v.Priority, v.StoryPoints, store.UUID(v.StatusID), store.NullUUID(v.AssigneeID), store.UUID(v.ReporterID),
			store.NullUUID(v.ParentID), due, store.NullUUID(v.SprintID)).
			Scan(&v.Number, &v.Key, &v.CreatedAt, &v.UpdatedAt)
		if err != nil {
			return fmt.Errorf("insert issue: %w", err)
		}
		if err := setLabels(ctx, tx, v.ID, v.Labels); err != nil {
			return err
		}
		if err := customfield.Write(ctx, tx, v.ID, values); err != nil {
			return err
		}
		return s.bus.Emit(ctx, tx, Created{
			Subject: v.subject(), By: byActor(actor), Type: v.Type, Priority: v.Priority,
			StatusID: v.StatusID, StatusName: v.StatusName, AssigneeID: v.AssigneeID, ReporterID: v.ReporterID,
			ParentID: v.ParentID, At: v.CreatedAt,
		})
	})
	if err != nil {
		return nil, err
	}
	return v, nil
}

func (v *View) subject() Subject {
	return Subject{ProjectID: v.ProjectID, ProjectKey: v.ProjectKey, IssueID: v.ID, IssueKey: v.Key, Title: v.Title}
}

// setLabels inserts the label rows of a new set (the caller removed the old ones).
func setLabels(ctx context.Context, tx bun.Tx, issueID uuid.UUID, labels []LabelRef) error {
	if len(labels) == 0 {
		return nil
	}
	rows := make([]store.IssueLabel, len(labels))
	for i, l := range labels {
		rows[i] = store.IssueLabel{IssueID: issueID, LabelID: l.ID}
	}
	if _, err := tx.NewInsert().Model(&rows).Exec(ctx); err != nil {
		return fmt.Errorf("insert issue labels: %w", err)
	}
	return nil
}
