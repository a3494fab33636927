package servicedesk

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/locale"
	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/store"
)

// Statuses of a desk's e-mail address (emailAddressStatus,
// docs/api-conventions.md#service-desk): only a VERIFIED address routes mail.
const (
	AddressPending  = "PENDING"
	AddressVerified = "VERIFIED"
)

// How a desk's address was proven (service_desks.email_verified_by).
const (
	VerifiedByCode  = "CODE"
	VerifiedByAdmin = "ADMIN"
)

// Limits of the address verification (docs/operations.md#service-desk).
const (
	// CodeTTL is how long a verification code works.
	CodeTTL = 24 * time.Hour
	// MaxCodeAttempts wrong codes use a code up; a resend makes a new one.
	MaxCodeAttempts = 5
	// ResendInterval is the least time between two verification mails of one desk.
	ResendInterval = time.Minute
	// codeLen characters of codeAlphabet: 40 bits, against at most MaxCodeAttempts
	// guesses per mail.
	codeLen = 8
)

// codeAlphabet leaves out the characters people misread (0/O, 1/I/L).
const codeAlphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"

// Audit actions of the address verification (WRITE level).
const (
	AuditEmailVerified = "SERVICE_DESK_EMAIL_VERIFIED"
	AuditEmailApproved = "SERVICE_DESK_EMAIL_APPROVED"
)

// Errors of the address verification; api/ maps each to its status.
var (
	// ErrEmailReserved: the address is the shared mailbox's own, which no desk may hold.
	ErrEmailReserved = errors.New("servicedesk: e-mail address is the shared mailbox's own")
	// ErrEmailNotPending: the desk has no address waiting for verification.
	ErrEmailNotPending = errors.New("servicedesk: no pending e-mail address")
	// ErrCodeInvalid: the code is not the desk's current code (the attempt is counted).
	ErrCodeInvalid = errors.New("servicedesk: wrong verification code")
	// ErrCodeExpired: the code has expired or was used up by wrong attempts; a resend
	// makes a new one.
	ErrCodeExpired = errors.New("servicedesk: verification code expired")
	// ErrResendTooSoon: a verification mail was queued less than ResendInterval ago.
	ErrResendTooSoon = errors.New("servicedesk: verification mail sent moments ago")
	// ErrEmailChanged: the desk's address is not the one a system ADMIN approves.
	ErrEmailChanged = errors.New("servicedesk: the desk's address is not the approved one")
)

// AddressStatus is the status of d's address: nil without one.
func AddressStatus(d *store.ServiceDesk) *string {
	if d.EmailAddress == nil {
		return nil
	}
	s := AddressPending
	if d.EmailVerifiedAt != nil {
		s = AddressVerified
	}
	return &s
}

// WithMailbox returns a copy of s that knows the shared mailbox's own addresses
// (TW_MAIL_MAILBOX_ADDRESSES and an address-shaped TW_IMAP_USER): no desk may hold them,
// and mail is never routed by them.
func (s *Service) WithMailbox(addrs []string) *Service {
	c := *s
	c.reserved = make(map[string]bool, len(addrs))
	for _, a := range addrs {
		if a = strings.ToLower(strings.TrimSpace(a)); a != "" {
			c.reserved[a] = true
		}
	}
	return &c
}

// Reserved reports whether addr is one of the shared mailbox's own addresses.
func (s *Service) Reserved(addr string) bool {
	return s.reserved[strings.ToLower(strings.TrimSpace(addr))]
}

