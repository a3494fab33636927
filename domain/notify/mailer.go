package notify

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/store"
)

// Permanent mail failures: trying again would fail again, so the worker gives the job
// up instead of retrying it for hours. Only the worker meets them (Permanent), never a
// request.
var (
	// errRejected is a 5xx reply of the SMTP relay.
	errRejected = errors.New("notify: mail rejected by the SMTP server")
	// errNoRelay is a mail job met by a worker without TW_SMTP_ADDR (it was switched off
	// after the job was queued).
	errNoRelay = errors.New("notify: no SMTP relay configured")
)

// Permanent reports whether err, from Send, is a failure that another attempt would
// repeat: a 5xx reply of the relay, or no relay configured.
func Permanent(err error) bool { return errors.Is(err, errRejected) || errors.Is(err, errNoRelay) }

// Mailer sends notification e-mails through one SMTP relay.
type Mailer struct {
	db   bun.IDB
	addr string
	from mail.Address
	// fromErr is a malformed TW_SMTP_FROM; every send fails with it, visibly, until the
	// configuration is fixed (the jobs keep retrying meanwhile).
	fromErr error
	baseURL string
	timeout time.Duration
	now     func() time.Time
}

// MailerTimeout bounds one SMTP conversation, connect to QUIT.
const MailerTimeout = 30 * time.Second

// NewMailer prepares sending through addr (host:port) from from (an address, with or
// without a display name; DefaultFrom when empty). Links point to baseURL.
func NewMailer(db bun.IDB, addr, from, baseURL string) *Mailer {
	m := &Mailer{db: db, addr: addr, baseURL: strings.TrimRight(baseURL, "/"), timeout: MailerTimeout, now: time.Now}
	if strings.TrimSpace(from) == "" {
		from = DefaultFrom
	}
	a, err := mail.ParseAddress(from)
	if err != nil {
		m.fromErr = fmt.Errorf("TW_SMTP_FROM %q: %w", from, err)
	} else {
		m.from = *a
	}
	if m.baseURL == "" {
		m.baseURL = "http://localhost:8080"
	}
	return m
}

// recipient is the addressee of a mail as read when it is sent.
type recipient struct {
	Email       string `bun:"email"`
	DisplayName string `bun:"display_name"`
	// Send: active, not deleted and e-mail for this type still on.
	Send bool `bun:"send"`
}

// Send delivers one MailSend job. The address is read now, so a changed address is
// used and a deactivated or deleted user, or one who switched this type's e-mail off
// meanwhile, gets nothing (nil: nothing left to do).
func (m *Mailer) Send(ctx context.Context, job jobs.MailSend) error {
	if m.addr == "" {
		return errNoRelay
	}
	if m.fromErr != nil {
		return m.fromErr
	}
	var to recipient
	err := m.db.NewRaw(`SELECT u.email, u.display_name,
			u.active AND u.deleted_at IS NULL AND coalesce(np.email, true) AS send
		FROM users AS u
		LEFT JOIN notification_preferences AS np ON np.user_id = u.id AND np.type = ?
		WHERE u.id = ?`, job.Type, job.UserID).Scan(ctx, &to)
	if store.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read mail recipient %s: %w", job.UserID, err)
	}
	if !to.Send {
		return nil
	}
	footer := "mail.footer"
	if job.Type == TypeDigest {
		footer = "mail.digest.footer"
	}
	msg := Mail{
		From: m.from, To: mail.Address{Name: to.DisplayName, Address: to.Email}, Subject: job.Subject,
		Text: mailText(job.Lang, to.DisplayName, job.Body, m.baseURL+job.Link, footer), MessageID: messageID(job.ID, m.from.Address),
		Date: m.now(), Type: job.Type,
	}
	return m.deliver(ctx, m.from.Address, to.Email, msg.Bytes())
}

// messageID is <notification id>@<the sender's domain>.
func messageID(id uuid.UUID, from string) string {
	domain := "taskweave.localhost"
	if _, d, ok := strings.Cut(from, "@"); ok && d != "" {
		domain = d
	}
	return id.String() + "@" + domain
}

// deliver runs one SMTP conversation. STARTTLS is used when the relay offers it (with
// certificate checks, as net/smtp.SendMail does); the envelope addresses are checked
// for line breaks by net/smtp itself. A 5xx reply is permanent (errRejected).
func (m *Mailer) deliver(ctx context.Context, from, to string, msg []byte) error {
	deadline := time.Now().Add(m.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	dialer := net.Dialer{Deadline: deadline}
	conn, err := dialer.DialContext(ctx, "tcp", m.addr)
	if err != nil {
		return fmt.Errorf("smtp dial %s: %w", m.addr, err)
	}
	// One deadline for the whole conversation; net/smtp has no timeouts of its own.
	if err := conn.SetDeadline(deadline); err != nil {
		_ = conn.Close()
		return fmt.Errorf("smtp deadline: %w", err)
	}
	host, _, _ := net.SplitHostPort(m.addr)
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		_ = conn.Close()
		return smtpError("greeting", err)
	}
	defer c.Close()
	if ok, _ := c.Extension("STARTTLS"); ok {
		if err := c.StartTLS(&tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}); err != nil {
			return smtpError("starttls", err)
		}
	}
	if err := c.Mail(from); err != nil {
		return smtpError("MAIL FROM", err)
	}
	if err := c.Rcpt(to); err != nil {
		return smtpError("RCPT TO", err)
	}
	w, err := c.Data()
	if err != nil {
		return smtpError("DATA", err)
	}
	if _, err := w.Write(msg); err != nil {
		return smtpError("DATA", err)
	}
	if err := w.Close(); err != nil {
		return smtpError("end of DATA", err)
	}
	// The relay accepted the message with the end of DATA; a failed QUIT loses nothing.
	_ = c.Quit()
	return nil
}

// smtpError wraps err with the step; 5xx replies also wrap errRejected.
func smtpError(step string, err error) error {
	var te *textproto.Error
	if errors.As(err, &te) && te.Code >= 500 {
		return fmt.Errorf("%w: %s: %w", errRejected, step, err)
	}
	return fmt.Errorf("smtp %s: %w", step, err)
}
