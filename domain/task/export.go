package task

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/attachment"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/store"
)

// Export formats.
const (
	FormatZip = "zip"
	FormatCSV = "csv"
)

// ExportParams is an export task's request.
type ExportParams struct {
	Format string `json:"format"`
}

// QueueExport queues an export of project p in format by userID on tx.
func QueueExport(ctx context.Context, tx bun.Tx, bus *event.Bus, p *store.Project, userID uuid.UUID, format string) (*store.Task, error) {
	return Create(ctx, tx, bus, NewTask{Kind: KindExport, CreatedBy: userID, Project: p, Params: ExportParams{Format: format}})
}

// exportPage is how many issues one statement of the export reads.
const exportPage = 500

// Export writes a project's export as the task's result: a zip of project.json,
// issues.ndjson, attachments/ and manifest.json, or the issues alone as CSV. It is one
// batch: the result is written in chunks on the batch's transaction, so a worker that
// dies mid-export leaves nothing and the next attempt starts afresh.
type Export struct {
	// Attachments is where attachment files are read; nil leaves the files out (each
	// one reported as an item error).
	Attachments *attachment.Stores
}

// Batch implements Handler.
func (h *Export) Batch(ctx context.Context, tx bun.Tx, t *store.Task, _ int) (Batch, error) {
	var params ExportParams
	if err := json.Unmarshal(t.Params, &params); err != nil {
		return Batch{}, fmt.Errorf("export params: %w", err)
	}
	if t.ProjectID == nil {
		return Batch{}, Fail("", "PROJECT_NOT_FOUND", "the task has no project")
	}
	if err := tx.NewSelect().Table("issues").ColumnExpr("count(*)").Where("project_id = ?", *t.ProjectID).Scan(ctx, &t.Total); err != nil {
		return Batch{}, fmt.Errorf("count issues: %w", err)
	}
	w, err := newFileWriter(ctx, tx, t.ID, slotResult)
	if err != nil {
		return Batch{}, err
	}
	stamp := time.Now().UTC().Format("20060102-150405")
	name := deref(t.ProjectKey) + "-export-" + stamp
	var out Batch
	switch params.Format {
	case FormatCSV:
		name, t.ResultType = name+".csv", ptrTo("text/csv; charset=utf-8")
		err = writeCSV(ctx, tx, t, w)
	default:
		name, t.ResultType = name+".zip", ptrTo("application/zip")
		out.Errors, err = h.writeZip(ctx, tx, t, w)
	}
	if err != nil {
		return Batch{}, err
	}
	if err := w.Close(); err != nil {
		return Batch{}, err
	}
	t.ResultName, t.ResultKey = &name, ptrTo(slotResult)
	out.Consumed, out.Done = t.Total, true
	return out, nil
}

func ptrTo(s string) *string { return &s }

