package servicedesk_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/attachment"
	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/servicedesk"
	"github.com/taskweave/taskweave/store"
)

// mimePart is one part of a multipart/mixed test message.
type mimePart struct {
	header string // the part's header lines, "\n"-separated, without the blank line
	body   []byte // base64-encoded when header says so
}

// mixedEmail is a multipart/mixed message from from to to with a text part and parts.
func mixedEmail(id, from, to, subject, text string, parts ...mimePart) string {
	var b strings.Builder
	fmt.Fprintf(&b, "From: %s\nTo: %s\nSubject: %s\nMessage-ID: <%s>\nMIME-Version: 1.0\n"+
		"Content-Type: multipart/mixed; boundary=\"=_b\"\n\n", from, to, subject, id)
	fmt.Fprintf(&b, "--=_b\nContent-Type: text/plain; charset=utf-8\n\n%s\n", text)
	for _, p := range parts {
		b.WriteString("--=_b\n" + p.header + "\n\n")
		if strings.Contains(p.header, "base64") {
			enc := base64.StdEncoding.EncodeToString(p.body)
			for len(enc) > 76 {
				b.WriteString(enc[:76] + "\n")
				enc = enc[76:]
			}
			b.WriteString(enc + "\n")
		} else {
			b.Write(p.body)
			b.WriteString("\n")
		}
	}
	b.WriteString("--=_b--\n")
	return b.String()
}

// binaryPart is a base64 attachment part.
func binaryPart(disposition, contentType string, data []byte) mimePart {
	return mimePart{header: "Content-Type: " + contentType + "\nContent-Transfer-Encoding: base64\nContent-Disposition: " + disposition,
		body: data}
}

// pdfish is a PDF-looking binary file of n bytes: every byte value occurs.
func pdfish(n int) []byte {
	out := []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	for i := 0; len(out) < n; i++ {
		out = append(out, byte(i*7))
	}
	return out[:n]
}

// TestMailAttachments runs through the in-memory IMAP server; TestMailAttachmentsAgainstDovecot
// runs the same through Dovecot when TW_DOVECOT is set.
func TestMailAttachments(t *testing.T) {
	t.Parallel()
	srv := newMailServer(t)
	checkMailAttachments(t, func(t *testing.T, raw string) { srv.deliver(t, raw) }, servicedesk.MailboxConfig{
		Addr: srv.addr, Username: "desk", Password: "secret"})
}

func TestMailAttachmentsAgainstDovecot(t *testing.T) {
	t.Parallel()
	cert, _ := selfSigned(t)
	d := startDovecot(t, cert, "deskfiles")
	checkMailAttachments(t, func(t *testing.T, raw string) { d.deliver(t, "deskfiles", raw) }, servicedesk.MailboxConfig{
		Addr: d.plain, Username: "deskfiles", Password: "secret", TLS: servicedesk.IMAPTLSNone})
}

