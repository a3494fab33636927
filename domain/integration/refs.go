package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/weblink"
	"github.com/taskweave/taskweave/store"
)

// Reference types (IssueRef in api/openapi/55-integrations.yaml). Push events give
// COMMIT; pull and merge requests PR.
const (
	RefCommit = "COMMIT"
	RefPR     = "PR"
	RefBranch = "BRANCH"
)

// Column limits of issue_refs and the commit title rule
// (docs/api-conventions.md#incoming-provider-events).
const (
	maxExternalID  = 255
	maxURL         = 2048
	maxTitle       = 1024
	commitTitleLen = 100
)

// keyPattern is the issue key pattern of
// docs/api-conventions.md#incoming-provider-events; a match counts only when it starts
// with the event's project key and a hyphen.
var keyPattern = regexp.MustCompile(`\b[A-Z][A-Z0-9]+-\d+\b`)

// candidate is one reference an event makes to an issue key, before the key is checked
// against the project's issues.
type candidate struct {
	IssueKey   string
	RefType    string
	ExternalID string
	URL        string
	Title      string
}

type commitPayload struct {
	ID      string `json:"id"`
	Message string `json:"message"`
	URL     string `json:"url"`
}

type githubPayload struct {
	Commits     []commitPayload `json:"commits"`
	Number      json.Number     `json:"number"`
	PullRequest *struct {
		Number  json.Number `json:"number"`
		Title   string      `json:"title"`
		Body    *string     `json:"body"`
		HTMLURL string      `json:"html_url"`
	} `json:"pull_request"`
}

type gitlabPayload struct {
	ObjectKind       string          `json:"object_kind"`
	Commits          []commitPayload `json:"commits"`
	ObjectAttributes struct {
		IID         json.Number `json:"iid"`
		Title       string      `json:"title"`
		Description *string     `json:"description"`
		URL         string      `json:"url"`
	} `json:"object_attributes"`
}

// extract returns the references an event's payload makes to issues of projectKey, each
// (issue, type, external id) once. GitHub's event comes from its X-GitHub-Event header,
// else from the payload (a pull_request member means a pull request, anything else a
// push); GitLab's from object_kind. Other events give nothing.
func extract(p Provider, eventName string, payload []byte, projectKey string) ([]candidate, error) {
	var out []candidate
	switch p {
	case GitHub:
		var g githubPayload
		if err := decodeLenient(payload, &g); err != nil {
			return nil, err
		}
		if eventName == "" {
			eventName = "push"
			if g.PullRequest != nil {
				eventName = "pull_request"
			}
		}
		switch eventName {
		case "push":
			out = commitRefs(g.Commits, projectKey)
		case "pull_request":
			if g.PullRequest == nil {
				return nil, nil
			}
			number := g.Number
			if number == "" {
				number = g.PullRequest.Number
			}
			out = requestRefs(projectKey, number.String(), g.PullRequest.Title, g.PullRequest.Body, g.PullRequest.HTMLURL)
		}
	case GitLab:
		var g gitlabPayload
		if err := decodeLenient(payload, &g); err != nil {
			return nil, err
		}
		switch g.ObjectKind {
		case "push":
			out = commitRefs(g.Commits, projectKey)
		case "merge_request":
			a := g.ObjectAttributes
			out = requestRefs(projectKey, a.IID.String(), a.Title, a.Description, a.URL)
		}
	}
	return dedupe(out), nil
}

// decodeLenient decodes what it can: a member of an unexpected type is skipped (the
// rest still counts), only malformed JSON is an error.
func decodeLenient(payload []byte, dst any) error {
	err := json.Unmarshal(payload, dst)
	var te *json.UnmarshalTypeError
	if err != nil && !errors.As(err, &te) {
		return fmt.Errorf("decode payload: %w", err)
	}
	return nil
}

func commitRefs(commits []commitPayload, projectKey string) []candidate {
	var out []candidate
	for _, c := range commits {
		for _, k := range issueKeys(c.Message, projectKey) {
			out = append(out, candidate{IssueKey: k, RefType: RefCommit, ExternalID: c.ID, URL: c.URL,
				Title: truncate(c.Message, commitTitleLen)})
		}
	}
	return out
}

// requestRefs finds keys in a pull or merge request's title and description.
func requestRefs(projectKey, number, title string, body *string, url string) []candidate {
	text := title
	if body != nil {
		text += "\n" + *body
	}
	var out []candidate
	for _, k := range issueKeys(text, projectKey) {
		out = append(out, candidate{IssueKey: k, RefType: RefPR, ExternalID: number, URL: url, Title: truncate(title, maxTitle)})
	}
	return out
}

// issueKeys returns the keys in text that belong to projectKey.
func issueKeys(text, projectKey string) []string {
	var out []string
	prefix := projectKey + "-"
	for _, k := range keyPattern.FindAllString(text, -1) {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	return out
}

// dedupe keeps the first of each (issue, type, external id) and drops references that
// cannot be stored: no external id, an id or address over the column limits, or an
// address that is no http(s) URL (a javascript: one would run in a reader's browser).
func dedupe(in []candidate) []candidate {
	seen := map[[3]string]bool{}
	out := make([]candidate, 0, len(in))
	for _, c := range in {
		c.ExternalID, c.URL, c.Title = clean(c.ExternalID, 0), clean(c.URL, 0), clean(c.Title, 0)
		if c.ExternalID == "" || utf8.RuneCountInString(c.ExternalID) > maxExternalID || utf8.RuneCountInString(c.URL) > maxURL ||
			!weblink.Valid(c.URL) {
			continue
		}
		k := [3]string{c.IssueKey, c.RefType, c.ExternalID}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, c)
	}
	return out
}

