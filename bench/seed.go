package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/store"
)

// seeded is the bench's project and its owner.
type seeded struct {
	key       string
	projectID uuid.UUID
	userID    uuid.UUID
	email     string
	statusID  uuid.UUID
	token     string
	audit     bool
	// cfQuery is three cf filters over the seeded custom fields (a DROPDOWN option, a
	// ticked CHECKBOX, a NUMBER): one issue in six matches all three.
	cfQuery string
}

// seed registers a user and creates the project through the API, then bulk-inserts n
// issues in SQL: a third of them carry a label, half an assignee, all a description.
func seed(ctx context.Context, db *store.DB, c *client, n int, audit, customFields bool) (*seeded, error) {
	s := &seeded{email: "bench-" + uuid.NewString()[:8] + "@example.com", audit: audit}
	var err error
	s.token, err = c.accessToken(ctx, "/api/v1/auth/register",
		map[string]string{"email": s.email, "displayName": "Bench", "password": "bench password 123"}, http.StatusCreated)
	if err != nil {
		return nil, err
	}

	s.key = "B" + strings.ToUpper(strings.ReplaceAll(uuid.NewString(), "-", "")[:6])
	body, _ := json.Marshal(map[string]string{"key": s.key, "name": "Bench"})
	raw, err := c.do(ctx, http.MethodPost, "/api/v1/projects", s.token, body, http.StatusCreated, true)
	if err != nil {
		return nil, err
	}
	var project struct {
		ID      uuid.UUID `json:"id"`
		OwnerID uuid.UUID `json:"ownerId"`
	}
	if err := json.Unmarshal(raw, &project); err != nil {
		return nil, err
	}
	s.projectID, s.userID = project.ID, project.OwnerID
	for i, color := range []string{"#ff0000", "#00ff00", "#0000ff"} {
		body, _ = json.Marshal(map[string]string{"name": fmt.Sprintf("label-%d", i), "color": color})
		if _, err := c.do(ctx, http.MethodPost, "/api/v1/projects/"+s.key+"/labels", s.token, body, http.StatusCreated, true); err != nil {
			return nil, err
		}
	}

	err = db.Pool.QueryRow(ctx, `SELECT s.id FROM workflow_statuses AS s JOIN projects AS p ON p.workflow_id = s.workflow_id
		WHERE p.id = $1 AND s.category = 'TODO' ORDER BY s.position LIMIT 1`, s.projectID).Scan(&s.statusID)
	if err != nil {
		return nil, fmt.Errorf("default status: %w", err)
	}
	batch := &pgx.Batch{}
	batch.Queue(`INSERT INTO issues (project_id, number, key, title, description, type, priority, story_points, status_id,
			assignee_id, reporter_id, due_date, created_at, updated_at)
		SELECT $1, g, $2 || '-' || g, 'Seeded issue ' || g, 'Seeded description of issue ' || g,
			(ARRAY['EPIC','STORY','BUG','TASK'])[1 + g % 4], (ARRAY['CRITICAL','HIGH','MEDIUM','LOW'])[1 + g % 4],
			CASE WHEN g % 2 = 0 THEN g % 13 END, $3, CASE WHEN g % 2 = 0 THEN $4::uuid END, $4,
			CASE WHEN g % 5 = 0 THEN current_date + (g % 30 - 15) END,
			now() - make_interval(secs => $5 - g), now() - make_interval(secs => $5 - g)
		FROM generate_series(1, $5::int) AS g`, s.projectID, s.key, s.statusID, s.userID, n)
	batch.Queue(`UPDATE projects SET issue_seq = $2 WHERE id = $1`, s.projectID, n)
	batch.Queue(`INSERT INTO issue_labels (issue_id, label_id)
		SELECT i.id, l.id FROM issues AS i JOIN labels AS l ON l.project_id = i.project_id
		WHERE i.project_id = $1 AND i.number % 3 = 0 AND l.name <> 'label-2'`, s.projectID)
	batch.Queue(`UPDATE audit_config SET enabled = $1 WHERE level = 'WRITE'`, audit)
	if err := db.Pool.SendBatch(ctx, batch).Close(); err != nil {
		return nil, fmt.Errorf("bulk insert: %w", err)
	}
	if customFields {
		if err := seedCustomFields(ctx, db, c, s); err != nil {
			return nil, fmt.Errorf("custom fields: %w", err)
		}
	}
	// VACUUM as autovacuum would soon after a bulk load: the visibility map lets the list
	// find a page's keys by index-only scans, as it does on a settled database.
	if _, err := db.Pool.Exec(ctx, `VACUUM ANALYZE issues, issue_labels, labels, projects, workflow_statuses, users,
		custom_fields, custom_field_options, custom_field_values, issue_filter_terms`); err != nil {
		return nil, err
	}
	return s, nil
}

