package task

import (
	"archive/zip"
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/taskweave/taskweave/store"
)

// maxLine is the longest line of an issues.ndjson an import reads (one issue with all
// its comments and activity).
const maxLine = 64 << 20

// exportedIssue is one line of issues.ndjson, as Export writes it.
type exportedIssue struct {
	Key             string                     `json:"key"`
	Title           string                     `json:"title"`
	Description     *string                    `json:"description"`
	Type            string                     `json:"type"`
	Priority        string                     `json:"priority"`
	StoryPoints     *int                       `json:"storyPoints"`
	Status          string                     `json:"status"`
	StatusCategory  string                     `json:"statusCategory"`
	Assignee        *string                    `json:"assignee"`
	Reporter        *string                    `json:"reporter"`
	Parent          *string                    `json:"parent"`
	DueDate         *string                    `json:"dueDate"`
	Sprint          *string                    `json:"sprint"`
	CreatedAt       *time.Time                 `json:"createdAt"`
	UpdatedAt       *time.Time                 `json:"updatedAt"`
	Labels          []string                   `json:"labels"`
	FixVersions     []string                   `json:"fixVersions"`
	AffectsVersions []string                   `json:"affectsVersions"`
	CustomFields    map[string]json.RawMessage `json:"customFields"`
	Comments        []struct {
		Author    *string    `json:"author"`
		Body      string     `json:"body"`
		CreatedAt *time.Time `json:"createdAt"`
	} `json:"comments"`
	Attachments []struct {
		Filename    string `json:"filename"`
		ContentType string `json:"contentType"`
		Path        string `json:"path"`
	} `json:"attachments"`
}

// parseTaskweave reads a Taskweave export (the zip of Export).
func parseTaskweave(r io.ReaderAt, size int64) (*parsed, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fileFail("", "the file is not a Taskweave export (a zip): %v", err)
	}
	out := &parsed{setup: &Setup{}}
	pf, err := zr.Open("project.json")
	if err != nil {
		return nil, fileFail("project.json", "the export has no project.json")
	}
	err = json.NewDecoder(pf).Decode(out.setup)
	pf.Close()
	if err != nil {
		return nil, fileFail("project.json", "project.json is not valid: %v", err)
	}
	f, err := zr.Open("issues.ndjson")
	if err != nil {
		return nil, fileFail("issues.ndjson", "the export has no issues.ndjson")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), maxLine)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var e exportedIssue
		item := "line " + strconv.Itoa(line)
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fileFail("issues.ndjson "+item, "not a valid issue: %v", err)
		}
		rec := Record{Item: item, SourceKey: e.Key, Title: e.Title, Description: e.Description, Type: e.Type,
			Priority: e.Priority, Status: e.Status, Category: e.StatusCategory, Assignee: deref(e.Assignee),
			Reporter: deref(e.Reporter), Labels: e.Labels, FixVersions: e.FixVersions, Affects: e.AffectsVersions,
			Sprint: deref(e.Sprint), StoryPoints: e.StoryPoints, DueDate: e.DueDate, Parent: deref(e.Parent),
			CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt, Fields: map[string]string{}}
		for name, raw := range e.CustomFields {
			var s string
			if json.Unmarshal(raw, &s) != nil {
				s = string(raw) // a number or a boolean, as written
			}
			rec.Fields[name] = s
		}
		for _, c := range e.Comments {
			rec.Comments = append(rec.Comments, RecordComment{Author: deref(c.Author), Body: c.Body, CreatedAt: c.CreatedAt})
		}
		for _, a := range e.Attachments {
			rec.Files = append(rec.Files, RecordFile{Path: a.Path, Filename: a.Filename, ContentType: a.ContentType})
		}
		out.records = append(out.records, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fileFail("issues.ndjson", "cannot read issues.ndjson: %v", err)
	}
	return out, nil
}

// githubIssue is one issue of GitHub's issues API.
type githubIssue struct {
	Number int             `json:"number"`
	Title  string          `json:"title"`
	Body   *string         `json:"body"`
	State  string          `json:"state"`
	Labels json.RawMessage `json:"labels"`
	User   *struct {
		Login string `json:"login"`
	} `json:"user"`
	Assignee *struct {
		Login string `json:"login"`
	} `json:"assignee"`
	Milestone *struct {
		Title string `json:"title"`
	} `json:"milestone"`
	CreatedAt   *time.Time      `json:"created_at"`
	UpdatedAt   *time.Time      `json:"updated_at"`
	Comments    json.RawMessage `json:"comments"`
	PullRequest json.RawMessage `json:"pull_request"`
}