// Enable creates the project's desk, or re-enables the existing one and sets its
// address (nil clears it). The address as sent is kept; a new one is PENDING, routes no
// mail until it is proven (a code mailed to it, VerifyAddress, or a system ADMIN's
// ApproveAddress) and gets its verification mail queued in the same transaction, unless
// the desk had one queued less than ResendInterval ago (then it waits for a resend). The
// address the desk has already (compared case-insensitively) keeps its status, so
// enabling again changes nothing. An address another desk has proven is ErrEmailTaken,
// the shared mailbox's own ErrEmailReserved; one pending elsewhere blocks nothing.
func (s *Service) Enable(ctx context.Context, by audit.Actor, p Project, email *string) (*store.ServiceDesk, error) {
	if email != nil && s.Reserved(*email) {
		return nil, ErrEmailReserved
	}
	var d *store.ServiceDesk
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		var err error
		if d, err = lockOrCreateDesk(ctx, tx, p.ID); err != nil {
			return err
		}
		if email != nil {
			if err := checkUnclaimed(ctx, tx, d.ID, *email); err != nil {
				return err
			}
		}
		same := email != nil && d.EmailAddress != nil && strings.EqualFold(*email, *d.EmailAddress)
		d.Enabled, d.EmailAddress = true, email
		var send *jobs.DeskAddressVerification
		if !same {
			lastSent := d.EmailCodeSentAt
			d.EmailVerifiedAt, d.EmailVerifiedBy = nil, nil
			clearCode(d)
			switch {
			case email == nil:
			case lastSent != nil && s.now().Before(lastSent.Add(ResendInterval)):
				// One verification mail a minute per desk, however often the address
				// changes: the new address waits without a code for a resend.
				d.EmailCodeSentAt = lastSent
			default:
				send = s.newCode(d)
			}
		}
		if err := updateDesk(ctx, tx, d); err != nil {
			return err
		}
		if send != nil {
			if err := s.bus.Enqueue(ctx, tx, river.InsertManyParams{Args: *send}); err != nil {
				return err
			}
		}
		return s.record(ctx, tx, by, p, AuditDeskEnabled, "SERVICE_DESK", d.ID,
			map[string]any{"emailAddress": d.EmailAddress, "emailAddressStatus": AddressStatus(d)})
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// VerifyAddress proves the desk's pending address with the code of its verification
// mail. A wrong code is ErrCodeInvalid and counts (MaxCodeAttempts use the code up); an
// expired or used-up code is ErrCodeExpired; an address another desk proved first is
// ErrEmailTaken and stays pending here. An address verified already answers the desk.
func (s *Service) VerifyAddress(ctx context.Context, by audit.Actor, p Project, code string) (*store.ServiceDesk, error) {
	var d *store.ServiceDesk
	var wrong error
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		var err error
		if d, err = lockDesk(ctx, tx, p.ID); err != nil {
			return err
		}
		if d.EmailAddress == nil {
			return ErrEmailNotPending
		}
		if d.EmailVerifiedAt != nil {
			return nil
		}
		if s.Reserved(*d.EmailAddress) {
			return ErrEmailReserved
		}
		now := s.now().UTC()
		if d.EmailCodeHash == nil || d.EmailCodeExpiresAt == nil || !now.Before(*d.EmailCodeExpiresAt) ||
			d.EmailCodeAttempts >= MaxCodeAttempts {
			return ErrCodeExpired
		}
		if subtle.ConstantTimeCompare(codeHash(code), d.EmailCodeHash) != 1 {
			// The attempt is committed, then the error answered.
			d.EmailCodeAttempts++
			wrong = ErrCodeInvalid
			return updateDesk(ctx, tx, d)
		}
		if err := checkUnclaimed(ctx, tx, d.ID, *d.EmailAddress); err != nil {
			return err
		}
		if err := s.markVerified(ctx, tx, d, VerifiedByCode); err != nil {
			return err
		}
		return s.record(ctx, tx, by, p, AuditEmailVerified, "SERVICE_DESK", d.ID,
			map[string]any{"emailAddress": d.EmailAddress, "verifiedBy": VerifiedByCode})
	})
	if err != nil {
		return nil, err
	}
	if wrong != nil {
		return nil, wrong
	}
	return d, nil
}

