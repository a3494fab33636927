package servicedesk

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// TLS modes of the IMAP connection (TW_IMAP_TLS).
const (
	// IMAPTLSAuto upgrades with STARTTLS when the server offers it, else stays plain.
	IMAPTLSAuto = "auto"
	// IMAPTLSImplicit connects with TLS from the start (port 993).
	IMAPTLSImplicit = "tls"
	// IMAPTLSStartTLS requires STARTTLS.
	IMAPTLSStartTLS = "starttls"
	// IMAPTLSNone never encrypts (a local test server).
	IMAPTLSNone = "none"
)

// MailboxConfig is the e-mail ingestion's configuration (TW_MAIL_INGEST_ENABLED,
// TW_IMAP_*, TW_MAIL_INTERVAL).
type MailboxConfig struct {
	Enabled  bool
	Addr     string
	Username string
	Password string
	// Mailbox is the folder polled; "" is INBOX.
	Mailbox string
	// TLS is one of the IMAPTLS modes; "" is IMAPTLSAuto.
	TLS string
	// Interval is the poll period; zero is a minute.
	Interval time.Duration
	// TLSConfig, when set, replaces the default (tests trust their own certificate).
	TLSConfig *tls.Config
	// MaxPerPoll bounds the messages one poll handles; zero is 100. The rest wait for
	// the next poll.
	MaxPerPoll int
	// MaxMessageBytes bounds the size of a message fetched; a larger one is skipped
	// unread (FailureTooLarge). Zero, or more than MaxMailBytes, is MaxMailBytes.
	MaxMessageBytes int64
	// MaxAttachmentBytes is the largest e-mail attachment kept on a ticket
	// (TW_MAX_UPLOAD_BYTES, the upload limit); zero is 25 MiB.
	MaxAttachmentBytes int64
	// OwnAddresses are the addresses the mailbox itself receives at
	// (TW_MAIL_MAILBOX_ADDRESSES, and TW_IMAP_USER when it is an address): no desk may
	// hold them and mail is never routed by them (Service.WithMailbox).
	OwnAddresses []string
}

// PollResult counts what one poll did, by outcome.
type PollResult struct {
	Tickets, Comments, Duplicates, Skipped int
}

// Poller reads the desk mailbox: every unseen message becomes a ticket (or a comment),
// or is skipped, and is then marked seen.
type Poller struct {
	svc     *Service
	cfg     MailboxConfig
	metrics *Metrics
	log     *slog.Logger
	// ack: SMTP is configured, so new tickets' senders get an acknowledgement.
	ack bool
}