// checkMailAttachments: a new ticket's mail keeps its PDF-ish binary part and its named
// inline image byte for byte, uploaded by the desk's owner, and names its oversized part
// in a system comment; a nameless inline image (the HTML's cid: picture) is not a file.
// A reply's attachment goes to the same ticket, and files after the tenth are named,
// not kept. Delivering a message again keeps nothing more and leaves no file behind.
func checkMailAttachments(t *testing.T, deliver func(t *testing.T, raw string), cfg servicedesk.MailboxConfig) {
	b := newBundle(t)
	deskAddr := "files-" + strings.ToLower(b.project.Key) + "@acme.test"
	_, err := b.desk.Enable(b.ctx, b.owner.Actor, b.project, &deskAddr)
	require.NoError(t, err)
	_, err = b.desk.ApproveAddress(b.ctx, b.owner.Actor, b.project.Key, deskAddr)
	require.NoError(t, err)

	dir := t.TempDir()
	local, err := attachment.NewLocal(dir)
	require.NoError(t, err)
	files := attachment.NewService(b.db, b.bus, attachment.NewStores(local), slog.New(slog.DiscardHandler))
	const limit = 64 << 10
	svc := servicedesk.NewService(b.db, b.bus, audit.NewRecorder(b.bus)).WithAttachments(files, limit)
	poller := servicedesk.NewPoller(svc, cfg, nil, nil, false)
	poll := func() servicedesk.PollResult {
		t.Helper()
		res, err := poller.Poll(b.ctx)
		require.NoError(t, err)
		return res
	}
	list := func(key string) []store.Attachment {
		t.Helper()
		var id string
		require.NoError(t, b.db.Pool.QueryRow(b.ctx, "SELECT id FROM issues WHERE key = $1", key).Scan(&id))
		var out []store.Attachment
		require.NoError(t, b.db.Bun.NewSelect().Model(&out).Where("issue_id = ?", id).Order("created_at", "filename").Scan(b.ctx))
		return out
	}
	content := func(a store.Attachment) []byte {
		t.Helper()
		r, _, err := files.Open(b.ctx, &a)
		require.NoError(t, err)
		defer r.Close()
		raw, err := io.ReadAll(r)
		require.NoError(t, err)
		return raw
	}
	stored := func() int {
		t.Helper()
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		n := 0
		for _, e := range entries {
			if !e.IsDir() {
				n++
			}
		}
		return n
	}

	pdf, big, logo := pdfish(40_000), pdfish(100<<10), pdfish(3_000)
	first := mixedEmail("files-1@example.com", "Ann <ann@example.com>", deskAddr, "Invoice attached", "See the invoice.",
		binaryPart(`attachment; filename="invoice 2026.pdf"`, "application/pdf", pdf),
		binaryPart(`attachment; filename="scan.bin"`, "application/octet-stream", big),
		binaryPart(`inline; filename="logo.png"`, "image/png", logo),
		binaryPart(`inline`, "image/gif", []byte("GIF89a nameless")),
	)
	deliver(t, first)
	require.Equal(t, servicedesk.PollResult{Tickets: 1}, poll())
	var key string
	require.NoError(t, b.db.Pool.QueryRow(b.ctx, `SELECT i.key FROM issues AS i WHERE i.project_id = $1 AND i.title = 'Invoice attached'`,
		b.project.ID).Scan(&key))
	got := list(key)
	require.Len(t, got, 2)
	require.Equal(t, "invoice 2026.pdf", got[0].Filename)
	require.Equal(t, "application/pdf", got[0].ContentType)
	require.Equal(t, int64(len(pdf)), got[0].Size)
	require.Equal(t, pdf, content(got[0]))
	require.Equal(t, "logo.png", got[1].Filename)
	require.Equal(t, "image/png", got[1].ContentType)
	require.Equal(t, logo, content(got[1]))
	for _, a := range got {
		require.Equal(t, b.owner.UserID, a.UploaderID, "the desk's owner uploads, as it reports the ticket")
	}
	require.Equal(t, 2, b.count(t, `SELECT count(*) FROM issue_activities AS a JOIN issues AS i ON i.id = a.issue_id
		WHERE i.key = $1 AND a.type = 'ATTACHMENT_ADDED' AND a.actor_id = $2`, key, b.owner.UserID))
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM comments AS c JOIN issues AS i ON i.id = c.issue_id
		WHERE i.key = $1 AND c.author_id IS NULL AND c.body = 'Attachment scan.bin (100 KB) was not kept: over the 64 KB limit.'`, key))
	require.Equal(t, 2, stored())

	// The same message again (a poll that died before marking it seen): a duplicate,
	// nothing more kept or stored.
	deliver(t, first)
	require.Equal(t, servicedesk.PollResult{Duplicates: 1}, poll())
	require.Len(t, list(key), 2)
	require.Equal(t, 2, stored())

	// A reply from the sender with twelve small files: the first ten join the ticket,
	// the last two are named in one comment.
	var parts []mimePart
	for i := 1; i <= 12; i++ {
		parts = append(parts, binaryPart(fmt.Sprintf(`attachment; filename="photo-%02d.jpg"`, i), "image/jpeg", pdfish(1000+i)))
	}
	deliver(t, mixedEmail("files-2@example.com", "ann@example.com", deskAddr, "Re: ["+key+"] Invoice attached", "More photos.", parts...))
	require.Equal(t, servicedesk.PollResult{Comments: 1}, poll())
	got = list(key)
	require.Len(t, got, 12)
	names := map[string]bool{}
	for _, a := range got[2:] {
		names[a.Filename] = true
		require.Equal(t, "image/jpeg", a.ContentType)
		var i int
		_, err := fmt.Sscanf(a.Filename, "photo-%02d.jpg", &i)
		require.NoError(t, err)
		require.Equal(t, pdfish(1000+i), content(a), a.Filename)
	}
	for i := 1; i <= 10; i++ {
		require.True(t, names[fmt.Sprintf("photo-%02d.jpg", i)], "photo %d kept", i)
	}
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM comments AS c JOIN issues AS i ON i.id = c.issue_id
		WHERE i.key = $1 AND c.author_id IS NULL AND c.body = $2`, key,
		"Attachment photo-11.jpg (1011 bytes) was not kept: over the limit of 10 attachments per e-mail.\n\n"+
			"Attachment photo-12.jpg (1012 bytes) was not kept: over the limit of 10 attachments per e-mail."))
	require.Equal(t, 12, stored())
	require.Zero(t, b.count(t, "SELECT count(*) FROM attachment_orphans WHERE upload"), "every stored file has its row")
}

