package servicedesk

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/mail"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/emersion/go-message"
	_ "github.com/emersion/go-message/charset" // decodes the common non-UTF-8 charsets
	gomail "github.com/emersion/go-message/mail"

	"github.com/taskweave/taskweave/domain/attachment"
)

// MaxMailBytes is the largest incoming e-mail turned into a ticket, attachments
// included: room for one attachment at the default upload limit (25 MiB) in base64. A
// larger one is never downloaded and is skipped (FailureTooLarge).
const MaxMailBytes = 48 << 20

// maxTextBytes is how much of the text part is read; the description keeps at most
// MaxDescription characters of it anyway.
const maxTextBytes = 1 << 20

// MaxMailAttachments is how many attachments of one e-mail are kept; the ones after it
// are named in a comment on the ticket instead (docs/api-conventions.md#service-desk).
const MaxMailAttachments = 10

// Reasons an incoming e-mail is skipped; each is the label of
// taskweave_mail_ingest_failures_total.
var (
	errNoText    = errors.New("servicedesk: e-mail has no text/plain or text/html part")
	errTooLarge  = errors.New("servicedesk: e-mail is larger than 48 MiB")
	errMalformed = errors.New("servicedesk: e-mail is not valid MIME")
)

// Email is an incoming e-mail as the desk uses it.
type Email struct {
	// Key identifies the message for idempotency: its Message-ID without the angle
	// brackets, or "sha256:" and the digest of the raw message when it has none.
	Key     string
	Subject string
	// From is the sender's address, "" when missing or unusable.
	From string
	// Envelope is the envelope recipient the receiving mail system stamped: the topmost
	// X-Original-To, else the topmost Delivered-To, lower case ("" without either).
	// Lower fields of those names may come from the sender and are ignored.
	Envelope string
	// To are the addresses of To, lower case. Cc is never used for routing.
	To []string
	// Text is the first text/plain part, decoded to UTF-8; without one, the first
	// text/html part as plain text (htmlText).
	Text string
	// Attachments are the parts a reader sees as files, in order: every part with
	// Content-Disposition: attachment, and inline non-text parts that have a filename.
	Attachments []MailAttachment
}

// MailAttachment is one file of an e-mail, decoded.
type MailAttachment struct {
	// Filename is the part's filename (attachment.CleanFilename'd; "attachment" when it
	// has none), ContentType its media type without parameters.
	Filename    string
	ContentType string
	Data        []byte
}

// ParseEmail reads a raw RFC 5322 message. A message over MaxMailBytes, one that is not
// valid MIME and one without a text/plain or text/html part are errors whose FailureReason names
// them.
func ParseEmail(raw []byte) (*Email, error) {
	if len(raw) > MaxMailBytes {
		return nil, errTooLarge
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, fmt.Errorf("%w: empty message", errMalformed)
	}
	r, err := gomail.CreateReader(bytes.NewReader(raw))
	if err != nil && !message.IsUnknownCharset(err) && !message.IsUnknownEncoding(err) {
		return nil, fmt.Errorf("%w: %w", errMalformed, err)
	}
	if r == nil {
		return nil, errMalformed
	}
	defer r.Close()
	if r.Header.Len() == 0 {
		return nil, fmt.Errorf("%w: no header", errMalformed)
	}
	e := &Email{}
	if id, err := r.Header.MessageID(); err == nil && id != "" {
		e.Key = truncateRunes(id, 998)
	} else {
		sum := sha256.Sum256(raw)
		e.Key = "sha256:" + hex.EncodeToString(sum[:])
	}
	if s, err := r.Header.Subject(); err == nil {
		e.Subject = strings.Join(strings.Fields(s), " ")
	} else {
		e.Subject = strings.Join(strings.Fields(r.Header.Get("Subject")), " ")
	}
	if from, err := r.Header.AddressList("From"); err == nil && len(from) > 0 {
		e.From = from[0].Address
	}
	found := false
	var htmlBody []byte // the first text/html part, used when there is no text/plain one
	// Header.AddressList reads a field's topmost occurrence: the one the last hop added.
	for _, key := range []string{"X-Original-To", "Delivered-To"} {
		if addrs, err := r.Header.AddressList(key); err == nil && len(addrs) > 0 && addrs[0].Address != "" {
			e.Envelope = strings.ToLower(addrs[0].Address)
			break
		}
	}
	if addrs, err := r.Header.AddressList("To"); err == nil {
		seen := map[string]bool{}
		for _, a := range addrs {
			if addr := strings.ToLower(a.Address); addr != "" && !seen[addr] {
				seen[addr] = true
				e.To = append(e.To, addr)
			}
		}
	}
	for {
		p, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if message.IsUnknownCharset(err) || message.IsUnknownEncoding(err) {
				continue
			}
			return nil, fmt.Errorf("%w: %w", errMalformed, err)
		}
		if a, ok, err := attachmentPart(p); err != nil {
			return nil, fmt.Errorf("%w: %w", errMalformed, err)
		} else if ok {
			e.Attachments = append(e.Attachments, a)
			continue
		}
		h, ok := p.Header.(*gomail.InlineHeader)
		if !ok {
			continue // a nameless inline non-text part (a cid: image of the HTML)
		}
		ct, _, err := h.ContentType()
		if err != nil {
			ct = "text/plain" // RFC 2045's default
		}
		if (ct != "text/plain" || found) && (ct != "text/html" || htmlBody != nil) {
			continue
		}
		body, err := io.ReadAll(io.LimitReader(p.Body, maxTextBytes))
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errMalformed, err)
		}
		if !utf8.Valid(body) {
			body = bytes.ToValidUTF8(body, []byte("\uFFFD"))
		}
		if ct == "text/html" {
			htmlBody = body
			continue
		}
		found = true
		e.Text = cleanText(string(body))
	}
	if !found && htmlBody != nil {
		// An HTML-only mail (many clients and web forms send no text/plain part).
		found = true
		e.Text = cleanText(htmlText(bytes.NewReader(htmlBody)))
	}
	if !found {
		return nil, errNoText
	}
	return e, nil
}