// ResendVerification queues a new verification mail, with a new code, for the desk's
// pending address; at most one per ResendInterval (ErrResendTooSoon).
func (s *Service) ResendVerification(ctx context.Context, p Project) (*store.ServiceDesk, error) {
	var d *store.ServiceDesk
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		var err error
		if d, err = lockDesk(ctx, tx, p.ID); err != nil {
			return err
		}
		if d.EmailAddress == nil || d.EmailVerifiedAt != nil {
			return ErrEmailNotPending
		}
		if s.Reserved(*d.EmailAddress) {
			return ErrEmailReserved
		}
		if err := checkUnclaimed(ctx, tx, d.ID, *d.EmailAddress); err != nil {
			return err
		}
		if d.EmailCodeSentAt != nil && s.now().Before(d.EmailCodeSentAt.Add(ResendInterval)) {
			return ErrResendTooSoon
		}
		send := s.newCode(d)
		if err := updateDesk(ctx, tx, d); err != nil {
			return err
		}
		return s.bus.Enqueue(ctx, tx, river.InsertManyParams{Args: *send})
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// ApproveAddress is a system ADMIN's proof of the address of the desk of the project
// with that key: address must be the desk's current one (else ErrEmailChanged), so an
// approval never covers an address changed after the admin looked. No such project or
// desk is ErrDeskNotFound; an address another desk proved first is ErrEmailTaken. It is
// recorded in the project's audit log.
func (s *Service) ApproveAddress(ctx context.Context, by audit.Actor, projectKey, address string) (*store.ServiceDesk, error) {
	var d *store.ServiceDesk
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		var p Project
		err := tx.NewRaw("SELECT id, key, workflow_id FROM projects WHERE key = ?", projectKey).Scan(ctx, &p.ID, &p.Key, &p.WorkflowID)
		if isNoRows(err) {
			return ErrDeskNotFound
		}
		if err != nil {
			return fmt.Errorf("load project %s: %w", projectKey, err)
		}
		if d, err = lockDesk(ctx, tx, p.ID); err != nil {
			return err
		}
		if d.EmailAddress == nil || !strings.EqualFold(*d.EmailAddress, strings.TrimSpace(address)) {
			return ErrEmailChanged
		}
		if s.Reserved(*d.EmailAddress) {
			return ErrEmailReserved
		}
		if d.EmailVerifiedAt != nil {
			return nil
		}
		if err := checkUnclaimed(ctx, tx, d.ID, *d.EmailAddress); err != nil {
			return err
		}
		if err := s.markVerified(ctx, tx, d, VerifiedByAdmin); err != nil {
			return err
		}
		return s.record(ctx, tx, by, p, AuditEmailApproved, "SERVICE_DESK", d.ID,
			map[string]any{"emailAddress": d.EmailAddress, "verifiedBy": VerifiedByAdmin})
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// VerificationMail is the verification e-mail of a desk's pending address.
type VerificationMail struct {
	To      string
	Subject string
	Text    string
}

// VerificationType is the X-Taskweave-Notification-Type of the verification e-mail.
const VerificationType = "SERVICE_DESK_ADDRESS_VERIFICATION"

// VerificationMail renders job's mail, in English (the address belongs to no account):
// nil when it has nothing left to prove (the desk is gone, its address changed or was
// verified, a newer code replaced this one, or another desk proved the address), so a
// late job never mails a stale code.
func (s *Service) VerificationMail(ctx context.Context, job jobs.DeskAddressVerification) (*VerificationMail, error) {
	var row struct {
		Key      string  `bun:"key"`
		Address  *string `bun:"email_address"`
		Verified bool    `bun:"verified"`
		Hash     []byte  `bun:"email_code_hash"`
		Taken    bool    `bun:"taken"`
	}
	err := s.db.NewRaw(`SELECT p.key, d.email_address, d.email_verified_at IS NOT NULL AS verified, d.email_code_hash,
			EXISTS (SELECT 1 FROM service_desks AS o WHERE o.id <> d.id AND o.email_verified_at IS NOT NULL
				AND lower(o.email_address) = lower(d.email_address)) AS taken
		FROM service_desks AS d JOIN projects AS p ON p.id = d.project_id WHERE d.id = ?`, job.DeskID).Scan(ctx, &row)
	if isNoRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read desk %s: %w", job.DeskID, err)
	}
	if row.Address == nil || !strings.EqualFold(*row.Address, job.Address) || row.Verified || row.Taken ||
		subtle.ConstantTimeCompare(codeHash(job.Code), row.Hash) != 1 || s.Reserved(job.Address) {
		return nil, nil
	}
	args := []string{"projectKey", row.Key, "address", job.Address, "code", job.Code,
		"hours", fmt.Sprint(int(CodeTTL / time.Hour))}
	return &VerificationMail{To: job.Address, Subject: tr("mail.deskAddress.subject", args...),
		Text: tr("mail.deskAddress.body", args...) + "\n"}, nil
}

// markVerified makes d's address effective; the partial unique index turns a second
// desk's proof of the same address into ErrEmailTaken.
func (s *Service) markVerified(ctx context.Context, tx bun.Tx, d *store.ServiceDesk, how string) error {
	now := s.now().UTC()
	d.EmailVerifiedAt, d.EmailVerifiedBy = &now, &how
	clearCode(d)
	return updateDesk(ctx, tx, d)
}

// newCode gives d a fresh code and returns the job that mails it.
func (s *Service) newCode(d *store.ServiceDesk) *jobs.DeskAddressVerification {
	code := randomString(codeAlphabet, codeLen)
	now := s.now().UTC()
	exp := now.Add(CodeTTL)
	d.EmailCodeHash, d.EmailCodeExpiresAt, d.EmailCodeAttempts, d.EmailCodeSentAt = codeHash(code), &exp, 0, &now
	return &jobs.DeskAddressVerification{ID: uuid.New(), DeskID: d.ID, Address: *d.EmailAddress, Code: code}
}

func clearCode(d *store.ServiceDesk) {
	d.EmailCodeHash, d.EmailCodeExpiresAt, d.EmailCodeAttempts, d.EmailCodeSentAt = nil, nil, 0, nil
}

// codeHash is the stored form of a code: the SHA-256 of its canonical spelling (upper
// case, without spaces or dashes), so "abcd-efgh" is "ABCDEFGH".
func codeHash(code string) []byte {
	c := strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' || r == '\t' {
			return -1
		}
		return r
	}, strings.ToUpper(code))
	sum := sha256.Sum256([]byte(c))
	return sum[:]
}