// clean makes provider text storable: valid UTF-8, no NUL (Postgres text cannot hold
// it), at most max characters (0: no limit).
func clean(s string, max int) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
	if max > 0 {
		s = truncate(s, max)
	}
	return s
}

// truncate keeps the first n characters of s.
func truncate(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

// Process parses one stored incoming event and records its references on existing
// issues of the event's project, all in one statement, then marks the event processed;
// it returns the number of new references. A duplicate reference is ignored, so running
// an event twice (a retried job, a redelivered payload) adds nothing. An event already
// processed or gone (its project was deleted) is a no-op.
func Process(ctx context.Context, db bun.IDB, eventID uuid.UUID) (int, error) {
	var added int
	err := store.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		var ev struct {
			ProjectID   uuid.UUID  `bun:"project_id"`
			ProjectKey  string     `bun:"project_key"`
			Provider    string     `bun:"provider"`
			EventName   string     `bun:"event_name"`
			Payload     []byte     `bun:"payload"`
			ProcessedAt *time.Time `bun:"processed_at"`
		}
		err := tx.NewRaw(`SELECT e.project_id, p.key AS project_key, e.provider, e.event_name, e.payload, e.processed_at
			FROM incoming_events AS e JOIN projects AS p ON p.id = e.project_id
			WHERE e.id = ? FOR UPDATE OF e`, eventID).Scan(ctx, &ev)
		if err != nil {
			if store.IsNotFound(err) {
				return nil
			}
			return err
		}
		if ev.ProcessedAt != nil {
			return nil
		}
		refs, err := extract(Provider(ev.Provider), ev.EventName, ev.Payload, ev.ProjectKey)
		if err != nil {
			// The edge stored only valid JSON objects; should one still not decode, it is
			// marked processed rather than retried forever.
			refs = nil
		}
		if len(refs) > 0 {
			n := len(refs)
			keys, types, ids, urls, titles := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
			for i, r := range refs {
				keys[i], types[i], ids[i], urls[i], titles[i] = r.IssueKey, r.RefType, r.ExternalID, r.URL, r.Title
			}
			// WITH ORDINALITY keeps the payload's order, so created_at (clock_timestamp per
			// row) lists the references in the order the provider sent them.
			res, err := tx.NewRaw(`INSERT INTO issue_refs (issue_id, provider, ref_type, external_id, url, title)
				SELECT i.id, ?, c.ref_type, c.external_id, c.url, NULLIF(c.title, '')
				FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[]) WITH ORDINALITY
					AS c(issue_key, ref_type, external_id, url, title, ord)
				JOIN issues AS i ON i.project_id = ? AND i.key = c.issue_key
				ORDER BY c.ord
				ON CONFLICT DO NOTHING`,
				ev.Provider, pgdialect.Array(keys), pgdialect.Array(types), pgdialect.Array(ids), pgdialect.Array(urls),
				pgdialect.Array(titles), ev.ProjectID).Exec(ctx)
			if err != nil {
				return fmt.Errorf("insert refs: %w", err)
			}
			n64, _ := res.RowsAffected()
			added = int(n64)
		}
		_, err = tx.NewUpdate().Table("incoming_events").Set("processed_at = now()").Where("id = ?", eventID).Exec(ctx)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("process incoming event %s: %w", eventID, err)
	}
	return added, nil
}

// IssueRefs lists the references of one issue of the project, oldest first; an issue
// the project does not have is issue.ErrNotFound.
func IssueRefs(ctx context.Context, db bun.IDB, projectID uuid.UUID, ref issue.Ref) ([]store.IssueRef, error) {
	q := db.NewSelect().Table("issues").Column("id").Where("project_id = ?", projectID)
	if ref.Key != "" {
		q = q.Where("key = ?", ref.Key)
	} else {
		q = q.Where("id = ?", ref.ID)
	}
	var id uuid.UUID
	if err := q.Scan(ctx, &id); err != nil {
		if store.IsNotFound(err) {
			return nil, issue.ErrNotFound
		}
		return nil, fmt.Errorf("look up issue: %w", err)
	}
	return Refs(ctx, db, id)
}

// Refs lists an issue's references, oldest first.
func Refs(ctx context.Context, db bun.IDB, issueID uuid.UUID) ([]store.IssueRef, error) {
	out := []store.IssueRef{}
	if err := db.NewSelect().Model(&out).Where("issue_id = ?", issueID).Order("created_at", "id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("list issue refs: %w", err)
	}
	return out, nil
}

// DeleteProcessed removes processed incoming payloads older than retention and returns
// how many went; unprocessed ones stay until their job has run.
func DeleteProcessed(ctx context.Context, db bun.IDB, retention time.Duration) (int, error) {
	res, err := db.NewDelete().Table("incoming_events").
		Where("processed_at IS NOT NULL AND processed_at < now() - make_interval(secs => ?)", retention.Seconds()).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("delete processed incoming events: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