// NewPoller builds a poller on svc; ack says whether acknowledgements can be sent.
func NewPoller(svc *Service, cfg MailboxConfig, m *Metrics, log *slog.Logger, ack bool) *Poller {
	if cfg.Mailbox == "" {
		cfg.Mailbox = "INBOX"
	}
	if cfg.TLS == "" {
		cfg.TLS = IMAPTLSAuto
	}
	if cfg.MaxPerPoll <= 0 {
		cfg.MaxPerPoll = 100
	}
	if cfg.MaxMessageBytes <= 0 || cfg.MaxMessageBytes > MaxMailBytes {
		cfg.MaxMessageBytes = MaxMailBytes
	}
	if m == nil {
		m = NewMetrics(nil)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Poller{svc: svc, cfg: cfg, metrics: m, log: log, ack: ack}
}

// Poll handles the mailbox's unseen messages, oldest first, at most MaxPerPoll. A
// message is marked \Seen only after its outcome is committed, so a crash between the
// two makes the next poll see it again, and the Message-ID makes that a duplicate, not a
// second ticket. An unusable message (no text part, over 48 MiB, broken MIME, addressed
// to no desk) is logged, counted and marked seen: it never blocks the mailbox. Only
// trouble with the server, the database or the attachment storage fails the poll; the
// message stays unseen and the next poll tries again.
func (p *Poller) Poll(ctx context.Context) (PollResult, error) {
	res, err := p.poll(ctx)
	if err != nil {
		p.metrics.Polls.WithLabelValues(OutcomeError).Inc()
		return res, err
	}
	p.metrics.Polls.WithLabelValues(OutcomeOK).Inc()
	return res, nil
}

func (p *Poller) poll(ctx context.Context) (PollResult, error) {
	var res PollResult
	// The client has no context: dial closes the connection when ctx ends, which ends
	// whatever command is waiting.
	c, stop, err := p.dial(ctx)
	if err != nil {
		return res, err
	}
	defer stop()
	defer c.Close()

	if err := c.Login(p.cfg.Username, p.cfg.Password).Wait(); err != nil {
		return res, fmt.Errorf("imap login: %w", err)
	}
	if _, err := c.Select(p.cfg.Mailbox, nil).Wait(); err != nil {
		return res, fmt.Errorf("imap select %s: %w", p.cfg.Mailbox, err)
	}
	found, err := c.UIDSearch(&imap.SearchCriteria{NotFlag: []imap.Flag{imap.FlagSeen}}, nil).Wait()
	if err != nil {
		return res, fmt.Errorf("imap search: %w", err)
	}
	uids := found.AllUIDs()
	if len(uids) > p.cfg.MaxPerPoll {
		uids = uids[:p.cfg.MaxPerPoll]
	}
	for _, uid := range uids {
		if err := p.handle(ctx, c, uid, &res); err != nil {
			return res, err
		}
	}
	_ = c.Logout().Wait()
	return res, nil
}

// dial connects as the TLS mode says. The connection is opened here, not by
// imapclient's Dial functions, so ctx governs all of it: the TCP connect, the TLS
// handshake, the server's greeting, STARTTLS and (auto) the capability check. Closing the
// connection when ctx ends makes whatever is waiting fail at once: a server that
// accepts and then says nothing cannot hold a poll, or a worker's shutdown, for
// imapclient's 30-second command timeout per step.
//
// stop ends the watch on ctx once the client is closed.
func (p *Poller) dial(ctx context.Context) (c *imapclient.Client, stop func() bool, err error) {
	c, stop, err = p.dialMode(ctx, p.cfg.TLS)
	if err == nil && p.cfg.TLS == IMAPTLSAuto && c.Caps().Has(imap.CapStartTLS) {
		// Auto: a server offering STARTTLS gets a new connection that upgrades before
		// anything else is said.
		_ = c.Close()
		stop()
		c, stop, err = p.dialMode(ctx, IMAPTLSStartTLS)
	} else if err == nil && p.cfg.TLS == IMAPTLSAuto {
		p.log.WarnContext(ctx, "imap server offers no STARTTLS: polling unencrypted", "addr", p.cfg.Addr)
	}
	if err != nil {
		if ctx.Err() != nil {
			err = errors.Join(ctx.Err(), err)
		}
		return nil, nil, fmt.Errorf("imap connect %s (%s): %w", p.cfg.Addr, p.cfg.TLS, err)
	}
	return c, stop, nil
}

// dialMode opens one connection in mode; auto is a plain connection whose capabilities
// have been read. Until stop, ctx's end closes the connection. On error the connection
// is closed and the watch stopped.
func (p *Poller) dialMode(ctx context.Context, mode string) (c *imapclient.Client, stop func() bool, err error) {
	host, _, err := net.SplitHostPort(p.cfg.Addr)
	if err != nil {
		return nil, nil, err
	}
	conn, err := (&net.Dialer{Timeout: 30 * time.Second}).DialContext(ctx, "tcp", p.cfg.Addr)
	if err != nil {
		return nil, nil, err
	}
	watch := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer func() {
		if err != nil {
			watch()
			_ = conn.Close()
		}
	}()
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if p.cfg.TLSConfig != nil {
		tlsConfig = p.cfg.TLSConfig.Clone()
	}
	if tlsConfig.ServerName == "" {
		tlsConfig.ServerName = host
	}
	opts := &imapclient.Options{TLSConfig: tlsConfig}
	switch mode {
	case IMAPTLSImplicit:
		if tlsConfig.NextProtos == nil {
			tlsConfig.NextProtos = []string{"imap"}
		}
		tc := tls.Client(conn, tlsConfig)
		if err = tc.HandshakeContext(ctx); err != nil {
			return nil, nil, err
		}
		c = imapclient.New(tc, opts)
	case IMAPTLSStartTLS:
		if c, err = imapclient.NewStartTLS(conn, opts); err != nil {
			return nil, nil, err
		}
	default:
		c = imapclient.New(conn, opts)
	}
	// The greeting (and, for auto, the capabilities) before the caller says anything: a
	// silent server fails here, when ctx ends.
	if err = c.WaitGreeting(); err == nil && mode == IMAPTLSAuto {
		_, err = c.Capability().Wait()
	}
	if err != nil {
		_ = c.Close()
		return nil, nil, err
	}
	return c, watch, nil
}

// handle fetches one message, ingests or skips it, and marks it seen.
func (p *Poller) handle(ctx context.Context, c *imapclient.Client, uid imap.UID, res *PollResult) error {
	set := imap.UIDSetNum(uid)
	// The size first: a message over the limit is never downloaded.
	sized, err := c.Fetch(set, &imap.FetchOptions{UID: true, RFC822Size: true}).Collect()
	if err != nil {
		return fmt.Errorf("imap fetch size of %d: %w", uid, err)
	}
	if len(sized) == 0 {
		return nil // expunged meanwhile
	}
	var outcome string
	if sized[0].RFC822Size > p.cfg.MaxMessageBytes {
		outcome = p.skip(ctx, uid, errTooLarge)
	} else {
		section := &imap.FetchItemBodySection{Peek: true}
		msgs, err := c.Fetch(set, &imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{section}}).Collect()
		if err != nil {
			return fmt.Errorf("imap fetch %d: %w", uid, err)
		}
		if len(msgs) == 0 {
			return nil
		}
		outcome, err = p.ingest(ctx, uid, msgs[0].FindBodySection(section))
		if err != nil {
			return err
		}
	}
	switch outcome {
	case IngestTicket:
		res.Tickets++
		p.metrics.Messages.WithLabelValues(MessageTicket).Inc()
		p.metrics.Tickets.WithLabelValues(ChannelEmail).Inc()
	case IngestComment:
		res.Comments++
		p.metrics.Messages.WithLabelValues(MessageComment).Inc()
	case IngestDuplicate:
		res.Duplicates++
		p.metrics.Messages.WithLabelValues(MessageDuplicate).Inc()
	default:
		res.Skipped++
		p.metrics.Messages.WithLabelValues(MessageSkipped).Inc()
	}
	err = c.Store(set, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagSeen}}, nil).Close()
	if err != nil {
		return fmt.Errorf("imap mark %d seen: %w", uid, err)
	}
	return nil
}

