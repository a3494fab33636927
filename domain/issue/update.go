package issue

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/customfield"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/workflow"
	"github.com/taskweave/taskweave/store"
)

// change is one changed field: the FieldChanged event it publishes and, when the field
// has an activity type (docs/api-conventions.md#issues), the activity entry it writes.
type change struct {
	field    string
	activity string // "" = the field has no activity type
	old, new *string
	oldRaw   string
	newRaw   string
	// customField is set for a custom field's change; its event carries eventOld and
	// eventNew, the values without the field's name the activity entry prefixes.
	customField        *customfield.Definition
	eventOld, eventNew string
}

// Update applies a partial update under the issue row's lock: the changed columns, the
// SLA timer, the label and version sets, the activity entries and the events commit in
// one transaction. A refused status change leaves everything as it was.
func (s *Service) Update(ctx context.Context, p Project, actor Actor, ref Ref, in Patch) (*View, error) {
	return s.update(ctx, p, actor, ref, in, true)
}

// Apply is Update for a caller that does not answer with the issue (an automation
// rule's action): the same change, checks, activity and events, without reading the
// issue's view back afterwards (three statements fewer).
func (s *Service) Apply(ctx context.Context, p Project, actor Actor, ref Ref, in Patch) error {
	_, err := s.update(ctx, p, actor, ref, in, false)
	return err
}

