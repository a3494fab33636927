package task

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/attachment"
	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/automation"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/store"
)

// Import formats (docs/tasks.md#import).
const (
	FormatTaskweave  = "taskweave"
	FormatJiraCSV    = "jira-csv"
	FormatGitHubJSON = "github-json"
)

// ImportFormats lists the formats an import accepts.
var ImportFormats = []string{FormatTaskweave, FormatJiraCSV, FormatGitHubJSON}

// ImportParams is an import task's request.
type ImportParams struct {
	Actor  Actor  `json:"actor"`
	Format string `json:"format"`
	DryRun bool   `json:"dryRun"`
	// UserMapping maps a name, login or e-mail of the file to a Taskweave user's e-mail.
	UserMapping map[string]string `json:"userMapping,omitempty"`
}

// StartImport creates an import task into project p on tx and returns the writer its
// file goes to (stored in the task's chunks on tx: the worker that runs it may be
// anywhere). Its parameters follow with SetImportParams, on the same tx, before the
// job can run (it commits with them).
func StartImport(ctx context.Context, tx bun.Tx, bus *event.Bus, p *store.Project, actor Actor) (*store.Task, io.WriteCloser, error) {
	t, err := Create(ctx, tx, bus, NewTask{Kind: KindImport, CreatedBy: actor.UserID, Project: p, Params: ImportParams{Actor: actor}})
	if err != nil {
		return nil, nil, err
	}
	w, err := newFileWriter(ctx, tx, t.ID, slotInput)
	if err != nil {
		return nil, nil, err
	}
	return t, w, nil
}

// SetImportParams sets the import's parameters (the actor StartImport set stays).
func SetImportParams(ctx context.Context, tx bun.Tx, t *store.Task, params ImportParams) error {
	var cur ImportParams
	if err := json.Unmarshal(t.Params, &cur); err != nil {
		return fmt.Errorf("import params: %w", err)
	}
	params.Actor = cur.Actor
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	t.Params = raw
	if _, err := tx.NewUpdate().Table("tasks").Set("params = ?", string(raw)).Where("id = ?", t.ID).Exec(ctx); err != nil {
		return fmt.Errorf("set import params: %w", err)
	}
	return nil
}

// Record is one issue to import, whatever the format it came from.
type Record struct {
	// Item names it in errors: "row 3" of a CSV, "issue 2" of a JSON array.
	Item        string            `json:"item"`
	SourceKey   string            `json:"sourceKey"`
	SourceID    string            `json:"sourceId,omitempty"`
	Title       string            `json:"title"`
	Description *string           `json:"description,omitempty"`
	Type        string            `json:"type"`
	Priority    string            `json:"priority"`
	Status      string            `json:"status,omitempty"`
	Category    string            `json:"category,omitempty"`
	Assignee    string            `json:"assignee,omitempty"`
	Reporter    string            `json:"reporter,omitempty"`
	Labels      []string          `json:"labels,omitempty"`
	FixVersions []string          `json:"fixVersions,omitempty"`
	Affects     []string          `json:"affectsVersions,omitempty"`
	Sprint      string            `json:"sprint,omitempty"`
	StoryPoints *int              `json:"storyPoints,omitempty"`
	DueDate     *string           `json:"dueDate,omitempty"`
	Parent      string            `json:"parent,omitempty"`
	CreatedAt   *time.Time        `json:"createdAt,omitempty"`
	UpdatedAt   *time.Time        `json:"updatedAt,omitempty"`
	Comments    []RecordComment   `json:"comments,omitempty"`
	Fields      map[string]string `json:"customFields,omitempty"`
	// Files are attachments inside the import file (its paths), Skipped the ones it
	// only names (URLs are never fetched).
	Files   []RecordFile `json:"files,omitempty"`
	Skipped []string     `json:"skipped,omitempty"`
}

// RecordComment is one comment of a Record.
type RecordComment struct {
	Author    string     `json:"author,omitempty"`
	Body      string     `json:"body"`
	CreatedAt *time.Time `json:"createdAt,omitempty"`
}

// RecordFile is one attachment of a Record inside the import file.
type RecordFile struct {
	Path        string `json:"path"`
	Filename    string `json:"filename"`
	ContentType string `json:"contentType"`
}

