package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api"
	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/domain/attachment"
	"github.com/taskweave/taskweave/store/storetest"
)

// atPart is one part of a multipart body; an empty filename or contentType is not sent.
type atPart struct{ name, filename, contentType, data string }

// atFile is the `file` part.
func atFile(filename, contentType, data string) atPart {
	return atPart{"file", filename, contentType, data}
}

// atBody encodes parts as multipart/form-data (apitest.MultipartBody) and returns the
// body and its Content-Type.
func atBody(t *testing.T, parts ...atPart) ([]byte, string) {
	t.Helper()
	ps := make([]apitest.Part, len(parts))
	for i, p := range parts {
		ps[i] = apitest.Part{Name: p.name, Filename: p.filename, ContentType: p.contentType, Data: p.data}
	}
	return apitest.MultipartBody(t, ps...)
}

// atFixture is an issueFixture with one issue, and the harness's storage directory.
type atFixture struct {
	*apitest.Project
	issueID, issueKey string
	dir               string
}

func atFixtureOn(t *testing.T, h *apitest.Harness) *atFixture {
	t.Helper()
	f := apitest.NewProject(t, h)
	iss := f.Create(t, map[string]any{"title": "With files"})
	return &atFixture{Project: f, issueID: iss["id"].(string), issueKey: iss["key"].(string), dir: h.Settings.AttachmentsDir}
}

// at is the issue's attachments path followed by suffix.
func (f *atFixture) at(suffix string) string {
	return f.Path("/issues/" + f.issueKey + "/attachments" + suffix)
}

func (f *atFixture) upload(t *testing.T, token string, parts ...atPart) *apitest.Response {
	t.Helper()
	body, ct := atBody(t, parts...)
	return f.H.Do("POST", f.at(""), body, token, "Content-Type", ct)
}

// uploaded uploads one file as token and returns the reply.
func (f *atFixture) uploaded(t *testing.T, token, filename, contentType, data string) map[string]any {
	t.Helper()
	r := f.upload(t, token, atFile(filename, contentType, data))
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	return r.JSON(t)
}