// ingest parses and ingests one message; an unusable one is skipped (with its outcome),
// a database failure is returned.
func (p *Poller) ingest(ctx context.Context, uid imap.UID, raw []byte) (string, error) {
	e, err := ParseEmail(raw)
	if err != nil {
		return p.skip(ctx, uid, err), nil
	}
	got, err := p.svc.Ingest(ctx, e, p.ack)
	if Skipped(err) {
		if got.Outcome != IngestDuplicate {
			p.metrics.MailFailures.WithLabelValues(FailureReason(err)).Inc()
			var amb *AmbiguousError
			if errors.As(err, &amb) {
				// The operator's cue: the message stays in the mailbox (seen) for delivery
				// by hand, and the desks named share an address between envelope and To.
				p.log.WarnContext(ctx, "e-mail refused: more than one service desk matches its recipients; delivered to none",
					"uid", uid, "message_id", e.Key, "reason", FailureAmbiguousAddress, "desks", amb.Desks,
					"addresses", amb.Addresses, "envelope_to", e.Envelope, "to", e.To)
			} else {
				p.log.WarnContext(ctx, "e-mail skipped", "uid", uid, "message_id", e.Key, "reason", FailureReason(err),
					"envelope_to", e.Envelope, "to", e.To)
			}
		}
		return got.Outcome, nil
	}
	if err != nil {
		return "", err
	}
	if got.Outcome != IngestDuplicate {
		p.log.InfoContext(ctx, "e-mail ingested", "uid", uid, "message_id", e.Key, "outcome", got.Outcome, "issue", got.IssueKey)
	}
	return got.Outcome, nil
}

// skip logs and counts an unusable message.
func (p *Poller) skip(ctx context.Context, uid imap.UID, reason error) string {
	p.metrics.MailFailures.WithLabelValues(FailureReason(reason)).Inc()
	p.log.WarnContext(ctx, "e-mail skipped", "uid", uid, "reason", FailureReason(reason), "err", reason)
	return IngestSkipped
}
