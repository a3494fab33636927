package issue

import (
	"context"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/customfield"
)

// FieldCustomField is the Field of a custom field's FieldChanged; the event names the
// custom field in CustomFieldID and CustomFieldName.
const FieldCustomField = "customField"

// activityCustomField is the activity type of a custom field change (a Taskweave
// addition); its values read "<field name>: <value>", since an activity entry has no
// member naming the field.
const activityCustomField = "CUSTOM_FIELD_CHANGED"

// patchCustomFields applies a patch's customFieldValues: the values after the patch
// (nil when the patch names none) and one change per changed field.
func patchCustomFields(ctx context.Context, tx bun.Tx, p Project, issueID uuid.UUID, in Patch) ([]customfield.FieldValue, []change, error) {
	if in.CustomFieldValues == nil {
		return nil, nil, nil
	}
	current, err := customfield.ForIssue(ctx, tx, p.ID, issueID)
	if err != nil {
		return nil, nil, err
	}
	next, cfChanges, err := customfield.Plan(current, in.CustomFieldValues, false)
	if err != nil {
		return nil, nil, err
	}
	if err := customfield.Write(ctx, tx, issueID, cfChanges); err != nil {
		return nil, nil, err
	}
	changes := make([]change, len(cfChanges))
	for i, c := range cfChanges {
		changes[i] = change{field: FieldCustomField, activity: activityCustomField,
			old: labelled(c.Field.Name, c.Old), new: labelled(c.Field.Name, c.New),
			oldRaw: c.Old.Raw(), newRaw: c.New.Raw(), customField: c.Field}
		// The event's display values are the values alone: the event names the field.
		changes[i].eventOld, changes[i].eventNew = c.Old.Display(), c.New.Display()
	}
	return next, changes, nil
}

// labelled is an activity value of a custom field, "<name>: <value>", or nil when unset.
func labelled(name string, v customfield.Value) *string {
	if !v.Set {
		return nil
	}
	s := name + ": " + v.Display()
	return &s
}

// fillCustomFields loads every field of the project with the value v holds.
func fillCustomFields(ctx context.Context, db bun.IDB, p Project, v *View) error {
	fvs, err := customfield.ForIssue(ctx, db, p.ID, v.ID)
	if err != nil {
		return err
	}
	v.CustomFields = fvs
	return nil
}