// files lists the storage directory.
func (f *atFixture) files(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(f.dir)
	require.NoError(t, err)
	out := []string{}
	for _, e := range entries {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// rows counts the issue's attachment records.
func (f *atFixture) rows() int {
	return f.H.Count("SELECT count(*) FROM attachments WHERE issue_id = $1", f.issueID)
}

func (f *atFixture) storedName(t *testing.T, id any) string {
	t.Helper()
	var name string
	require.NoError(t, f.H.DB.Pool.QueryRow(context.Background(), "SELECT stored_name FROM attachments WHERE id = $1", id).Scan(&name))
	return name
}

var atStoredName = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(\.[a-z0-9]+)?$`)

func TestAttachmentUploadListDownload(t *testing.T) {
	t.Parallel()
	f := atFixtureOn(t, apitest.Shared(t))

	// A field beside the file is read past; the file part keeps its name and type.
	r := f.upload(t, f.Member.Access, atPart{"comment", "", "", "ignored"}, atFile("Report.PDF", "application/pdf", "%PDF-1.7 data"))
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	pdf := r.JSON(t)
	keys := []string{}
	for k := range pdf {
		keys = append(keys, k)
	}
	require.ElementsMatch(t, []string{"id", "issueId", "uploaderId", "filename", "contentType", "size", "createdAt"}, keys,
		"exactly AttachmentResponse's members: no stored name, no path")
	require.Equal(t, f.issueID, pdf["issueId"])
	require.Equal(t, f.Member.ID.String(), pdf["uploaderId"])
	require.Equal(t, "Report.PDF", pdf["filename"])
	require.Equal(t, "application/pdf", pdf["contentType"])
	require.EqualValues(t, 13, pdf["size"])
	require.Regexp(t, `^\d{4}-\d\d-\d\dT.*Z$`, pdf["createdAt"])

	stored := f.storedName(t, pdf["id"])
	require.Regexp(t, atStoredName, stored)
	require.True(t, strings.HasSuffix(stored, ".pdf"), "the extension, lower-cased: %s", stored)
	require.NotContains(t, stored, pdf["id"], "the stored name is not derived from the id")
	raw, err := os.ReadFile(filepath.Join(f.dir, stored))
	require.NoError(t, err)
	require.Equal(t, "%PDF-1.7 data", string(raw))

	// No Content-Type → application/octet-stream; a type is kept in canonical form.
	plain := f.uploaded(t, f.Owner.Access, "notes", "", "plain")
	require.Equal(t, "application/octet-stream", plain["contentType"])
	require.Regexp(t, `^[0-9a-f-]{36}$`, f.storedName(t, plain["id"]), "no extension, none added")
	typed := f.uploaded(t, f.Owner.Access, "backup.tar.gz", "Text/Plain; Charset=UTF-8", "x")
	require.Equal(t, "text/plain; charset=UTF-8", typed["contentType"])
	require.True(t, strings.HasSuffix(f.storedName(t, typed["id"]), ".gz"))
	require.Len(t, f.files(t), 3)

	// Any project role lists (by createdAt) and downloads; the issue may be named by id.
	list := f.H.Do("GET", f.Path("/issues/"+f.issueID+"/attachments"), nil, f.Viewer.Access)
	require.Equal(t, http.StatusOK, list.Status, "%s", list.Body)
	var got []map[string]any
	require.NoError(t, json.Unmarshal(list.Body, &got))
	require.Equal(t, []map[string]any{pdf, plain, typed}, got)

	d := f.H.Do("GET", f.at("/"+pdf["id"].(string)+"/download"), nil, f.Viewer.Access)
	require.Equal(t, http.StatusOK, d.Status, "%s", d.Body)
	require.Equal(t, "%PDF-1.7 data", string(d.Body))
	require.Equal(t, "application/pdf", d.Header.Get("Content-Type"))
	require.Equal(t, "13", d.Header.Get("Content-Length"))
	require.Equal(t, `attachment; filename="Report.PDF"`, d.Header.Get("Content-Disposition"))
	require.Equal(t, "nosniff", d.Header.Get("X-Content-Type-Options"))

	require.Equal(t, []string{"ATTACHMENT_ADDED:∅→Report.PDF", "ATTACHMENT_ADDED:∅→notes", "ATTACHMENT_ADDED:∅→backup.tar.gz"},
		f.Activity(t, f.issueID))
	require.Equal(t, 1, f.H.Count("SELECT count(*) FROM issue_activities WHERE issue_id = $1 AND actor_id = $2 AND type = 'ATTACHMENT_ADDED'",
		f.issueID, f.Member.ID))
}

// TestAttachmentDownloadHeaders: Content-Disposition has an ASCII fallback and, when the
// fallback had to change the name, the exact name in RFC 5987 form; both parse back.
func TestAttachmentDownloadHeaders(t *testing.T) {
	t.Parallel()
	f := atFixtureOn(t, apitest.Shared(t))
	for name, want := range map[string]string{
		"plain-name_1.txt":   `attachment; filename="plain-name_1.txt"`,
		"Übersicht 2026.pdf": `attachment; filename="_bersicht 2026.pdf"; filename*=UTF-8''%C3%9Cbersicht%202026.pdf`,
		`Bericht "Q1".txt`:   `attachment; filename="Bericht _Q1_.txt"; filename*=UTF-8''Bericht%20%22Q1%22.txt`,
		"日本語 (1).txt":        `attachment; filename="___ (1).txt"; filename*=UTF-8''%E6%97%A5%E6%9C%AC%E8%AA%9E%20%281%29.txt`,
	} {
		a := f.uploaded(t, f.Member.Access, name, "text/plain; charset=utf-8", "content of "+name)
		require.Equal(t, name, a["filename"])
		d := f.H.Do("GET", f.at("/"+a["id"].(string)+"/download"), nil, f.Member.Access)
		require.Equal(t, http.StatusOK, d.Status, "%s", d.Body)
		require.Equal(t, "content of "+name, string(d.Body))
		require.Equal(t, "text/plain; charset=utf-8", d.Header.Get("Content-Type"))
		require.Equal(t, want, d.Header.Get("Content-Disposition"), name)
		require.Equal(t, "nosniff", d.Header.Get("X-Content-Type-Options"))
		disp, params, err := mime.ParseMediaType(d.Header.Get("Content-Disposition"))
		require.NoError(t, err)
		require.Equal(t, "attachment", disp)
		require.Equal(t, name, params["filename"], "a client reading filename* gets the exact name")
	}
}

func TestAttachmentUploadRefusals(t *testing.T) {
	t.Parallel()
	f := atFixtureOn(t, apitest.Shared(t))
	multi := func(parts ...atPart) func() ([]byte, string) {
		return func() ([]byte, string) { return atBody(t, parts...) }
	}
	whole, wholeType := atBody(t, atFile("cut.txt", "", strings.Repeat("x", 5000)))
	for _, c := range []struct {
		name         string
		body         func() ([]byte, string)
		code, reason string
		field, fcode string
	}{
		{"JSON", func() ([]byte, string) { return []byte(`{"file":"x"}`), "application/json" }, "BAD_REQUEST", "NOT_MULTIPART", "", ""},
		{"no boundary", func() ([]byte, string) { return []byte("--x--"), "multipart/form-data" }, "BAD_REQUEST", "NOT_MULTIPART", "", ""},
		{"no content type", func() ([]byte, string) { return []byte("data"), "" }, "BAD_REQUEST", "NOT_MULTIPART", "", ""},
		{"no parts", multi(), "BAD_REQUEST", "MISSING_FILE_PART", "", ""},
		{"only a field", multi(atPart{"comment", "", "", "hi"}), "BAD_REQUEST", "MISSING_FILE_PART", "", ""},
		{"file under another name", multi(atPart{"upload", "a.txt", "", "data"}), "BAD_REQUEST", "MISSING_FILE_PART", "", ""},
		{"two files", multi(atFile("a.txt", "", "one"), atFile("b.txt", "", "two")), "BAD_REQUEST", "TOO_MANY_FILES", "", ""},
		{"a second file under another name", multi(atFile("a.txt", "", "one"), atPart{"other", "b.txt", "", "two"}), "BAD_REQUEST", "TOO_MANY_FILES", "", ""},
		{"cut short", func() ([]byte, string) { return whole[:len(whole)-20], wholeType }, "BAD_REQUEST", "MALFORMED_MULTIPART", "", ""},
		{"no boundary inside", func() ([]byte, string) { return []byte("garbage"), "multipart/form-data; boundary=zz" }, "BAD_REQUEST", "MISSING_FILE_PART", "", ""},
		{"no filename", multi(atFile("", "", "data")), "VALIDATION_ERROR", "", "filename", "BLANK"},
		{"blank filename", multi(atFile("   ", "", "data")), "VALIDATION_ERROR", "", "filename", "BLANK"},
		{"only a directory", multi(atFile("../", "", "data")), "VALIDATION_ERROR", "", "filename", "BLANK"},
		{"filename too long", multi(atFile(strings.Repeat("n", 252)+".txt", "", "data")), "VALIDATION_ERROR", "", "filename", "LENGTH"},
		{"invalid type", multi(atFile("a.txt", "not a type", "data")), "VALIDATION_ERROR", "", "contentType", "MEDIA_TYPE"},
		{"type too long", multi(atFile("a.txt", "application/"+strings.Repeat("x", 120), "data")), "VALIDATION_ERROR", "", "contentType", "LENGTH"},
	} {
		body, ct := c.body()
		r := f.H.Do("POST", f.at(""), body, f.Member.Access, "Content-Type", ct)
		require.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", c.name, r.Body)
		m := r.JSON(t)
		require.Equal(t, c.code, m["code"], "%s: %s", c.name, r.Body)
		if c.reason != "" {
			require.Equal(t, c.reason, m["reason"], "%s: %s", c.name, r.Body)
		}
		if c.field != "" {
			errs := m["errors"].([]any)
			require.Len(t, errs, 1, c.name)
			require.Equal(t, c.field, errs[0].(map[string]any)["field"], c.name)
			require.Equal(t, c.fcode, errs[0].(map[string]any)["code"], c.name)
			require.Contains(t, m["details"], c.field, c.name)
		}
		require.Empty(t, f.files(t), "%s: nothing stored", c.name)
	}
	require.Zero(t, f.rows())
	require.Empty(t, f.Activity(t, f.issueID))

	// Who and where: checked before the body is read.
	r := f.upload(t, f.Viewer.Access, atFile("a.txt", "", "x"))
	require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
	apitest.RequireProblem(t, f.upload(t, f.Outsider.Access, atFile("a.txt", "", "x")), http.StatusForbidden, "FORBIDDEN", apitest.Reason("NOT_A_MEMBER"))
	body, ct := atBody(t, atFile("a.txt", "", "x"))
	apitest.RequireProblem(t, f.H.Do("POST", f.Path("/issues/"+f.Key+"-999/attachments"), body, f.Member.Access, "Content-Type", ct),
		http.StatusNotFound, "NOT_FOUND", apitest.Reason("ISSUE_NOT_FOUND"))
	apitest.RequireProblem(t, f.H.Do("POST", f.Path("/issues/not-a-ref!/attachments"), body, f.Member.Access, "Content-Type", ct),
		http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("INVALID_ISSUE_REF"))
	other := atFixtureOn(t, f.H)
	apitest.RequireProblem(t, f.H.Do("POST", f.Path("/issues/"+other.issueID+"/attachments"), body, f.Owner.Access, "Content-Type", ct),
		http.StatusNotFound, "NOT_FOUND", apitest.Reason("ISSUE_NOT_FOUND"))
	require.Empty(t, f.files(t))

	// A path in the client's file name is dropped, whichever separator it uses.
	require.Equal(t, "passwd.txt", f.uploaded(t, f.Member.Access, "../../etc/passwd.txt", "", "x")["filename"])
	require.Equal(t, "a b.doc", f.uploaded(t, f.Member.Access, `C:\Users\Ann\a b.doc`, "", "x")["filename"])
	require.Equal(t, 2, f.rows())
}

// atLimited is a harness on the package database with a small upload limit.
func atLimited(t *testing.T, limit int64, more ...func(*api.Settings)) *apitest.Harness {
	t.Helper()
	return apitest.New(t, apitest.Options{DB: storetest.PackageDB(t), Configure: func(s *api.Settings) {
		s.MaxUploadBytes = limit
		for _, m := range more {
			m(s)
		}
	}})
}

func TestAttachmentUploadOverLimit(t *testing.T) {
	t.Parallel()
	f := atFixtureOn(t, atLimited(t, 1024))

	r := f.upload(t, f.Member.Access, atFile("big.bin", "", strings.Repeat("b", 1025)))
	apitest.RequireProblem(t, r, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", apitest.Reason("FILE_TOO_LARGE"))
	require.Equal(t, "The file is larger than the limit of 1024 bytes.", r.JSON(t)["message"])
	require.Empty(t, f.files(t), "nothing of it stays on disk")
	require.Zero(t, f.rows())
	require.Empty(t, f.Activity(t, f.issueID))

	body, ct := atBody(t, atFile("big.bin", "", strings.Repeat("b", 1025)))
	r = f.H.Do("POST", f.at(""), body, f.Member.Access, "Content-Type", ct, "Accept-Language", "de")
	require.Equal(t, "Die Datei ist größer als das Limit von 1024 Bytes.", r.JSON(t)["message"])

	// A Content-Length clearly over the limit is refused before the body is used.
	body, ct = atBody(t, atFile("huge.bin", "", strings.Repeat("h", 1024+2<<20)))
	r = f.H.Do("POST", f.at(""), body, f.Member.Access, "Content-Type", ct)
	apitest.RequireProblem(t, r, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", apitest.Reason("FILE_TOO_LARGE"))
	require.Empty(t, f.files(t))

	// Exactly the limit is fine.
	ok := f.uploaded(t, f.Member.Access, "fits.bin", "", strings.Repeat("f", 1024))
	require.EqualValues(t, 1024, ok["size"])
	require.Len(t, f.files(t), 1)
}

func TestAttachmentDeleteRules(t *testing.T) {
	t.Parallel()
	f := atFixtureOn(t, apitest.Shared(t))
	member2, admin := f.H.Register("Member2"), f.H.Register("Admin")
	f.AddMember(t, member2, "MEMBER")
	f.AddMember(t, admin, "ADMIN")
	del := func(id any, token string) *apitest.Response {
		return f.H.Do("DELETE", f.at("/"+id.(string)), nil, token)
	}

	own := f.uploaded(t, f.Member.Access, "own.txt", "", "mine")
	ownFile := f.storedName(t, own["id"])
	apitest.RequireProblem(t, del(own["id"], member2.Access), http.StatusForbidden, "FORBIDDEN", apitest.Reason("NOT_UPLOADER"))
	require.Equal(t, http.StatusForbidden, del(own["id"], f.Viewer.Access).Status)
	apitest.RequireProblem(t, del(own["id"], f.Outsider.Access), http.StatusForbidden, "FORBIDDEN", apitest.Reason("NOT_A_MEMBER"))
	require.Equal(t, 1, f.rows())
	require.Equal(t, []string{ownFile}, f.files(t))

	require.Equal(t, http.StatusNoContent, del(own["id"], f.Member.Access).Status, "the uploader may")
	require.Zero(t, f.rows())
	require.Equal(t, []string{ownFile}, f.files(t), "the file stays for the deletion grace (TestDeletedFilesGoAfterTheGrace)")
	require.Equal(t, 1, f.H.Count("SELECT count(*) FROM attachment_orphans WHERE stored_name = $1", ownFile), "queued for the sweep")
	require.Equal(t, []string{"ATTACHMENT_ADDED:∅→own.txt", "ATTACHMENT_REMOVED:own.txt→∅"}, f.Activity(t, f.issueID))
	require.Equal(t, 1, f.H.Count("SELECT count(*) FROM issue_activities WHERE issue_id = $1 AND actor_id = $2 AND type = 'ATTACHMENT_REMOVED'",
		f.issueID, f.Member.ID))
	apitest.RequireProblem(t, del(own["id"], f.Member.Access), http.StatusNotFound, "NOT_FOUND", apitest.Reason("ATTACHMENT_NOT_FOUND"))

	// A project ADMIN (the owner, or by member role) deletes anyone's.
	for _, token := range []string{f.Owner.Access, admin.Access} {
		a := f.uploaded(t, f.Member.Access, "theirs.txt", "", "x")
		require.Equal(t, http.StatusNoContent, del(a["id"], token).Status)
	}
	require.Zero(t, f.rows())

	// An uploader who lost WRITE may no longer delete.
	mine := f.uploaded(t, member2.Access, "mine.txt", "", "x")
	r := f.H.Do("PATCH", f.Path("/members/"+member2.ID.String()), map[string]any{"role": "VIEWER"}, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, http.StatusForbidden, del(mine["id"], member2.Access).Status)
	require.Equal(t, 1, f.rows())

	// Ids: malformed, unknown, of another issue (also for the download).
	apitest.RequireProblem(t, f.H.Do("DELETE", f.at("/nope"), nil, f.Owner.Access), http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))
	apitest.RequireProblem(t, del(uuid.NewString(), f.Owner.Access), http.StatusNotFound, "NOT_FOUND", apitest.Reason("ATTACHMENT_NOT_FOUND"))
	otherIssue := f.Create(t, map[string]any{"title": "Other"})
	body, ct := atBody(t, atFile("elsewhere.txt", "", "x"))
	r = f.H.Do("POST", f.Path("/issues/"+otherIssue["key"].(string)+"/attachments"), body, f.Owner.Access, "Content-Type", ct)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	elsewhere := r.JSON(t)["id"].(string)
	apitest.RequireProblem(t, del(elsewhere, f.Owner.Access), http.StatusNotFound, "NOT_FOUND", apitest.Reason("ATTACHMENT_NOT_FOUND"))
	apitest.RequireProblem(t, f.H.Do("GET", f.at("/"+elsewhere+"/download"), nil, f.Owner.Access), http.StatusNotFound, "NOT_FOUND", apitest.Reason("ATTACHMENT_NOT_FOUND"))
	require.Equal(t, 1, f.H.Count("SELECT count(*) FROM attachments WHERE id = $1", elsewhere))

	// A file already gone counts as removed: the download says so, the delete succeeds.
	gone := f.uploaded(t, f.Owner.Access, "gone.txt", "", "x")
	require.NoError(t, os.Remove(filepath.Join(f.dir, f.storedName(t, gone["id"]))))
	apitest.RequireProblem(t, f.H.Do("GET", f.at("/"+gone["id"].(string)+"/download"), nil, f.Owner.Access), http.StatusNotFound, "NOT_FOUND", apitest.Reason("ATTACHMENT_FILE_MISSING"))
	require.Equal(t, http.StatusNoContent, del(gone["id"], f.Owner.Access).Status)
	require.Zero(t, f.H.Count("SELECT count(*) FROM attachments WHERE id = $1", gone["id"]))
}

// atFlakyStorage is the real local storage whose Put or Remove can be made to fail.
type atFlakyStorage struct {
	attachment.Storage
	failPut, failRemove atomic.Bool
}

var errAtDisk = errors.New("disk on fire at /srv/secret/path")

func (s *atFlakyStorage) Put(ctx context.Context, name string, r io.Reader) (int64, error) {
	if s.failPut.Load() {
		_, _ = io.CopyN(io.Discard, r, 10)
		return 0, errAtDisk
	}
	return s.Storage.Put(ctx, name, r)
}

func (s *atFlakyStorage) Remove(ctx context.Context, name string) error {
	if s.failRemove.Load() {
		return errAtDisk
	}
	return s.Storage.Remove(ctx, name)
}

// TestAttachmentFailingStorage: a delete does not touch the storage (the file waits for
// the sweep, which keeps it queued while the storage refuses), and a store that fails
// leaves no record (503, a generic body).
func TestAttachmentFailingStorage(t *testing.T) {
	t.Parallel()
	flaky := &atFlakyStorage{}
	h := apitest.New(t, apitest.Options{DB: storetest.PackageDB(t), AttachmentStorage: func(local attachment.Storage) attachment.Storage {
		flaky.Storage = local
		return flaky
	}})
	f := atFixtureOn(t, h)
	a := f.uploaded(t, f.Member.Access, "keep.txt", "", "kept")
	stored := f.storedName(t, a["id"])

	flaky.failRemove.Store(true)
	require.Equal(t, http.StatusNoContent, f.H.Do("DELETE", f.at("/"+a["id"].(string)), nil, f.Owner.Access).Status)
	require.Zero(t, f.rows())
	require.Equal(t, []string{stored}, f.files(t))

	flaky.failPut.Store(true)
	r := f.upload(t, f.Member.Access, atFile("lost.txt", "", "data"))
	apitest.RequireProblem(t, r, http.StatusServiceUnavailable, "UNAVAILABLE", apitest.Reason("STORAGE_UNAVAILABLE"))
	require.NotContains(t, string(r.Body), "secret")
	require.Zero(t, f.rows())
}

// TestAttachmentPathTraversal: records whose stored name is not of the generated form
// (tampered with in the database) reach nothing: the download is 404, the delete does not
// touch the file it names, and the record goes.
func TestAttachmentPathTraversal(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	victim := filepath.Join(base, "victim.txt")
	require.NoError(t, os.WriteFile(victim, []byte("secret"), 0o600))
	f := atFixtureOn(t, apitest.New(t, apitest.Options{DB: storetest.PackageDB(t), Configure: func(s *api.Settings) {
		s.AttachmentsDir = filepath.Join(base, "root")
	}}))
	sub := filepath.Join(f.dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(sub, "inner.txt"), []byte("secret"), 0o600))

	for _, name := range []string{"../victim.txt", "../../etc/passwd", "sub/inner.txt", "/etc/passwd", "sub", ".."} {
		var id string
		require.NoError(t, f.H.DB.Pool.QueryRow(context.Background(), `INSERT INTO attachments
			(issue_id, uploader_id, filename, stored_name, content_type, size) VALUES ($1, $2, 'x.txt', $3, 'text/plain', 6)
			RETURNING id`, f.issueID, f.Owner.ID, name).Scan(&id))
		d := f.H.Do("GET", f.at("/"+id+"/download"), nil, f.Owner.Access)
		apitest.RequireProblem(t, d, http.StatusNotFound, "NOT_FOUND", apitest.Reason("ATTACHMENT_FILE_MISSING"))
		require.NotContains(t, string(d.Body), "secret", name)
		require.Equal(t, http.StatusNoContent, f.H.Do("DELETE", f.at("/"+id), nil, f.Owner.Access).Status, name)
	}
	for _, p := range []string{victim, filepath.Join(sub, "inner.txt")} {
		raw, err := os.ReadFile(p)
		require.NoError(t, err)
		require.Equal(t, "secret", string(raw))
	}
	require.Zero(t, f.rows())
}

// TestAttachmentAddedWebhook: the upload's record, activity entry and webhook delivery
// commit together; the delivery's data is {attachmentId, filename}. A delete sends none.
func TestAttachmentAddedWebhook(t *testing.T) {
	t.Parallel()
	f := atFixtureOn(t, apitest.Shared(t))
	hook, _ := apitest.CreateWebhook(t, f.H, f.Key, f.Owner.Access, map[string]any{"url": "http://[3ffe::10]/hook", "events": []string{"attachment.added"}})
	a := f.uploaded(t, f.Member.Access, "Plan ü.txt", "", "x")

	var eventType, payload, deliveryID string
	require.NoError(t, f.H.DB.Pool.QueryRow(context.Background(),
		"SELECT id::text, event_type, payload FROM webhook_deliveries WHERE webhook_id = $1", hook["id"]).Scan(&deliveryID, &eventType, &payload))
	require.Equal(t, "attachment.added", eventType)
	var body map[string]any
	require.NoError(t, json.Unmarshal([]byte(payload), &body))
	require.Equal(t, "attachment.added", body["event"])
	require.Equal(t, f.ProjectID.String(), body["projectId"])
	require.Equal(t, f.Key, body["projectKey"])
	require.Equal(t, map[string]any{"attachmentId": a["id"], "filename": "Plan ü.txt"}, body["data"])
	require.Equal(t, 1, f.H.Count(`SELECT count(*) FROM river_job AS j, webhook_deliveries AS d, attachments AS a, issue_activities AS act
		WHERE d.id = $1::uuid AND a.id = $2 AND act.issue_id = a.issue_id AND act.type = 'ATTACHMENT_ADDED'
		AND j.kind = 'webhook.deliver' AND j.args->'deliveryIds' = jsonb_build_array($1::text)
		AND j.xmin = d.xmin AND d.xmin = a.xmin AND a.xmin = act.xmin`, deliveryID, a["id"]), "one transaction")

	require.Equal(t, http.StatusNoContent, f.H.Do("DELETE", f.at("/"+a["id"].(string)), nil, f.Member.Access).Status)
	require.Equal(t, 1, f.H.Count("SELECT count(*) FROM webhook_deliveries WHERE webhook_id = $1", hook["id"]))
}

// TestAttachmentListQueryCount: the list costs the same statements for 1 attachment as
// for 12.
func TestAttachmentListQueryCount(t *testing.T) {
	t.Parallel()
	h, counter := apitest.CountingHarness(t)
	f := atFixtureOn(t, h)
	count := func() int64 {
		before := counter.N.Load()
		r := h.Do("GET", f.at(""), nil, f.Viewer.Access)
		require.Equal(t, http.StatusOK, r.Status)
		return counter.N.Load() - before
	}
	f.uploaded(t, f.Member.Access, "0.txt", "", "x")
	one := count()
	for i := 1; i < 12; i++ {
		f.uploaded(t, f.Member.Access, fmt.Sprintf("%d.txt", i), "", "x")
	}
	require.Len(t, h.Do("GET", f.at(""), nil, f.Viewer.Access).Array(t), 12)
	require.Equal(t, one, count())
	require.Equal(t, int64(4), one, "credential check, project access, the issue, the list")
}