// Setup is what a taskweave export brings besides its issues: labels, versions,
// sprints and custom fields created (when missing) before the first issue.
type Setup struct {
	Labels []struct {
		Name  string `json:"name"`
		Color string `json:"color"`
	} `json:"labels"`
	Versions []struct {
		Name string `json:"name"`
	} `json:"versions"`
	Sprints []struct {
		Name      string  `json:"name"`
		Goal      *string `json:"goal"`
		Status    string  `json:"status"`
		StartDate *string `json:"startDate"`
		EndDate   *string `json:"endDate"`
	} `json:"sprints"`
	CustomFields []struct {
		Name     string   `json:"name"`
		Type     string   `json:"type"`
		Required bool     `json:"required"`
		Options  []string `json:"options"`
	} `json:"customFields"`
	// Settings are the members, workflow, rules and desk settings, applied after.
	Settings
}

// parsed is what a format's parser read: the records in file order, the setup (taskweave
// only), and the problems that skip or change an item.
type parsed struct {
	records  []Record
	setup    *Setup
	problems []store.TaskError
}

// taskItem is a row of task_items.
type taskItem struct {
	bun.BaseModel `bun:"table:task_items"`
	TaskID        uuid.UUID       `bun:"task_id,type:uuid"`
	Seq           int             `bun:"seq"`
	Data          json.RawMessage `bun:"data,type:jsonb"`
}

// importState is an import's state_data: whether it planned (its items are in
// task_items) and whether it was undone.
type importState struct {
	Planned bool `json:"planned"`
	Undone  bool `json:"undone,omitempty"`
}

// Import is the import handler. Its first batch parses and checks the file and plans
// the items (or, for a dry run, reports and ends); each later batch creates the issues
// of its items with their comments, labels, versions, sprint, custom values and
// attachments, recording every created row for undo in the same transaction.
type Import struct {
	// Attachments is where imported attachment files go; nil skips them (reported).
	Attachments *attachment.Stores
	// Bus publishes the events of every created issue and comment, as creating them
	// through the API does (docs/tasks.md#events); nil publishes none.
	Bus *event.Bus
	// Rules creates a taskweave export's automation rules; nil skips them (reported).
	Rules *automation.Service
}

// Batch implements Handler.
func (h *Import) Batch(ctx context.Context, tx bun.Tx, t *store.Task, n int) (Batch, error) {
	var params ImportParams
	if err := json.Unmarshal(t.Params, &params); err != nil {
		return Batch{}, fmt.Errorf("import params: %w", err)
	}
	var st importState
	if len(t.StateData) > 0 {
		if err := json.Unmarshal(t.StateData, &st); err != nil {
			return Batch{}, fmt.Errorf("import state: %w", err)
		}
	}
	a, actor, err := taskActor(ctx, tx, t, params.Actor)
	if err != nil {
		return Batch{}, err
	}
	in, err := openFile(ctx, tx, t.ID, slotInput)
	if err != nil {
		return Batch{}, err
	}
	target, err := loadTarget(ctx, tx, a.Project.ID, a.Project.WorkflowID, params)
	if err != nil {
		return Batch{}, err
	}
	if !a.Role.AtLeast(project.Admin) {
		return Batch{}, Fail("", "FORBIDDEN", "%s is no longer an ADMIN of project %s", params.Actor.Email, a.Project.Key)
	}
	if !st.Planned {
		sc := settingsContext{workflowID: a.Project.WorkflowID, role: a.Role, rules: h.Rules,
			by: audit.Actor{UserID: actor.UserID, Email: actor.Email, IP: actor.IP, UserAgent: actor.UserAgent}}
		return h.plan(ctx, tx, t, params, in, target, &st, sc)
	}
	apply := &applier{tx: tx, task: t, params: params, target: target, actor: actor.UserID, input: in, bus: h.Bus,
		key: a.Project.Key, by: issue.By{ID: &actor.UserID, Email: actor.Email, IP: actor.IP, UserAgent: actor.UserAgent}}
	// Notifications of the task to one user fold into one, as a bulk change's do.
	// The toggles the consumers read (audit level, rules, webhooks) are read once a batch.
	ctx = event.WithMemo(event.WithTask(ctx, t.ID))
	if h.Attachments != nil {
		apply.files = h.Attachments.Uploads()
	}
	return apply.batch(ctx, n)
}

// errDryRun rolls back what a dry run applied to check it.
var errDryRun = errors.New("dry run")

