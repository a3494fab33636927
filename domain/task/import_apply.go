package task

import (
	"archive/zip"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/attachment"
	"github.com/taskweave/taskweave/domain/comment"
	"github.com/taskweave/taskweave/domain/customfield"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/store"
)

// importStatus is a workflow status an import can put issues in.
type importStatus struct {
	ID       uuid.UUID `bun:"id"`
	Name     string    `bun:"name"`
	Category string    `bun:"category"`
}

// target is the project an import writes into, as one batch reads it.
type target struct {
	projectID uuid.UUID
	format    string
	statuses  []importStatus
	// users are the project's members (owner included) by lower-case e-mail and
	// display name; mapping is the request's userMapping by lower-case source name.
	users    map[string]uuid.UUID
	mapping  map[string]string
	labels   map[string]uuid.UUID
	versions map[string]uuid.UUID
	sprints  map[string]uuid.UUID
	fields   map[string]*customfield.Definition
}

// loadTarget reads the project's statuses, members, labels, versions, sprints and
// custom fields.
func loadTarget(ctx context.Context, db bun.IDB, projectID uuid.UUID, workflowID *uuid.UUID, params ImportParams) (*target, error) {
	t := &target{projectID: projectID, format: params.Format, users: map[string]uuid.UUID{}, mapping: map[string]string{},
		labels: map[string]uuid.UUID{}, versions: map[string]uuid.UUID{}, sprints: map[string]uuid.UUID{},
		fields: map[string]*customfield.Definition{}}
	for k, v := range params.UserMapping {
		t.mapping[lower(k)] = lower(v)
	}
	if workflowID == nil {
		return nil, Fail("", "NO_WORKFLOW", "the project has no workflow to put issues in")
	}
	if err := db.NewSelect().Table("workflow_statuses").Column("id", "name", "category").Where("workflow_id = ?", *workflowID).
		OrderExpr("position, name").Scan(ctx, &t.statuses); err != nil {
		return nil, fmt.Errorf("read statuses: %w", err)
	}
	if len(t.statuses) == 0 {
		return nil, Fail("", "NO_WORKFLOW", "the project's workflow has no status")
	}
	var people []struct {
		ID    uuid.UUID `bun:"id"`
		Email string    `bun:"email"`
		Name  string    `bun:"display_name"`
	}
	if err := db.NewRaw(`SELECT u.id, u.email, u.display_name FROM users u WHERE u.deleted_at IS NULL AND (
		u.id = (SELECT owner_id FROM projects WHERE id = ?) OR u.id IN (SELECT user_id FROM project_members WHERE project_id = ?))`,
		projectID, projectID).Scan(ctx, &people); err != nil {
		return nil, fmt.Errorf("read members: %w", err)
	}
	for _, p := range people {
		t.users[lower(p.Email)] = p.ID
		if _, taken := t.users[lower(p.Name)]; !taken {
			t.users[lower(p.Name)] = p.ID
		}
	}
	for _, x := range []struct {
		table string
		dst   map[string]uuid.UUID
	}{{"labels", t.labels}, {"versions", t.versions}, {"sprints", t.sprints}} {
		var rows []struct {
			ID   uuid.UUID `bun:"id"`
			Name string    `bun:"name"`
		}
		if err := db.NewSelect().Table(x.table).Column("id", "name").Where("project_id = ?", projectID).Scan(ctx, &rows); err != nil {
			return nil, fmt.Errorf("read %s: %w", x.table, err)
		}
		for _, r := range rows {
			x.dst[lower(r.Name)] = r.ID
		}
	}
	defs, err := customfield.List(ctx, db, projectID)
	if err != nil {
		return nil, err
	}
	for i := range defs {
		t.fields[lower(defs[i].Name)] = &defs[i]
	}
	return t, nil
}

// user resolves a name, login or e-mail of the file to a member of the project.
func (t *target) user(name string) (uuid.UUID, bool) {
	if strings.TrimSpace(name) == "" {
		return uuid.Nil, false
	}
	key := lower(name)
	if m, ok := t.mapping[key]; ok {
		key = m
	}
	id, ok := t.users[key]
	return id, ok
}