// projectJSON is project.json: the project and what its issues refer to, by name and
// e-mail rather than by id, so it imports into another installation. A rule's groups,
// conditions and actions come with it (groups by their ids, which only link them); the
// desk's settings are named one by one, so the address verification's code hash and
// counters never leave the installation.
const projectJSON = `SELECT jsonb_build_object(
	'project', jsonb_build_object('key', p.key, 'name', p.name, 'description', p.description),
	'owner', (SELECT email FROM users WHERE id = p.owner_id),
	'members', (SELECT coalesce(jsonb_agg(jsonb_build_object('email', u.email, 'displayName', u.display_name, 'role', m.role) ORDER BY u.email), '[]')
		FROM project_members m JOIN users u ON u.id = m.user_id WHERE m.project_id = p.id),
	'workflow', jsonb_build_object('statuses', (SELECT coalesce(jsonb_agg(jsonb_build_object('name', s.name, 'category', s.category,
		'color', s.color, 'position', s.position) ORDER BY s.position, s.name), '[]') FROM workflow_statuses s WHERE s.workflow_id = p.workflow_id),
		'transitions', (SELECT coalesce(jsonb_agg(jsonb_build_object('from', fs.name, 'to', ts.name, 'guards', t.guards)
			ORDER BY fs.name NULLS FIRST, ts.name), '[]') FROM workflow_transitions t JOIN workflow_statuses ts ON ts.id = t.to_status_id
			LEFT JOIN workflow_statuses fs ON fs.id = t.from_status_id WHERE t.workflow_id = p.workflow_id)),
	'labels', (SELECT coalesce(jsonb_agg(jsonb_build_object('name', l.name, 'color', l.color) ORDER BY l.name), '[]') FROM labels l WHERE l.project_id = p.id),
	'versions', (SELECT coalesce(jsonb_agg(jsonb_build_object('name', v.name) ORDER BY v.created_at, v.name), '[]') FROM versions v WHERE v.project_id = p.id),
	'sprints', (SELECT coalesce(jsonb_agg(jsonb_build_object('name', s.name, 'goal', s.goal, 'status', s.status, 'startDate', s.start_date,
		'endDate', s.end_date) ORDER BY s.created_at, s.name), '[]') FROM sprints s WHERE s.project_id = p.id),
	'customFields', (SELECT coalesce(jsonb_agg(jsonb_build_object('name', f.name, 'type', f.type, 'required', f.required,
		'options', (SELECT coalesce(jsonb_agg(o.label ORDER BY o.sort_order, o.created_at), '[]') FROM custom_field_options o WHERE o.field_id = f.id))
		ORDER BY f.sort_order, f.created_at), '[]') FROM custom_fields f WHERE f.project_id = p.id),
	'automationRules', (SELECT coalesce(jsonb_agg(to_jsonb(r) - 'project_id' - 'id' || jsonb_build_object(
		'groups', (SELECT coalesce(jsonb_agg(jsonb_build_object('id', g.id, 'parent', g.parent_group_id, 'logic', g.logic, 'ordinal', g.ordinal)
			ORDER BY g.parent_group_id NULLS FIRST, g.ordinal), '[]') FROM automation_groups g WHERE g.rule_id = r.id),
		'conditions', (SELECT coalesce(jsonb_agg(jsonb_build_object('group', c.group_id, 'type', c.type, 'operator', c.operator,
			'params', c.params) ORDER BY c.ordinal), '[]') FROM automation_conditions c WHERE c.rule_id = r.id),
		'actions', (SELECT coalesce(jsonb_agg(jsonb_build_object('position', a.position, 'type', a.type, 'params', a.params)
			ORDER BY a.position, a.ordinal), '[]') FROM automation_actions a WHERE a.rule_id = r.id))
		ORDER BY r.created_at), '[]') FROM automation_rules r WHERE r.project_id = p.id),
	'serviceDesk', (SELECT jsonb_build_object('enabled', d.enabled, 'emailAddress', d.email_address,
		'slaPolicies', (SELECT coalesce(jsonb_agg(jsonb_build_object('name', sp.name, 'priority', sp.priority,
			'responseMinutes', sp.response_minutes, 'resolutionMinutes', sp.resolution_minutes) ORDER BY sp.priority), '[]')
			FROM sla_policies sp WHERE sp.service_desk_id = d.id))
		FROM service_desks d WHERE d.project_id = p.id)
)::text FROM projects p WHERE p.id = ?`