// update is Update; the view is read back only when view is set (nil otherwise).
func (s *Service) update(ctx context.Context, p Project, actor Actor, ref Ref, in Patch, view bool) (*View, error) {
	var out *View
	err := s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if len(in.CustomFieldValues) > 0 {
			// The fields before the issue (customfield.LockFields).
			ids := make([]uuid.UUID, len(in.CustomFieldValues))
			for i, v := range in.CustomFieldValues {
				ids[i] = v.FieldID
			}
			if err := customfield.LockFields(ctx, tx, p.ID, ids); err != nil {
				return err
			}
		}
		cur, err := loadView(ctx, tx, p, ref, true)
		if err != nil {
			return err
		}
		next := cur.Issue
		u := tx.NewUpdate().Table("issues").Where("id = ?", cur.ID)
		var changes []change
		set := func(column string, value any, c change) {
			u = u.Set(column+" = ?", value)
			changes = append(changes, c)
		}

		if in.Title != nil && *in.Title != cur.Title {
			next.Title = *in.Title
			set("title", next.Title, change{field: FieldTitle, activity: "TITLE_CHANGED", old: &cur.Title, new: in.Title,
				oldRaw: cur.Title, newRaw: next.Title})
		}
		if in.Description != nil && str(cur.Description) != *in.Description {
			next.Description = in.Description
			set("description", *in.Description, change{field: FieldDescription, activity: "DESCRIPTION_CHANGED",
				old: cur.Description, new: in.Description, oldRaw: str(cur.Description), newRaw: *in.Description})
		}
		if in.Priority != nil && *in.Priority != cur.Priority {
			next.Priority = *in.Priority
			set("priority", next.Priority, change{field: FieldPriority, activity: "PRIORITY_CHANGED",
				old: &cur.Priority, new: in.Priority, oldRaw: cur.Priority, newRaw: next.Priority})
		}
		if in.Type != nil && *in.Type != cur.Type {
			if *in.Type == TypeSubtask && cur.ParentID == nil {
				return ErrSubtaskNeedsParent
			}
			next.Type = *in.Type
			set("type", next.Type, change{field: FieldType, old: &cur.Type, new: in.Type, oldRaw: cur.Type, newRaw: next.Type})
		}
		if in.ClearStoryPoints {
			next.StoryPoints = nil
		} else if in.StoryPoints != nil {
			next.StoryPoints = in.StoryPoints
		}
		if intStr(cur.StoryPoints) != intStr(next.StoryPoints) {
			set("story_points", next.StoryPoints, change{field: FieldStoryPoints, activity: "STORY_POINTS_CHANGED",
				old: ptr(intStr(cur.StoryPoints)), new: ptr(intStr(next.StoryPoints)),
				oldRaw: intStr(cur.StoryPoints), newRaw: intStr(next.StoryPoints)})
		}
		if in.ClearDueDate {
			next.DueDate = nil
		} else if in.DueDate != nil {
			next.DueDate = in.DueDate
		}
		if oldDue, newDue := dateString(cur.DueDate), dateString(next.DueDate); oldDue != newDue {
			set("due_date", ptr(newDue), change{field: FieldDueDate, activity: "DUE_DATE_CHANGED",
				old: ptr(oldDue), new: ptr(newDue), oldRaw: oldDue, newRaw: newDue})
		}

		if err := s.patchAssignee(ctx, tx, p, cur, &next, in, set); err != nil {
			return err
		}
		if err := s.patchSprint(ctx, tx, p, cur, &next, in, set); err != nil {
			return err
		}

		var status *workflow.Status
		if in.StatusID != nil && *in.StatusID != cur.StatusID {
			if status, err = workflow.LoadStatus(ctx, tx, p.WorkflowID, *in.StatusID); err != nil {
				return err
			}
			after := workflow.IssueFields{Title: next.Title, Description: next.Description, AssigneeID: next.AssigneeID,
				StoryPoints: next.StoryPoints, DueDate: next.DueDate}
			if err := workflow.CheckStatusChange(ctx, tx, p.WorkflowID, cur.StatusID, status.ID, after, actor.MemberRole); err != nil {
				return err
			}
			u = u.Set("status_id = ?", status.ID)
			// The SLA timer: started by the first move into IN_PROGRESS, cleared by DONE
			// (docs/api-conventions.md#issues).
			switch status.Category {
			case workflow.CategoryInProgress:
				u = u.Set("sla_start_time = coalesce(sla_start_time, clock_timestamp())")
			case workflow.CategoryDone:
				u = u.Set("sla_start_time = NULL")
			}
		}

		setChanges, err := s.patchSets(ctx, tx, p, cur, in)
		if err != nil {
			return err
		}
		changes = append(changes, setChanges...)
		customFields, cfChanges, err := patchCustomFields(ctx, tx, p, cur.ID, in)
		if err != nil {
			return err
		}
		changes = append(changes, cfChanges...)

		if len(changes) > 0 || status != nil {
			if _, err := u.Set("updated_at = clock_timestamp()").Exec(ctx); err != nil {
				return fmt.Errorf("update issue: %w", err)
			}
			if err := s.record(ctx, tx, p, actor, cur, next.Title, status, changes); err != nil {
				return err
			}
		}

		if !view {
			return nil
		}
		if out, err = loadView(ctx, tx, p, Ref{ID: cur.ID}, false); err != nil {
			return err
		}
		if out.CustomFields = customFields; customFields == nil {
			if err := fillCustomFields(ctx, tx, p, out); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || out == nil {
		return nil, err
	}
	out.FixVersions, out.AffectsVersions = []VersionRef{}, []VersionRef{}
	return out, nil
}

// patchAssignee applies assigneeId / clearAssignee: ASSIGNED with the new name, or
// UNASSIGNED when cleared.
func (s *Service) patchAssignee(ctx context.Context, tx bun.Tx, p Project, cur *View, next *store.Issue, in Patch, set func(string, any, change)) error {
	var newName *string
	switch {
	case in.ClearAssignee:
		if cur.AssigneeID == nil {
			return nil
		}
		next.AssigneeID = nil
	case in.AssigneeID != nil:
		if cur.AssigneeID != nil && *cur.AssigneeID == *in.AssigneeID {
			return nil
		}
		name, err := memberName(ctx, tx, p.ID, *in.AssigneeID)
		if err != nil {
			return err
		}
		next.AssigneeID, newName = in.AssigneeID, &name
	default:
		return nil
	}
	activity := "ASSIGNED"
	if next.AssigneeID == nil {
		activity = "UNASSIGNED"
	}
	set("assignee_id", next.AssigneeID, change{field: FieldAssignee, activity: activity, old: cur.AssigneeName, new: newName,
		oldRaw: idStr(cur.AssigneeID), newRaw: idStr(next.AssigneeID)})
	return nil
}

// patchSprint applies sprintId / clearSprint: SPRINT_CHANGED with the sprint names.
func (s *Service) patchSprint(ctx context.Context, tx bun.Tx, p Project, cur *View, next *store.Issue, in Patch, set func(string, any, change)) error {
	var newName *string
	switch {
	case in.ClearSprint:
		if cur.SprintID == nil {
			return nil
		}
		next.SprintID = nil
	case in.SprintID != nil:
		if cur.SprintID != nil && *cur.SprintID == *in.SprintID {
			return nil
		}
		name, err := sprintName(ctx, tx, p.ID, *in.SprintID)
		if err != nil {
			return err
		}
		next.SprintID, newName = in.SprintID, &name
	default:
		return nil
	}
	set("sprint_id", next.SprintID, change{field: FieldSprint, activity: "SPRINT_CHANGED", old: cur.SprintName, new: newName,
		oldRaw: idStr(cur.SprintID), newRaw: idStr(next.SprintID)})
	return nil
}

// patchSets replaces the label and version sets named in the patch; a set that ends up
// equal to the current one is no change.
func (s *Service) patchSets(ctx context.Context, tx bun.Tx, p Project, cur *View, in Patch) ([]change, error) {
	var changes []change
	if in.LabelIDs != nil {
		labels, err := projectLabels(ctx, tx, p.ID, *in.LabelIDs)
		if err != nil {
			return nil, err
		}
		oldIDs, oldNames := labelStrings(cur.Labels)
		newIDs, newNames := labelStrings(labels)
		if oldIDs != newIDs {
			if _, err := tx.NewDelete().Model((*store.IssueLabel)(nil)).Where("issue_id = ?", cur.ID).Exec(ctx); err != nil {
				return nil, fmt.Errorf("clear labels: %w", err)
			}
			if err := setLabels(ctx, tx, cur.ID, labels); err != nil {
				return nil, err
			}
			changes = append(changes, change{field: FieldLabels, old: &oldNames, new: &newNames, oldRaw: oldIDs, newRaw: newIDs})
		}
	}
	var current *View
	for _, vs := range []struct {
		ids   *[]uuid.UUID
		kind  string
		field string
	}{{in.FixVersionIDs, VersionFix, FieldFixVersions}, {in.AffectsVersionIDs, VersionAffects, FieldAffectsVersions}} {
		if vs.ids == nil {
			continue
		}
		if current == nil {
			current = &View{Issue: cur.Issue}
			if err := fillVersions(ctx, tx, current); err != nil {
				return nil, err
			}
		}
		versions, err := projectVersions(ctx, tx, p.ID, *vs.ids)
		if err != nil {
			return nil, err
		}
		oldSet := current.FixVersions
		if vs.kind == VersionAffects {
			oldSet = current.AffectsVersions
		}
		oldIDs, oldNames := versionStrings(oldSet)
		newIDs, newNames := versionStrings(versions)
		if oldIDs == newIDs {
			continue
		}
		if _, err := tx.NewDelete().Model((*store.IssueVersion)(nil)).Where("issue_id = ? AND type = ?", cur.ID, vs.kind).Exec(ctx); err != nil {
			return nil, fmt.Errorf("clear versions: %w", err)
		}
		if len(versions) > 0 {
			rows := make([]store.IssueVersion, len(versions))
			for i, v := range versions {
				rows[i] = store.IssueVersion{IssueID: cur.ID, VersionID: v.ID, Type: vs.kind}
			}
			if _, err := tx.NewInsert().Model(&rows).Exec(ctx); err != nil {
				return nil, fmt.Errorf("insert versions: %w", err)
			}
		}
		changes = append(changes, change{field: vs.field, old: &oldNames, new: &newNames, oldRaw: oldIDs, newRaw: newIDs})
	}
	return changes, nil
}

// record writes the activity entries of an update and publishes its events, in the
// update's transaction.
func (s *Service) record(ctx context.Context, tx bun.Tx, p Project, actor Actor, cur *View, title string, status *workflow.Status, changes []change) error {
	at := s.now().UTC()
	subject := cur.subject()
	subject.Title = title
	by := byActor(actor)
	var acts []store.IssueActivity
	var events []event.Event
	if status != nil {
		acts = append(acts, store.IssueActivity{IssueID: cur.ID, ActorID: actor.UserID, Type: "STATUS_CHANGED",
			OldValue: &cur.StatusName, NewValue: &status.Name, NewStatusID: &status.ID})
		events = append(events, StatusChanged{Subject: subject, By: by,
			OldStatusID: cur.StatusID, OldStatusName: cur.StatusName, OldStatusCategory: cur.StatusCategory,
			NewStatusID: status.ID, NewStatusName: status.Name, NewStatusCategory: status.Category, At: at})
	}
	for _, c := range changes {
		if c.activity != "" {
			acts = append(acts, store.IssueActivity{IssueID: cur.ID, ActorID: actor.UserID, Type: c.activity,
				OldValue: nonEmpty(c.old), NewValue: nonEmpty(c.new)})
		}
		fc := FieldChanged{Subject: subject, By: by, Field: c.field,
			OldValue: str(c.old), NewValue: str(c.new), OldRaw: c.oldRaw, NewRaw: c.newRaw, At: at}
		if c.customField != nil {
			id := c.customField.ID
			fc.CustomFieldID, fc.CustomFieldName, fc.OldValue, fc.NewValue = &id, c.customField.Name, c.eventOld, c.eventNew
		}
		events = append(events, fc)
	}
	if len(acts) > 0 {
		if _, err := tx.NewInsert().Model(&acts).Exec(ctx); err != nil {
			return fmt.Errorf("insert activity: %w", err)
		}
	}
	return s.bus.Emit(ctx, tx, events...)
}

func labelStrings(ls []LabelRef) (ids, names string) {
	a, b := make([]string, len(ls)), make([]string, len(ls))
	for i, l := range ls {
		a[i], b[i] = l.ID.String(), l.Name
	}
	return sortedJoin(a), strings.Join(b, ", ")
}

func versionStrings(vs []VersionRef) (ids, names string) {
	a, b := make([]string, len(vs)), make([]string, len(vs))
	for i, v := range vs {
		a[i], b[i] = v.ID.String(), v.Name
	}
	return sortedJoin(a), strings.Join(b, ", ")
}

// sortedJoin is the order-independent form of an id set, for comparing sets.
func sortedJoin(ss []string) string {
	slices.Sort(ss)
	return strings.Join(ss, ",")
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// ptr is nil for "", so an empty display value is stored as null.
func ptr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nonEmpty(s *string) *string {
	if s == nil {
		return nil
	}
	return ptr(*s)
}

func intStr(n *int) string {
	if n == nil {
		return ""
	}
	return strconv.Itoa(*n)
}

func idStr(id *uuid.UUID) string {
	if id == nil {
		return ""
	}
	return id.String()
}