// plan parses the file, checks every record against the project, and either reports
// (dry run) or stores the records as the task's items.
func (h *Import) plan(ctx context.Context, tx bun.Tx, t *store.Task, params ImportParams, in *file, target *target, st *importState,
	sc settingsContext) (Batch, error) {
	var p *parsed
	var err error
	switch params.Format {
	case FormatJiraCSV:
		p, err = parseJiraCSV(io.NewSectionReader(readerAt{ctx, in}, 0, in.size))
	case FormatGitHubJSON:
		p, err = parseGitHubJSON(io.NewSectionReader(readerAt{ctx, in}, 0, in.size))
	default:
		p, err = parseTaskweave(readerAt{ctx, in}, in.size)
	}
	if err != nil {
		return Batch{}, err
	}
	problems := append([]store.TaskError{}, p.problems...)
	check := func(db bun.Tx) error {
		if p.setup != nil {
			// The export's labels, versions, sprints and fields, then its members,
			// workflow, rules and desk settings, before the records are checked: they are
			// checked against the project these made (a member added is an assignee).
			ap := &applier{tx: db, task: t, params: params, target: target}
			if err := ap.setup(ctx, p.setup); err != nil {
				return err
			}
			errs, err := ap.settings(ctx, &p.setup.Settings, sc)
			if err != nil {
				return err
			}
			problems = append(problems, errs...)
			if target, err = loadTarget(ctx, db, target.projectID, sc.workflowID, params); err != nil {
				return err
			}
		}
		for i := range p.records {
			problems = append(problems, target.check(&p.records[i])...)
		}
		return nil
	}
	if params.DryRun && p.setup != nil {
		// A dry run applies the settings in a savepoint it rolls back: it reports what
		// the import would meet (a member who is no user, a rule that cannot be made)
		// and changes nothing.
		err := tx.RunInTx(ctx, nil, func(_ context.Context, sp bun.Tx) error {
			if err := check(sp); err != nil {
				return err
			}
			return errDryRun
		})
		if !errors.Is(err, errDryRun) {
			return Batch{}, err
		}
	} else if err := check(tx); err != nil {
		return Batch{}, err
	}
	t.Total = len(p.records)
	if params.DryRun {
		if err := h.report(ctx, tx, t, p, problems); err != nil {
			return Batch{}, err
		}
		return Batch{Consumed: len(p.records), Errors: problems, Done: true}, nil
	}
	for i := 0; i < len(p.records); i += 500 {
		rows := p.records[i:min(i+500, len(p.records))]
		values := make([]taskItem, len(rows))
		for j := range rows {
			raw, err := json.Marshal(rows[j])
			if err != nil {
				return Batch{}, err
			}
			values[j] = taskItem{TaskID: t.ID, Seq: i + j, Data: raw}
		}
		if _, err := tx.NewInsert().Model(&values).Exec(ctx); err != nil {
			return Batch{}, fmt.Errorf("store import items: %w", err)
		}
	}
	st.Planned = true
	if t.StateData, err = json.Marshal(st); err != nil {
		return Batch{}, err
	}
	// The problems are reported now; the items they concern are still imported (without
	// what could not be mapped) unless the problem said the item is skipped.
	return Batch{Errors: problems, Done: len(p.records) == 0}, nil
}

// report writes a dry run's result: what the import would create.
func (h *Import) report(ctx context.Context, tx bun.Tx, t *store.Task, p *parsed, problems []store.TaskError) error {
	labels, versions, sprints, fields := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	comments, files := 0, 0
	for _, r := range p.records {
		for _, l := range r.Labels {
			labels[l] = true
		}
		for _, v := range append(append([]string{}, r.FixVersions...), r.Affects...) {
			versions[v] = true
		}
		if r.Sprint != "" {
			sprints[r.Sprint] = true
		}
		for f := range r.Fields {
			fields[f] = true
		}
		comments += len(r.Comments)
		files += len(r.Files)
	}
	report := map[string]any{"dryRun": true, "wouldCreate": map[string]int{"issues": len(p.records), "comments": comments,
		"attachments": files, "labels": len(labels), "versions": len(versions), "sprints": len(sprints),
		"customFields": len(fields)}, "problems": problems}
	raw, err := json.MarshalIndent(report, "", "  ")
	if err != nil {
		return err
	}
	w, err := newFileWriter(ctx, tx, t.ID, slotResult)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, bytes.NewReader(raw)); err != nil {
		return err
	}
	name := deref(t.ProjectKey) + "-import-dry-run.json"
	t.ResultName, t.ResultType, t.ResultKey = &name, ptrTo("application/json"), ptrTo(slotResult)
	return w.Close()
}

// fileFail is the failure of a file that cannot be read at all.
func fileFail(item, format string, args ...any) *Failure {
	return Fail(item, "INVALID_FILE", format, args...)
}

// lower is the key names are matched by.
func lower(s string) string { return strings.ToLower(strings.TrimSpace(s)) }