// status is the status a record goes to: the one of its name, else the first of its
// category, else the first TODO status; exact is false when the name did not match.
func (t *target) status(r *Record) (importStatus, bool) {
	for _, s := range t.statuses {
		if r.Status != "" && lower(s.Name) == lower(r.Status) {
			return s, true
		}
	}
	for _, cat := range []string{r.Category, "TODO"} {
		for _, s := range t.statuses {
			if cat != "" && s.Category == cat {
				return s, cat == r.Category && r.Status == ""
			}
		}
	}
	return t.statuses[0], false
}

// check reports what of r cannot be imported as it is, normalizing r on the way (a
// subtask without a parent becomes a TASK, a long title is cut).
func (t *target) check(r *Record) []store.TaskError {
	var out []store.TaskError
	add := func(code, format string, args ...any) {
		out = append(out, store.TaskError{Item: r.Item, Code: code, Message: fmt.Sprintf(format, args...)})
	}
	if strings.TrimSpace(r.Title) == "" {
		return []store.TaskError{{Item: r.Item, Code: "MISSING_TITLE", Message: "the issue has no title (summary); it is skipped"}}
	}
	if utf8.RuneCountInString(r.Title) > 255 {
		r.Title = string([]rune(r.Title)[:255])
		add("TITLE_TRUNCATED", "the title was cut to 255 characters")
	}
	if r.Type == "SUBTASK" && r.Parent == "" {
		r.Type = "TASK"
		add("SUBTASK_WITHOUT_PARENT", "a subtask without a parent is imported as a TASK")
	}
	if r.Status != "" || r.Category != "" {
		if s, exact := t.status(r); !exact {
			add("STATUS_UNMAPPED", "status %q is not in the workflow; the issue goes to %q", r.Status, s.Name)
		}
	}
	for _, who := range []struct{ role, name string }{{"assignee", r.Assignee}, {"reporter", r.Reporter}} {
		if who.name != "" {
			if _, ok := t.user(who.name); !ok {
				add("USER_UNMAPPED", "%s %q is no member of the project (add it to userMapping); left out", who.role, who.name)
			}
		}
	}
	for _, c := range r.Comments {
		if c.Author != "" {
			if _, ok := t.user(c.Author); !ok {
				add("USER_UNMAPPED", "comment author %q is no member of the project; the comment is the importer's", c.Author)
			}
		}
	}
	for _, s := range r.Skipped {
		add("ATTACHMENT_SKIPPED", "attachment %s is only linked in the file and was not fetched", s)
	}
	for name, v := range r.Fields {
		if def := t.fields[lower(name)]; def != nil && def.Type != customfield.TypeDropdown && v != "" {
			if _, err := def.Parse(v); err != nil {
				add("CUSTOM_FIELD_INVALID", "%q is not a %s value of field %q; left out", v, def.Type, def.Name)
			}
		}
	}
	return out
}

// applier creates the items of one batch.
type applier struct {
	tx     bun.Tx
	task   *store.Task
	params ImportParams
	target *target
	actor  uuid.UUID
	// by is the importer as the events of the created issues and comments name it;
	// bus publishes them (nil publishes nothing: the setup of a plan creates no issue).
	by    issue.By
	bus   *event.Bus
	key   string
	files attachment.Storage
	input *file
	zip   *zip.Reader
}

// created records a row the task created, for undo.
func (a *applier) created(ctx context.Context, kind string, id uuid.UUID) error {
	if _, err := a.tx.NewRaw("INSERT INTO task_created (task_id, kind, id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
		a.task.ID, kind, id).Exec(ctx); err != nil {
		return fmt.Errorf("record created %s: %w", kind, err)
	}
	return nil
}

// named finds or creates the label, version or sprint name.
func (a *applier) named(ctx context.Context, kind, name string, extra map[string]any) (uuid.UUID, error) {
	m, table := a.target.labels, "labels"
	switch kind {
	case "version":
		m, table = a.target.versions, "versions"
	case "sprint":
		m, table = a.target.sprints, "sprints"
	}
	if id, ok := m[lower(name)]; ok {
		return id, nil
	}
	cols := map[string]any{"id": uuid.New(), "project_id": a.target.projectID, "name": name}
	if kind == "label" {
		cols["color"] = "#6c8fef"
	}
	for k, v := range extra {
		cols[k] = v
	}
	if _, err := a.tx.NewInsert().Model(&cols).TableExpr(table).Exec(ctx); err != nil {
		return uuid.Nil, fmt.Errorf("create %s %q: %w", kind, name, err)
	}
	id := cols["id"].(uuid.UUID)
	m[lower(name)] = id
	return id, a.created(ctx, kind, id)
}