// randomString is n characters of alphabet (at most 256) from crypto/rand, without
// modulo bias: bytes past the last whole multiple of len(alphabet) are drawn again.
func randomString(alphabet string, n int) string {
	limit := 256 - 256%len(alphabet)
	out := make([]byte, 0, n)
	buf := make([]byte, 2*n)
	for len(out) < n {
		if _, err := rand.Read(buf); err != nil {
			panic(err) // crypto/rand does not fail on supported platforms
		}
		for _, c := range buf {
			if int(c) < limit && len(out) < n {
				out = append(out, alphabet[int(c)%len(alphabet)])
			}
		}
	}
	return string(out)
}

// tr renders a message of the desk's e-mails in English: their addressees have no
// account, so no stored language.
func tr(key string, args ...string) string { return locale.T(locale.English, key, args...) }

// checkUnclaimed fails with ErrEmailTaken when a desk other than deskID has proven addr.
func checkUnclaimed(ctx context.Context, tx bun.Tx, deskID uuid.UUID, addr string) error {
	var taken bool
	err := tx.NewRaw(`SELECT EXISTS (SELECT 1 FROM service_desks WHERE id <> ? AND email_verified_at IS NOT NULL
		AND lower(email_address) = lower(?))`, deskID, addr).Scan(ctx, &taken)
	if err != nil {
		return fmt.Errorf("check desk address: %w", err)
	}
	if taken {
		return ErrEmailTaken
	}
	return nil
}