// seedCustomFields creates three custom fields through the API (Severity, a DROPDOWN of
// four options; Blocked, a CHECKBOX; Points, a NUMBER) and gives every seeded issue a
// value of each in SQL, so every list row carries values and cf filters have work.
func seedCustomFields(ctx context.Context, db *store.DB, c *client, s *seeded) error {
	field := func(name, typ string) (string, error) {
		body, _ := json.Marshal(map[string]string{"name": name, "type": typ})
		raw, err := c.do(ctx, http.MethodPost, "/api/v1/projects/"+s.key+"/custom-fields", s.token, body, http.StatusCreated, true)
		if err != nil {
			return "", err
		}
		var f struct {
			ID string `json:"id"`
		}
		return f.ID, json.Unmarshal(raw, &f)
	}
	severity, err := field("Severity", "DROPDOWN")
	if err != nil {
		return err
	}
	var options []string
	for i, label := range []string{"Critical", "Major", "Minor", "Trivial"} {
		body, _ := json.Marshal(map[string]any{"label": label, "sortOrder": i})
		raw, err := c.do(ctx, http.MethodPost, "/api/v1/projects/"+s.key+"/custom-fields/"+severity+"/options", s.token, body,
			http.StatusCreated, true)
		if err != nil {
			return err
		}
		var o struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(raw, &o); err != nil {
			return err
		}
		options = append(options, o.ID)
	}
	blocked, err := field("Blocked", "CHECKBOX")
	if err != nil {
		return err
	}
	points, err := field("Points", "NUMBER")
	if err != nil {
		return err
	}
	// Severity: options round robin (by number % 4); Blocked: ticked for two issues in
	// three; Points: number % 2. Major, ticked and 1 together: the numbers ≡ 1 (mod 4)
	// that are no multiple of 3, one issue in six.
	_, err = db.Pool.Exec(ctx, `INSERT INTO custom_field_values (issue_id, field_id, option_id, bool_value, number_value)
		SELECT i.id, f.id,
			CASE WHEN f.id = $2 THEN ($5::uuid[])[1 + i.number % 4] END,
			CASE WHEN f.id = $3 THEN i.number % 3 <> 0 END,
			CASE WHEN f.id = $4 THEN i.number % 2 END
		FROM issues AS i CROSS JOIN (VALUES ($2::uuid), ($3::uuid), ($4::uuid)) AS f (id)
		WHERE i.project_id = $1`, s.projectID, severity, blocked, points, options)
	if err != nil {
		return err
	}
	cf := func(field, value string) string { return "cf=" + url.QueryEscape(field+":"+value) }
	s.cfQuery = cf(severity, options[1]) + "&" + cf(blocked, "true") + "&" + cf(points, "1")
	return nil
}

// rawInsert is the statement POST /issues runs under the project row's lock: the key
// allocation and the issue row in one round trip.
const rawInsert = `WITH seq AS (
	UPDATE projects SET issue_seq = issue_seq + 1 WHERE id = $1 RETURNING issue_seq
)
INSERT INTO issues (id, project_id, number, key, title, description, type, priority, status_id, reporter_id)
SELECT $2, $1, seq.issue_seq, $3 || '-' || seq.issue_seq, $4, $5, 'TASK', 'HIGH', $6, $7
FROM seq
RETURNING number`

// newRawCreate is the ceiling of issue creation: the rows POST /issues writes (the key
// allocation, the issue and, with audit on, its audit job) in bare pgx transactions with
// prepared statements, no HTTP, no authentication, no reads.
func newRawCreate(ctx context.Context, db *store.DB, s *seeded) (op, error) {
	var inserter *river.Client[pgx.Tx]
	if s.audit {
		var err error
		if inserter, err = river.NewClient(riverpgxv5.New(db.Pool), &river.Config{}); err != nil {
			return nil, err
		}
	}
	return func(ctx context.Context, worker, seq int) error {
		tx, err := db.Pool.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx) //nolint:errcheck // a no-op after commit
		id := uuid.New()
		var number int
		err = tx.QueryRow(ctx, rawInsert, s.projectID, id, s.key, fmt.Sprintf("Raw issue %d-%d", worker, seq),
			"Created by the load generator.", s.statusID, s.userID).Scan(&number)
		if err != nil {
			return err
		}
		if inserter != nil {
			uid, pid := s.userID, s.projectID
			_, err = inserter.InsertTx(ctx, tx, jobs.AuditRecord{ID: uuid.New(), Timestamp: time.Now().UTC(), UserID: &uid,
				UserEmail: s.email, ProjectID: &pid, Action: "ISSUE_CREATED", Level: "WRITE", ResourceType: "ISSUE",
				ResourceID: id.String(), Details: fmt.Sprintf(`{"issueKey":"%s-%d"}`, s.key, number)}, nil)
			if err != nil {
				return err
			}
		}
		return tx.Commit(ctx)
	}, nil
}