// field finds or creates the custom field name (TEXT when the file does not say).
func (a *applier) field(ctx context.Context, name, typ string, required bool) (*customfield.Definition, error) {
	if d := a.target.fields[lower(name)]; d != nil {
		return d, nil
	}
	if typ == "" {
		typ = customfield.TypeText
	}
	d, err := customfield.Create(ctx, a.tx, a.target.projectID, customfield.NewField{Name: name, Type: typ, Required: required,
		SortOrder: len(a.target.fields)})
	if err != nil {
		return nil, err
	}
	a.target.fields[lower(name)] = d
	return d, a.created(ctx, "field", d.ID)
}

// option finds or creates the option label of a DROPDOWN field.
func (a *applier) option(ctx context.Context, d *customfield.Definition, label string) (uuid.UUID, error) {
	for _, o := range d.Options {
		if lower(o.Label) == lower(label) {
			return o.ID, nil
		}
	}
	o, err := customfield.CreateOption(ctx, a.tx, a.target.projectID, d.ID, label, len(d.Options))
	if err != nil {
		return uuid.Nil, err
	}
	d.Options = append(d.Options, *o)
	return o.ID, nil
}

// setup creates a taskweave export's labels, versions, sprints and custom fields.
func (a *applier) setup(ctx context.Context, s *Setup) error {
	for _, l := range s.Labels {
		color := l.Color
		if color == "" {
			color = "#6c8fef"
		}
		if _, err := a.named(ctx, "label", l.Name, map[string]any{"color": color}); err != nil {
			return err
		}
	}
	for _, v := range s.Versions {
		if _, err := a.named(ctx, "version", v.Name, nil); err != nil {
			return err
		}
	}
	for _, sp := range s.Sprints {
		// Imported sprints are never ACTIVE: the project may have an active one already.
		status := sp.Status
		if status == "ACTIVE" {
			status = "PLANNED"
		}
		if _, err := a.named(ctx, "sprint", sp.Name, map[string]any{"goal": sp.Goal, "status": status,
			"start_date": sp.StartDate, "end_date": sp.EndDate}); err != nil {
			return err
		}
	}
	for _, f := range s.CustomFields {
		d, err := a.field(ctx, f.Name, f.Type, false)
		if err != nil {
			return err
		}
		if d.Type == customfield.TypeDropdown {
			for _, o := range f.Options {
				if _, err := a.option(ctx, d, o); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// batch creates the issues of the next n items; the last batch links the parents.
func (a *applier) batch(ctx context.Context, n int) (Batch, error) {
	var rows []struct {
		Seq  int             `bun:"seq"`
		Data json.RawMessage `bun:"data"`
	}
	if err := a.tx.NewSelect().Table("task_items").Column("seq", "data").Where("task_id = ? AND seq >= ?", a.task.ID, a.task.Cursor).
		OrderExpr("seq").Limit(int64(n)).Scan(ctx, &rows); err != nil {
		return Batch{}, fmt.Errorf("read import items: %w", err)
	}
	var out Batch
	for _, row := range rows {
		var r Record
		if err := json.Unmarshal(row.Data, &r); err != nil {
			return Batch{}, fmt.Errorf("import item %d: %w", row.Seq, err)
		}
		if strings.TrimSpace(r.Title) == "" {
			continue // reported when planned
		}
		errs, err := a.create(ctx, &r)
		if err != nil {
			return Batch{}, fmt.Errorf("import %s: %w", r.Item, err)
		}
		out.Errors = append(out.Errors, errs...)
	}
	out.Consumed = len(rows)
	if a.task.Cursor+len(rows) >= a.task.Total {
		_, err := a.tx.NewRaw(`UPDATE issues AS i SET parent_id = p.issue_id
			FROM issue_imports AS ii JOIN issue_imports AS p ON p.task_id = ii.task_id AND p.source_key = ii.parent_key
			WHERE ii.task_id = ? AND ii.issue_id = i.id AND ii.parent_key IS NOT NULL`, a.task.ID).Exec(ctx)
		if err != nil {
			return Batch{}, fmt.Errorf("link imported parents: %w", err)
		}
		out.Done = true
	}
	return out, nil
}

// insertImported is issue.insertIssue with the imported timestamps.
const insertImported = `WITH seq AS (
	UPDATE projects SET issue_seq = issue_seq + 1 WHERE id = ? RETURNING issue_seq, key
)
INSERT INTO issues (id, project_id, number, key, title, description, type, priority, story_points,
	status_id, assignee_id, reporter_id, due_date, sprint_id, created_at, updated_at)
SELECT ?, ?, seq.issue_seq, seq.key || '-' || seq.issue_seq, ?, ?, ?, ?, ?, ?, ?, ?, ?::date, ?,
	coalesce(?, clock_timestamp()), coalesce(?, ?, clock_timestamp())
FROM seq RETURNING key, created_at`

// create creates one issue with everything it holds; the errors are what of it could
// not be imported.
func (a *applier) create(ctx context.Context, r *Record) ([]store.TaskError, error) {
	var errs []store.TaskError
	itemErr := func(code, format string, args ...any) {
		errs = append(errs, store.TaskError{Item: r.Item, Code: code, Message: fmt.Sprintf(format, args...)})
	}
	status, _ := a.target.status(r)
	var assignee *uuid.UUID
	if id, ok := a.target.user(r.Assignee); ok {
		assignee = &id
	}
	reporter := a.actor
	if id, ok := a.target.user(r.Reporter); ok {
		reporter = id
	}
	var sprint *uuid.UUID
	if r.Sprint != "" {
		id, err := a.named(ctx, "sprint", r.Sprint, nil)
		if err != nil {
			return nil, err
		}
		sprint = &id
	}
	typ, prio := r.Type, r.Priority
	if typ == "" {
		typ = "TASK"
	}
	if prio == "" {
		prio = "MEDIUM"
	}
	sp := r.StoryPoints
	if sp != nil && (*sp < 0 || *sp > 1000) {
		itemErr("STORY_POINTS_INVALID", "story points %d are outside 0-1000; left out", *sp)
		sp = nil
	}
	id := uuid.New()
	var key string
	var at time.Time
	if err := a.tx.NewRaw(insertImported, a.target.projectID, id, a.target.projectID, r.Title, r.Description, typ, prio, sp,
		status.ID, assignee, reporter, r.DueDate, sprint, r.CreatedAt, r.UpdatedAt, r.CreatedAt).Scan(ctx, &key, &at); err != nil {
		return nil, fmt.Errorf("insert issue: %w", err)
	}
	subject := issue.Subject{ProjectID: a.target.projectID, ProjectKey: a.key, IssueID: id, IssueKey: key, Title: r.Title}
	if err := a.created(ctx, "issue", id); err != nil {
		return nil, err
	}
	var parent *string
	if r.Parent != "" {
		parent = &r.Parent
	}
	source := r.SourceKey
	if source == "" {
		source = r.Item
	}
	if _, err := a.tx.NewRaw("INSERT INTO issue_imports (issue_id, task_id, format, source_key, parent_key) VALUES (?, ?, ?, ?, ?)",
		id, a.task.ID, a.params.Format, source, parent).Exec(ctx); err != nil {
		return nil, fmt.Errorf("record import: %w", err)
	}
	for _, l := range r.Labels {
		lid, err := a.named(ctx, "label", l, nil)
		if err != nil {
			return nil, err
		}
		if _, err := a.tx.NewRaw("INSERT INTO issue_labels (issue_id, label_id) VALUES (?, ?) ON CONFLICT DO NOTHING", id, lid).Exec(ctx); err != nil {
			return nil, fmt.Errorf("label issue: %w", err)
		}
	}
	for _, vs := range []struct {
		kind  string
		names []string
	}{{"FIX", r.FixVersions}, {"AFFECTS", r.Affects}} {
		for _, v := range vs.names {
			vid, err := a.named(ctx, "version", v, nil)
			if err != nil {
				return nil, err
			}
			if _, err := a.tx.NewRaw("INSERT INTO issue_versions (issue_id, version_id, type) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
				id, vid, vs.kind).Exec(ctx); err != nil {
				return nil, fmt.Errorf("version issue: %w", err)
			}
		}
	}
	if err := a.values(ctx, id, r, itemErr); err != nil {
		return nil, err
	}
	// The issue's Created event goes before its comments', as through the API.
	if a.bus != nil {
		if err := a.bus.Emit(ctx, a.tx, issue.Created{Subject: subject, By: a.by, Type: typ, Priority: prio,
			StatusID: status.ID, StatusName: status.Name, AssigneeID: assignee, ReporterID: reporter, At: at}); err != nil {
			return nil, err
		}
	}
	var comments []importedComment
	for _, c := range r.Comments {
		author := a.actor
		if uid, ok := a.target.user(c.Author); ok {
			author = uid
		}
		body := c.Body
		if a.params.Format != FormatTaskweave {
			// Plain text from other trackers: shown as written, line breaks kept.
			body = strings.ReplaceAll(html.EscapeString(body), "\n", "<br>")
		}
		body = comment.Sanitize(body)
		if strings.TrimSpace(body) == "" {
			continue
		}
		var made struct {
			ID uuid.UUID `bun:"id"`
			At time.Time `bun:"created_at"`
		}
		if err := a.tx.NewRaw(`INSERT INTO comments (issue_id, author_id, body, created_at, updated_at)
			VALUES (?, ?, ?, coalesce(?, clock_timestamp()), coalesce(?, clock_timestamp())) RETURNING id, created_at`,
			id, author, body, c.CreatedAt, c.CreatedAt).Scan(ctx, &made); err != nil {
			return nil, fmt.Errorf("insert comment: %w", err)
		}
		comments = append(comments, importedComment{id: made.ID, author: author, body: body, at: made.At})
	}
	if a.bus != nil {
		for _, c := range comments {
			if err := comment.Imported(ctx, a.tx, a.bus, subject, c.author, a.by, c.id, c.body, c.at); err != nil {
				return nil, err
			}
		}
	}
	for _, f := range r.Files {
		if err := a.attach(ctx, id, f); err != nil {
			itemErr("ATTACHMENT_MISSING", "attachment %s: %v", f.Path, err)
		}
	}
	return errs, nil
}

// importedComment is a comment create inserted, whose events follow the issue's.
type importedComment struct {
	id     uuid.UUID
	author uuid.UUID
	body   string
	at     time.Time
}

// values writes the record's custom field values, creating fields and options missing.
func (a *applier) values(ctx context.Context, issueID uuid.UUID, r *Record, itemErr func(string, string, ...any)) error {
	var defs []customfield.Definition
	var inputs []customfield.Input
	for name, v := range r.Fields {
		if strings.TrimSpace(v) == "" {
			continue
		}
		d, err := a.field(ctx, name, "", false)
		if err != nil {
			return err
		}
		if d.Type == customfield.TypeDropdown {
			oid, err := a.option(ctx, d, v)
			if err != nil {
				return err
			}
			v = oid.String()
		}
		if _, err := d.Parse(v); err != nil {
			itemErr("CUSTOM_FIELD_INVALID", "%q is not a %s value of field %q; left out", r.Fields[name], d.Type, d.Name)
			continue
		}
		value := v
		defs = append(defs, *d)
		inputs = append(inputs, customfield.Input{FieldID: d.ID, Value: &value})
	}
	if len(inputs) == 0 {
		return nil
	}
	_, changes, err := customfield.Plan(customfield.Blank(defs), inputs, false)
	if err != nil {
		return err
	}
	return customfield.Write(ctx, a.tx, issueID, changes)
}

// attach copies one attachment of the import file into storage and records it.
func (a *applier) attach(ctx context.Context, issueID uuid.UUID, f RecordFile) error {
	if a.files == nil {
		return errNoStorage
	}
	if a.zip == nil {
		zr, err := zip.NewReader(readerAt{ctx, a.input}, a.input.size)
		if err != nil {
			return err
		}
		a.zip = zr
	}
	zf, err := a.zip.Open(f.Path)
	if err != nil {
		return err
	}
	defer zf.Close()
	name := attachment.CleanFilename(f.Filename)
	stored := attachment.NewStoredName(name)
	size, err := a.files.Put(ctx, stored, io.Reader(zf))
	if err != nil {
		return err
	}
	ct := f.ContentType
	if ct == "" {
		ct = "application/octet-stream"
	}
	if _, err := a.tx.NewRaw(`INSERT INTO attachments (issue_id, uploader_id, filename, stored_name, content_type, size, storage)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, issueID, a.actor, name, stored, ct, size, a.files.Location()).Exec(ctx); err != nil {
		_ = a.files.Remove(context.WithoutCancel(ctx), stored)
		return fmt.Errorf("record attachment: %w", err)
	}
	return nil
}