// attachmentPart reads p when it is a file: a part whose Content-Disposition is
// attachment, or a non-text part with a filename (Content-Disposition's filename or
// Content-Type's name).
func attachmentPart(p *gomail.Part) (MailAttachment, bool, error) {
	var h message.Header
	switch ph := p.Header.(type) {
	case *gomail.InlineHeader:
		h = ph.Header
	case *gomail.AttachmentHeader:
		h = ph.Header
	default:
		return MailAttachment{}, false, nil
	}
	disp, _, _ := h.ContentDisposition()
	ct, _, err := h.ContentType()
	if err != nil || ct == "" {
		ct = "application/octet-stream"
	}
	name, _ := (&gomail.AttachmentHeader{Header: h}).Filename()
	name = attachment.CleanFilename(name)
	if !strings.EqualFold(disp, "attachment") && (strings.HasPrefix(ct, "text/") || name == "") {
		return MailAttachment{}, false, nil
	}
	if name == "" {
		name = "attachment"
	}
	if attachment.FilenameTooLong(name) {
		name = truncateRunes(name, attachment.MaxFilename)
	}
	if len(ct) > attachment.MaxContentType {
		ct = attachment.DefaultContentType
	}
	data, err := io.ReadAll(p.Body)
	if err != nil {
		return MailAttachment{}, false, err
	}
	return MailAttachment{Filename: name, ContentType: strings.ToLower(ct), Data: data}, true, nil
}

// cleanText is a mail body as a ticket stores it: Unix line ends, no NUL, trimmed.
func cleanText(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.TrimSpace(strings.ReplaceAll(s, "\x00", ""))
}

// FailureReason is the metric label of a ParseEmail error ("" for another error).
func FailureReason(err error) string {
	switch {
	case errors.Is(err, errNoText):
		return FailureNoText
	case errors.Is(err, errTooLarge):
		return FailureTooLarge
	case errors.Is(err, errMalformed):
		return FailureMalformed
	case errors.Is(err, errUnknownAddress):
		return FailureUnknownAddress
	case errors.Is(err, errAmbiguousAddress):
		return FailureAmbiguousAddress
	}
	return ""
}

// Skipped reports whether err means the e-mail itself is unusable: it is marked seen,
// counted and logged, never retried.
func Skipped(err error) bool { return FailureReason(err) != "" }

// ticketTitle is the title of a ticket from subject: at most MaxTitle characters, and
// never blank.
func ticketTitle(subject string) string {
	s := strings.TrimSpace(subject)
	if s == "" {
		return "(no subject)"
	}
	return truncateRunes(s, MaxTitle)
}

// ticketText is the description text of an e-mail: at most MaxDescription characters
// (a longer text is cut, with a note), the limit of the web form.
func ticketText(text string) string {
	const note = "\n\n[…]"
	if utf8.RuneCountInString(text) <= MaxDescription {
		return text
	}
	return truncateRunes(text, MaxDescription-utf8.RuneCountInString(note)) + note
}

// senderAddress is the sender's address when it is one the web form would accept.
func senderAddress(from string) *string {
	from = strings.TrimSpace(from)
	if from == "" || utf8.RuneCountInString(from) > MaxEmail {
		return nil
	}
	if a, err := mail.ParseAddress(from); err != nil || a.Address != from {
		return nil
	}
	return &from
}

// issueKeyPattern finds an issue key (ABC-12) in a subject, e.g. "Re: [ABC-12] …".
var issueKeyPattern = regexp.MustCompile(`\b([A-Z0-9]{2,10}-[0-9]{1,9})\b`)

// subjectKeys lists the issue keys a subject names, upper case, in order.
func subjectKeys(subject string) []string {
	return issueKeyPattern.FindAllString(strings.ToUpper(subject), -1)
}

// replyTokenPattern finds a ticket's reply token in a subject: "[ABC-12 #token]"
// (docs/api-conventions.md#service-desk).
var replyTokenPattern = regexp.MustCompile(`(?i)\[\s*([A-Z0-9]{2,10}-[0-9]{1,9})\s+#([a-z2-7]{16})\s*\]`)

// replyTokenAlphabet is lower-case base32: case-insensitive and unambiguous in a subject.
const replyTokenAlphabet = "abcdefghijklmnopqrstuvwxyz234567"

// subjectToken is the first reply token of a subject with the key it names (upper
// case), or "" and "".
func subjectToken(subject string) (key, token string) {
	m := replyTokenPattern.FindStringSubmatch(subject)
	if m == nil {
		return "", ""
	}
	return strings.ToUpper(m[1]), strings.ToLower(m[2])
}

// tokenHash is the stored form of a reply token.
func tokenHash(token string) []byte {
	sum := sha256.Sum256([]byte(strings.ToLower(token)))
	return sum[:]
}

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n])
}