// failingPuts is a Storage whose Put fails while fail is set.
type failingPuts struct {
	attachment.Storage
	fail atomic.Bool
	puts atomic.Int32
}

func (f *failingPuts) Put(ctx context.Context, name string, r io.Reader) (int64, error) {
	if f.puts.Add(1) == 2 && f.fail.Load() {
		return 0, errors.New("disk full")
	}
	return f.Storage.Put(ctx, name, r)
}

// TestMailAttachmentStorageFailure: when the storage fails on the second file, the poll
// fails, no ticket is made, the first file is removed again and the message stays unseen;
// the next poll makes the ticket with both files, once.
func TestMailAttachmentStorageFailure(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	deskAddr := "broken-" + strings.ToLower(b.project.Key) + "@acme.test"
	_, err := b.desk.Enable(b.ctx, b.owner.Actor, b.project, &deskAddr)
	require.NoError(t, err)
	_, err = b.desk.ApproveAddress(b.ctx, b.owner.Actor, b.project.Key, deskAddr)
	require.NoError(t, err)
	dir := t.TempDir()
	local, err := attachment.NewLocal(dir)
	require.NoError(t, err)
	st := &failingPuts{Storage: local}
	st.fail.Store(true)
	files := attachment.NewService(b.db, b.bus, attachment.NewStores(st), slog.New(slog.DiscardHandler))
	svc := servicedesk.NewService(b.db, b.bus, audit.NewRecorder(b.bus)).WithAttachments(files, 1<<20)
	srv := newMailServer(t)
	poller := servicedesk.NewPoller(svc, servicedesk.MailboxConfig{Addr: srv.addr, Username: "desk", Password: "secret"}, nil, nil, false)
	srv.deliver(t, mixedEmail("broken-1@example.com", "ann@example.com", deskAddr, "Two files", "Both attached.",
		binaryPart(`attachment; filename="a.pdf"`, "application/pdf", pdfish(500)),
		binaryPart(`attachment; filename="b.pdf"`, "application/pdf", pdfish(600))))
	tickets := func() int {
		return b.count(t, "SELECT count(*) FROM issues WHERE project_id = $1 AND title = 'Two files'", b.project.ID)
	}

	_, err = poller.Poll(b.ctx)
	require.ErrorContains(t, err, "disk full")
	require.Zero(t, tickets())
	require.Equal(t, 1, srv.unseen(t))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "the first file was removed again")
	require.Zero(t, b.count(t, "SELECT count(*) FROM attachment_orphans WHERE upload"))
	require.Zero(t, b.count(t, "SELECT count(*) FROM mail_messages WHERE message_id = 'broken-1@example.com'"))

	st.fail.Store(false)
	res, err := poller.Poll(b.ctx)
	require.NoError(t, err)
	require.Equal(t, servicedesk.PollResult{Tickets: 1}, res)
	require.Equal(t, 1, tickets())
	require.Equal(t, 2, b.count(t, `SELECT count(*) FROM attachments AS a JOIN issues AS i ON i.id = a.issue_id
		WHERE i.project_id = $1 AND i.title = 'Two files'`, b.project.ID))
	require.Zero(t, srv.unseen(t))
}