// issueLines reads up to exportPage issues after number as NDJSON lines.
const issueLines = `SELECT i.number, jsonb_build_object(
	'key', i.key, 'title', i.title, 'description', i.description, 'type', i.type, 'priority', i.priority,
	'storyPoints', i.story_points, 'status', s.name, 'statusCategory', s.category, 'assignee', ua.email, 'reporter', ur.email,
	'parent', pi.key, 'dueDate', i.due_date, 'sprint', sp.name, 'createdAt', i.created_at, 'updatedAt', i.updated_at,
	'labels', (SELECT coalesce(jsonb_agg(l.name ORDER BY l.name), '[]') FROM issue_labels il JOIN labels l ON l.id = il.label_id WHERE il.issue_id = i.id),
	'fixVersions', (SELECT coalesce(jsonb_agg(v.name ORDER BY v.name), '[]') FROM issue_versions iv JOIN versions v ON v.id = iv.version_id
		WHERE iv.issue_id = i.id AND iv.type = 'FIX'),
	'affectsVersions', (SELECT coalesce(jsonb_agg(v.name ORDER BY v.name), '[]') FROM issue_versions iv JOIN versions v ON v.id = iv.version_id
		WHERE iv.issue_id = i.id AND iv.type = 'AFFECTS'),
	'customFields', (SELECT coalesce(jsonb_object_agg(f.name, coalesce(to_jsonb(cv.text_value), to_jsonb(cv.number_value),
		to_jsonb(cv.date_value), to_jsonb(cv.bool_value), to_jsonb(o.label))), '{}')
		FROM custom_field_values cv JOIN custom_fields f ON f.id = cv.field_id LEFT JOIN custom_field_options o ON o.id = cv.option_id
		WHERE cv.issue_id = i.id),
	'comments', (SELECT coalesce(jsonb_agg(jsonb_build_object('author', u.email, 'body', c.body, 'createdAt', c.created_at,
		'editedAt', c.edited_at) ORDER BY c.created_at, c.id), '[]') FROM comments c LEFT JOIN users u ON u.id = c.author_id
		WHERE c.issue_id = i.id AND c.deleted_at IS NULL),
	'activity', (SELECT coalesce(jsonb_agg(jsonb_build_object('type', a.type, 'oldValue', a.old_value, 'newValue', a.new_value,
		'actor', u.email, 'createdAt', a.created_at) ORDER BY a.created_at, a.id), '[]') FROM issue_activities a
		LEFT JOIN users u ON u.id = a.actor_id WHERE a.issue_id = i.id),
	'links', (SELECT coalesce(jsonb_agg(jsonb_build_object('provider', r.provider, 'type', r.ref_type, 'externalId', r.external_id,
		'url', r.url, 'title', r.title) ORDER BY r.created_at, r.id), '[]') FROM issue_refs r WHERE r.issue_id = i.id),
	'attachments', (SELECT coalesce(jsonb_agg(jsonb_build_object('filename', at.filename, 'contentType', at.content_type,
		'size', at.size, 'path', 'attachments/' || at.id || '/' || at.filename, 'storedName', at.stored_name, 'storage', at.storage) ORDER BY at.created_at, at.id), '[]')
		FROM attachments at WHERE at.issue_id = i.id)
)::text
FROM issues i JOIN workflow_statuses s ON s.id = i.status_id
LEFT JOIN users ua ON ua.id = i.assignee_id LEFT JOIN users ur ON ur.id = i.reporter_id
LEFT JOIN issues pi ON pi.id = i.parent_id LEFT JOIN sprints sp ON sp.id = i.sprint_id
WHERE i.project_id = ? AND i.number > ? ORDER BY i.number LIMIT ?`

// exportedAttachment is an attachment as issues.ndjson lists it.
type exportedAttachment struct {
	Path       string `json:"path"`
	StoredName string `json:"storedName"`
	// Storage is where the file lives (attachments.storage).
	Storage attachment.Location `json:"storage"`
}

// writeZip writes the zip export; a file missing from storage is an item error.
func (h *Export) writeZip(ctx context.Context, tx bun.Tx, t *store.Task, w io.Writer) ([]store.TaskError, error) {
	zw := zip.NewWriter(w)
	manifest := map[string]any{"format": "taskweave", "version": 1, "project": deref(t.ProjectKey),
		"exportedAt": time.Now().UTC().Format(time.RFC3339)}
	files := map[string]map[string]any{}
	entry := func(name string, store bool) (io.Writer, func(), error) {
		hdr := &zip.FileHeader{Name: name, Method: zip.Deflate, Modified: time.Now()}
		if store {
			hdr.Method = zip.Store
		}
		fw, err := zw.CreateHeader(hdr)
		if err != nil {
			return nil, nil, fmt.Errorf("zip %s: %w", name, err)
		}
		sum, n := sha256.New(), &countWriter{}
		return io.MultiWriter(fw, sum, n), func() {
			files[name] = map[string]any{"sha256": hex.EncodeToString(sum.Sum(nil)), "bytes": n.n}
		}, nil
	}

	var proj string
	if err := tx.NewRaw(projectJSON, *t.ProjectID).Scan(ctx, &proj); err != nil {
		return nil, fmt.Errorf("read project: %w", err)
	}
	fw, done, err := entry("project.json", false)
	if err != nil {
		return nil, err
	}
	if _, err := io.WriteString(fw, proj); err != nil {
		return nil, err
	}
	done()

	var atts []exportedAttachment
	counts := map[string]int{"issues": 0, "comments": 0, "attachments": 0}
	fw, done, err = entry("issues.ndjson", false)
	if err != nil {
		return nil, err
	}
	err = eachIssueLine(ctx, tx, *t.ProjectID, func(line string) error {
		var parsed struct {
			Comments    []json.RawMessage    `json:"comments"`
			Attachments []exportedAttachment `json:"attachments"`
		}
		if err := json.Unmarshal([]byte(line), &parsed); err != nil {
			return fmt.Errorf("issue line: %w", err)
		}
		counts["issues"]++
		counts["comments"] += len(parsed.Comments)
		atts = append(atts, parsed.Attachments...)
		_, err := io.WriteString(fw, line+"\n")
		return err
	})
	if err != nil {
		return nil, err
	}
	done()

	var errs []store.TaskError
	for _, a := range atts {
		if err := h.copyAttachment(ctx, a, entry); err != nil {
			if errors.Is(err, attachment.ErrFileNotFound) || errors.Is(err, errNoStorage) {
				errs = append(errs, store.TaskError{Item: a.Path, Code: "ATTACHMENT_MISSING", Message: err.Error()})
				continue
			}
			return nil, err
		}
		counts["attachments"]++
	}

	manifest["counts"], manifest["files"] = counts, files
	raw, err := json.MarshalIndent(manifest, "", "  ")
	if err != nil {
		return nil, err
	}
	mw, err := zw.Create("manifest.json")
	if err != nil {
		return nil, err
	}
	if _, err := mw.Write(raw); err != nil {
		return nil, err
	}
	return errs, zw.Close()
}