// parseGitHubJSON reads a JSON array of GitHub issues (the issues API's objects), each
// with its comments as an array in `comments` (the API's count is accepted too).
func parseGitHubJSON(r io.Reader) (*parsed, error) {
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('[') {
		return nil, fileFail("", "the file is not a JSON array of GitHub issues")
	}
	out := &parsed{}
	for i := 1; dec.More(); i++ {
		var g githubIssue
		item := fmt.Sprintf("issue %d", i)
		if err := dec.Decode(&g); err != nil {
			return nil, fileFail(item, "not a valid GitHub issue (at byte %d): %v", dec.InputOffset(), err)
		}
		if g.Number > 0 {
			item = fmt.Sprintf("issue %d (#%d)", i, g.Number)
		}
		if len(g.PullRequest) > 0 && string(g.PullRequest) != "null" {
			out.problems = append(out.problems, store.TaskError{Item: item, Code: "PULL_REQUEST_SKIPPED",
				Message: "pull requests are not imported"})
			continue
		}
		rec := Record{Item: item, SourceKey: "#" + strconv.Itoa(g.Number), Title: g.Title, Description: g.Body,
			Type: "TASK", Priority: "MEDIUM", Category: "TODO", CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt}
		if g.State == "closed" {
			rec.Category = "DONE"
		}
		if g.User != nil {
			rec.Reporter = g.User.Login
		}
		if g.Assignee != nil {
			rec.Assignee = g.Assignee.Login
		}
		if g.Milestone != nil && g.Milestone.Title != "" {
			rec.FixVersions = []string{g.Milestone.Title}
		}
		var labels []json.RawMessage
		if len(g.Labels) > 0 {
			if err := json.Unmarshal(g.Labels, &labels); err != nil {
				return nil, fileFail(item, "labels is not an array")
			}
		}
		for _, l := range labels {
			var name string
			if json.Unmarshal(l, &name) != nil {
				var obj struct {
					Name string `json:"name"`
				}
				if err := json.Unmarshal(l, &obj); err != nil {
					return nil, fileFail(item, "a label is neither a name nor an object with one")
				}
				name = obj.Name
			}
			if name == "" {
				continue
			}
			rec.Labels = append(rec.Labels, name)
			if lower(name) == "bug" {
				rec.Type = "BUG"
			}
		}
		if len(g.Comments) > 0 && g.Comments[0] == '[' {
			var cs []struct {
				Body string `json:"body"`
				User *struct {
					Login string `json:"login"`
				} `json:"user"`
				CreatedAt *time.Time `json:"created_at"`
			}
			if err := json.Unmarshal(g.Comments, &cs); err != nil {
				return nil, fileFail(item, "comments is not an array of comments: %v", err)
			}
			for _, c := range cs {
				rc := RecordComment{Body: c.Body, CreatedAt: c.CreatedAt}
				if c.User != nil {
					rc.Author = c.User.Login
				}
				rec.Comments = append(rec.Comments, rc)
			}
		}
		out.records = append(out.records, rec)
	}
	if _, err := dec.Token(); err != nil {
		return nil, fileFail("", "the JSON array is not closed: %v", err)
	}
	return out, nil
}

// jiraDates are the date formats of Jira's CSV export (the user's format setting picks
// one).
var jiraDates = []string{"02/Jan/06 3:04 PM", "02/Jan/06 15:04", "02/Jan/2006 3:04 PM", "02/Jan/2006 15:04",
	"2006-01-02 15:04", "2006-01-02 15:04:05", time.RFC3339, "2006-01-02T15:04:05.000-0700", "02/01/2006 15:04", "2006-01-02"}

func jiraDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, f := range jiraDates {
		if t, err := time.Parse(f, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

var jiraTypes = map[string]string{"epic": "EPIC", "story": "STORY", "bug": "BUG", "sub-task": "SUBTASK", "subtask": "SUBTASK"}

var jiraPriorities = map[string]string{"highest": "CRITICAL", "blocker": "CRITICAL", "critical": "CRITICAL", "high": "HIGH",
	"major": "HIGH", "medium": "MEDIUM", "low": "LOW", "lowest": "LOW", "minor": "LOW", "trivial": "LOW"}

// jiraCategories are the categories of Jira's usual status names.
var jiraCategories = map[string]string{"to do": "TODO", "open": "TODO", "backlog": "TODO", "selected for development": "TODO",
	"reopened": "TODO", "in progress": "IN_PROGRESS", "in review": "IN_PROGRESS", "review": "IN_PROGRESS",
	"done": "DONE", "closed": "DONE", "resolved": "DONE"}

// parseJiraCSV reads Jira's "Export issues → CSV (all fields)": repeated columns
// (Labels, Comment, Sprint, Attachment, Fix Version/s, custom fields) each hold one
// value. A malformed file fails with the row and column of the fault.
func parseJiraCSV(r io.Reader) (*parsed, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return nil, csvFail(err, "the file has no header row")
	}
	cols := map[string][]int{}
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		cols[h] = append(cols[h], i)
	}
	if len(cols["Summary"]) == 0 {
		return nil, fileFail("row 1", "the header has no Summary column: not a Jira CSV export")
	}
	out := &parsed{}
	idToKey := map[string]string{}
	for {
		row, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvFail(err, "")
		}
		line, _ := cr.FieldPos(0)
		item := "row " + strconv.Itoa(line)
		first := func(name string) (string, int) {
			for _, i := range cols[name] {
				if i < len(row) && strings.TrimSpace(row[i]) != "" {
					return strings.TrimSpace(row[i]), i
				}
			}
			return "", -1
		}
		all := func(name string) []string {
			var vs []string
			for _, i := range cols[name] {
				if i < len(row) && strings.TrimSpace(row[i]) != "" {
					vs = append(vs, strings.TrimSpace(row[i]))
				}
			}
			return vs
		}
		problem := func(col int, code, format string, args ...any) {
			where := item
			if col >= 0 {
				where += fmt.Sprintf(", column %d (%s)", col+1, header[col])
			}
			out.problems = append(out.problems, store.TaskError{Item: where, Code: code, Message: fmt.Sprintf(format, args...)})
		}
		date := func(name string) *time.Time {
			v, col := first(name)
			if v == "" {
				return nil
			}
			t, ok := jiraDate(v)
			if !ok {
				problem(col, "DATE_INVALID", "%q is not a date Jira writes; left out", v)
				return nil
			}
			return &t
		}
		summary, _ := first("Summary")
		rec := Record{Item: item, Title: summary, Type: "TASK", Priority: "MEDIUM", Fields: map[string]string{}}
		rec.SourceKey, _ = first("Issue key")
		rec.SourceID, _ = first("Issue id")
		if rec.SourceKey != "" && rec.SourceID != "" {
			idToKey[rec.SourceID] = rec.SourceKey
		}
		if v, _ := first("Issue Type"); v != "" {
			if t, ok := jiraTypes[lower(v)]; ok {
				rec.Type = t
			}
		}
		if v, _ := first("Priority"); v != "" {
			if p, ok := jiraPriorities[lower(v)]; ok {
				rec.Priority = p
			}
		}
		rec.Status, _ = first("Status")
		rec.Category = jiraCategories[lower(rec.Status)]
		rec.Assignee, _ = first("Assignee")
		rec.Reporter, _ = first("Reporter")
		rec.CreatedAt, rec.UpdatedAt = date("Created"), date("Updated")
		if resolved := date("Resolved"); resolved != nil && rec.Category == "" {
			rec.Category = "DONE"
		}
		if v := rowValue(row, cols["Description"]); v != "" {
			rec.Description = &v
		}
		if v, _ := first("Parent"); v != "" {
			rec.Parent = v
		} else if v, _ := first("Parent id"); v != "" {
			rec.Parent = v
		}
		rec.Labels = all("Labels")
		rec.FixVersions = all("Fix Version/s")
		rec.Affects = all("Affects Version/s")
		if sprints := all("Sprint"); len(sprints) > 0 {
			rec.Sprint = sprints[len(sprints)-1] // the issue's current sprint is the last
		}
		for _, name := range []string{"Story Points", "Custom field (Story Points)", "Custom field (Story point estimate)"} {
			if v, col := first(name); v != "" {
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					problem(col, "STORY_POINTS_INVALID", "%q is not a number; left out", v)
					break
				}
				sp := int(math.Round(f))
				rec.StoryPoints = &sp
				break
			}
		}
		if v, col := first("Due Date"); v != "" {
			if t, ok := jiraDate(v); ok {
				d := t.Format(time.DateOnly)
				rec.DueDate = &d
			} else {
				problem(col, "DATE_INVALID", "%q is not a date Jira writes; left out", v)
			}
		}
		for _, c := range all("Comment") {
			rec.Comments = append(rec.Comments, jiraComment(c))
		}
		for _, a := range all("Attachment") {
			parts := strings.Split(a, ";")
			rec.Skipped = append(rec.Skipped, parts[len(parts)-1])
		}
		for h, idx := range cols {
			name, ok := strings.CutPrefix(h, "Custom field (")
			if !ok || !strings.HasSuffix(name, ")") {
				continue
			}
			name = strings.TrimSuffix(name, ")")
			if lower(name) == "story points" || lower(name) == "story point estimate" {
				continue
			}
			if v := rowValue(row, idx); v != "" {
				rec.Fields[name] = v
			}
		}
		out.records = append(out.records, rec)
	}
	for i := range out.records {
		if key, ok := idToKey[out.records[i].Parent]; ok {
			out.records[i].Parent = key
		}
	}
	return out, nil
}

// rowValue is the first non-blank value of the columns idx, untrimmed inside.
func rowValue(row []string, idx []int) string {
	for _, i := range idx {
		if i < len(row) && strings.TrimSpace(row[i]) != "" {
			return row[i]
		}
	}
	return ""
}

// jiraComment reads Jira's "date;author;body" comment cell; a cell without that
// prefix is all body.
func jiraComment(cell string) RecordComment {
	parts := strings.SplitN(cell, ";", 3)
	if len(parts) == 3 {
		if t, ok := jiraDate(parts[0]); ok {
			return RecordComment{CreatedAt: &t, Author: strings.TrimSpace(parts[1]), Body: parts[2]}
		}
	}
	return RecordComment{Body: cell}
}

// csvFail is the failure of a CSV the reader cannot read, naming its row and column.
func csvFail(err error, fallback string) *Failure {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fileFail(fmt.Sprintf("row %d, column %d", pe.Line, pe.Column), "the CSV is malformed: %v", pe.Err)
	}
	if fallback == "" {
		fallback = err.Error()
	}
	return fileFail("", "%s", fallback)
}