// lockDesk reads the project's desk FOR UPDATE, or ErrDeskNotFound.
func lockDesk(ctx context.Context, tx bun.Tx, projectID uuid.UUID) (*store.ServiceDesk, error) {
	d := new(store.ServiceDesk)
	if err := tx.NewSelect().Model(d).Where("d.project_id = ?", projectID).For("UPDATE").Scan(ctx); err != nil {
		if isNoRows(err) {
			return nil, ErrDeskNotFound
		}
		return nil, fmt.Errorf("load service desk: %w", err)
	}
	return d, nil
}

// lockOrCreateDesk locks the project's desk, creating it (disabled, without an address)
// first when there is none; a concurrent creation is waited for and locked.
func lockOrCreateDesk(ctx context.Context, tx bun.Tx, projectID uuid.UUID) (*store.ServiceDesk, error) {
	d, err := lockDesk(ctx, tx, projectID)
	if !errors.Is(err, ErrDeskNotFound) {
		return d, err
	}
	if _, err := tx.NewRaw(`INSERT INTO service_desks (project_id, enabled) VALUES (?, false)
		ON CONFLICT (project_id) DO NOTHING`, projectID).Exec(ctx); err != nil {
		return nil, fmt.Errorf("create service desk: %w", err)
	}
	return lockDesk(ctx, tx, projectID)
}

// updateDesk writes d's state; a proof that loses the race for an address is
// ErrEmailTaken.
func updateDesk(ctx context.Context, tx bun.Tx, d *store.ServiceDesk) error {
	_, err := tx.NewUpdate().Model(d).WherePK().
		Column("enabled", "email_address", "email_verified_at", "email_verified_by", "email_code_hash",
			"email_code_expires_at", "email_code_attempts", "email_code_sent_at").
		Set("updated_at = clock_timestamp()").Returning("updated_at").Exec(ctx)
	if err != nil {
		if store.IsUnique(err, "service_desks_verified_email_key") {
			return ErrEmailTaken
		}
		return fmt.Errorf("update service desk: %w", err)
	}
	return nil
}

// Desk returns the project's desk, or ErrDeskNotFound.
func (s *Service) Desk(ctx context.Context, p Project) (*store.ServiceDesk, error) {
	return deskOf(ctx, s.db, p.ID, false)
}

// PendingAddress is a desk's address waiting to be proven, as a system ADMIN reviews it.
type PendingAddress struct {
	DeskID     uuid.UUID `bun:"id"`
	ProjectID  uuid.UUID `bun:"project_id"`
	ProjectKey string    `bun:"key"`
	Address    string    `bun:"email_address"`
	// UpdatedAt is when the desk last changed (the address was set, or a code resent).
	UpdatedAt time.Time `bun:"updated_at"`
}

// PendingAddresses lists one page of the pending addresses of every desk, most recently
// changed first, for a system ADMIN's approval.
func (s *Service) PendingAddresses(ctx context.Context, offset, limit int) ([]PendingAddress, error) {
	out := []PendingAddress{}
	err := s.db.NewRaw(`SELECT d.id, d.project_id, p.key, d.email_address, d.updated_at
		FROM service_desks AS d JOIN projects AS p ON p.id = d.project_id
		WHERE d.email_address IS NOT NULL AND d.email_verified_at IS NULL
		ORDER BY d.updated_at DESC, d.id DESC LIMIT ? OFFSET ?`, limit, offset).Scan(ctx, &out)
	if err != nil && !isNoRows(err) {
		return nil, fmt.Errorf("list pending desk addresses: %w", err)
	}
	return out, nil
}