var errNoStorage = errors.New("export: this worker has no attachment storage")

// copyAttachment streams one attachment's file into the zip (stored, not deflated:
// most attachments are compressed already).
func (h *Export) copyAttachment(ctx context.Context, a exportedAttachment, entry func(string, bool) (io.Writer, func(), error)) error {
	if h.Attachments == nil {
		return errNoStorage
	}
	files, err := h.Attachments.At(a.Storage)
	if err != nil {
		return err
	}
	r, _, err := files.Open(ctx, a.StoredName)
	if err != nil {
		return err
	}
	defer r.Close()
	fw, done, err := entry(a.Path, true)
	if err != nil {
		return err
	}
	if _, err := io.Copy(fw, r); err != nil {
		return fmt.Errorf("copy attachment %s: %w", a.Path, err)
	}
	done()
	return nil
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// csvColumns are the issue list's columns, one row per issue.
var csvColumns = []string{"key", "title", "type", "status", "priority", "assignee", "reporter", "storyPoints",
	"dueDate", "sprint", "labels", "fixVersions", "parent", "createdAt", "updatedAt"}

// writeCSV writes the issues as CSV.
func writeCSV(ctx context.Context, tx bun.Tx, t *store.Task, w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvColumns); err != nil {
		return err
	}
	err := eachIssueLine(ctx, tx, *t.ProjectID, func(line string) error {
		var is struct {
			Key, Title, Type, Status, Priority string
			Assignee, Reporter, DueDate        *string
			Sprint, Parent                     *string
			StoryPoints                        *int
			Labels, FixVersions                []string
			CreatedAt, UpdatedAt               string
		}
		if err := json.Unmarshal([]byte(line), &is); err != nil {
			return fmt.Errorf("issue line: %w", err)
		}
		sp := ""
		if is.StoryPoints != nil {
			sp = strconv.Itoa(*is.StoryPoints)
		}
		return cw.Write([]string{is.Key, is.Title, is.Type, is.Status, is.Priority, deref(is.Assignee), deref(is.Reporter),
			sp, deref(is.DueDate), deref(is.Sprint), strings.Join(is.Labels, ";"), strings.Join(is.FixVersions, ";"),
			deref(is.Parent), is.CreatedAt, is.UpdatedAt})
	})
	if err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// eachIssueLine calls fn with each issue of project projectID as its issues.ndjson line,
// in key order, reading exportPage issues per statement.
func eachIssueLine(ctx context.Context, tx bun.Tx, projectID uuid.UUID, fn func(line string) error) error {
	for after := 0; ; {
		rows, err := tx.QueryContext(ctx, tx.NewRaw(issueLines, projectID, after, exportPage).String())
		if err != nil {
			return fmt.Errorf("read issues: %w", err)
		}
		n := 0
		for rows.Next() {
			var line string
			if err := rows.Scan(&after, &line); err != nil {
				rows.Close()
				return fmt.Errorf("read issue: %w", err)
			}
			if err := fn(line); err != nil {
				rows.Close()
				return err
			}
			n++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read issues: %w", err)
		}
		if n < exportPage {
			return nil
		}
	}
}
