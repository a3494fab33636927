// Package audit decides which actions are recorded and records them asynchronously:
// the request inserts a job in its own transaction, a worker writes the row.
package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/store"
)

// Level is an audit level; each has a toggle in audit_config.
type Level string

// The three levels. SECURITY is always recorded whatever its toggle says.
const (
	LevelSecurity Level = "SECURITY"
	LevelWrite    Level = "WRITE"
	LevelAll      Level = "ALL"
)

// Levels in display order.
var Levels = []Level{LevelSecurity, LevelWrite, LevelAll}

// Actions. Stored as text, so new ones need no migration.
const (
	LoginSuccess      = "LOGIN_SUCCESS"
	LoginFailed       = "LOGIN_FAILED"
	Logout            = "LOGOUT"
	PasswordChanged   = "PASSWORD_CHANGED"
	ProfileUpdated    = "PROFILE_UPDATED"
	RoleChanged       = "ROLE_CHANGED"
	APIKeyCreated     = "API_KEY_CREATED"
	APIKeyDeleted     = "API_KEY_DELETED"
	OAuthLogin        = "OAUTH_LOGIN"
	UserRegistered    = "USER_REGISTERED"
	UserDeactivated   = "USER_DEACTIVATED"
	UserActivated     = "USER_ACTIVATED"
	UserDeleted       = "USER_DELETED"
	TokenCreated      = "TOKEN_CREATED"
	TokenRevoked      = "TOKEN_REVOKED"
	IssueViewed       = "ISSUE_VIEWED"
	BoardOpened       = "BOARD_OPENED"
	ReportViewed      = "REPORT_VIEWED"
	AuditConfigChange = "AUDIT_CONFIG_CHANGED"

	// RefreshTokenReused: a refresh token already consumed by a rotation was presented
	// again; its whole family was revoked.
	RefreshTokenReused = "REFRESH_TOKEN_REUSED"
	// SessionsRevoked: every login session of a user was ended ("sign out everywhere",
	// by the user or a system ADMIN).
	SessionsRevoked = "SESSIONS_REVOKED"

	// SSOLinked and SSOUnlinked: an external identity was linked to an account (by
	// the account's owner, or by a trusted registration's first login) or unlinked.
	SSOLinked   = "SSO_LINKED"
	SSOUnlinked = "SSO_UNLINKED"
)

var securityActions = map[string]bool{
	LoginSuccess: true, LoginFailed: true, Logout: true, PasswordChanged: true, ProfileUpdated: true,
	RoleChanged: true, APIKeyCreated: true, APIKeyDeleted: true, OAuthLogin: true, UserRegistered: true,
	RefreshTokenReused: true, SessionsRevoked: true, SSOLinked: true, SSOUnlinked: true,
}

var allActions = map[string]bool{IssueViewed: true, BoardOpened: true, ReportViewed: true}

// LevelOf gives an action's level: the SECURITY and ALL lists of
// docs/api-conventions.md#audit, WRITE for every other action.
func LevelOf(action string) Level {
	switch {
	case securityActions[action]:
		return LevelSecurity
	case allActions[action]:
		return LevelAll
	default:
		return LevelWrite
	}
}

// ParseLevel validates a level name.
func ParseLevel(s string) (Level, bool) {
	for _, l := range Levels {
		if string(l) == s {
			return l, true
		}
	}
	return "", false
}

// Entry is what a caller knows about an action; the Recorder fills id, time and level.
type Entry struct {
	Action       string
	UserID       *uuid.UUID
	UserEmail    string // "system" when empty
	ProjectID    *uuid.UUID
	OrgID        *uuid.UUID
	ResourceType string
	ResourceID   string
	Details      string
	IPAddress    string
	UserAgent    string
}

// Recorder enqueues audit jobs on the caller's transaction.
type Recorder struct {
	bus *event.Bus
	now func() time.Time
}

// NewRecorder builds a Recorder on the bus.
func NewRecorder(bus *event.Bus) *Recorder {
	return &Recorder{bus: bus, now: time.Now}
}

// Record enqueues e on tx when its level is switched on. SECURITY entries skip the
// config read: they are always recorded.
func (r *Recorder) Record(ctx context.Context, tx bun.Tx, e Entry) error {
	p, err := r.Job(ctx, tx, e)
	if err != nil || p == nil {
		return err
	}
	return r.bus.Enqueue(ctx, tx, *p)
}

// Job returns the job for e, or nil when its level is switched off; event consumers use
// it to add audit rows to the jobs of a domain event.
func (r *Recorder) Job(ctx context.Context, tx bun.IDB, e Entry) (*river.InsertManyParams, error) {
	level := LevelOf(e.Action)
	on, err := levelOn(ctx, tx, level)
	if err != nil || !on {
		return nil, err
	}
	email := e.UserEmail
	if email == "" {
		email = "system"
	}
	if a, ok := AutomationOf(ctx); ok {
		e.Details = withAutomation(e.Details, a)
	}
	args := jobs.AuditRecord{
		ID: uuid.New(), Timestamp: r.now().UTC(), UserID: e.UserID, UserEmail: email,
		ProjectID: e.ProjectID, OrgID: e.OrgID, Action: e.Action, Level: string(level),
		ResourceType: e.ResourceType, ResourceID: e.ResourceID, Details: e.Details,
		IPAddress: truncate(e.IPAddress, 45), UserAgent: truncate(e.UserAgent, 500),
	}
	return &river.InsertManyParams{Args: args}, nil
}

// levelOn reports whether rows of level are recorded. SECURITY always is; the others'
// toggles are read once per Emit call (event.Memo), however many events it carries.
func levelOn(ctx context.Context, db bun.IDB, level Level) (bool, error) {
	if level == LevelSecurity {
		return true, nil
	}
	return event.Memo(ctx, levelKey(level), func() (bool, error) { return Enabled(ctx, db, level) })
}

func levelKey(level Level) string { return "audit.level." + string(level) }

// LevelPrefetch lets an emitter read a level's toggle ahead, with a statement of its own
// (event.Prefetch), instead of levelOn reading it while the emitter holds its locks.
func LevelPrefetch(level Level) event.Prefetch {
	return event.Prefetch{
		Key: func(uuid.UUID) string { return levelKey(level) },
		SQL: func(string) string {
			return "coalesce((SELECT enabled FROM audit_config WHERE level = '" + string(level) + "'), " +
				strconv.FormatBool(defaultEnabled(level)) + ")::text"
		},
		Decode: func(s string) (any, error) { return strconv.ParseBool(s) },
	}
}

// Enabled reads one level's toggle.
func Enabled(ctx context.Context, db bun.IDB, level Level) (bool, error) {
	// Read on every audited transaction: a plain row read, not a bun select (whose
	// query building and model scan cost more than the statement itself).
	var on bool
	err := db.QueryRowContext(ctx, "SELECT enabled FROM audit_config WHERE level = ?", string(level)).Scan(&on)
	if err != nil {
		if store.IsNotFound(err) {
			return level == LevelSecurity, nil
		}
		return false, fmt.Errorf("read audit config: %w", err)
	}
	return on, nil
}

// Write stores the row a job describes. The insert ignores a row already written by an
// earlier attempt of the same job.
func Write(ctx context.Context, db bun.IDB, a jobs.AuditRecord) error {
	row := store.AuditEvent{
		ID: a.ID, Timestamp: a.Timestamp, UserID: a.UserID, UserEmail: a.UserEmail, ProjectID: a.ProjectID,
		OrgID: a.OrgID, Action: a.Action, Level: a.Level, ResourceType: nilIfEmpty(a.ResourceType),
		ResourceID: nilIfEmpty(a.ResourceID), Details: nilIfEmpty(a.Details), IPAddress: nilIfEmpty(a.IPAddress),
		UserAgent: nilIfEmpty(a.UserAgent),
	}
	// A user or project removed between request and job leaves the reference empty. The
	// conflict target is left open: the key is (id, "timestamp") on the partitioned log
	// and was id alone before migration 0045's copy finished; a retried job carries both.
	_, err := db.NewRaw(`INSERT INTO audit_events (id, "timestamp", user_id, user_email, project_id, org_id, action, level,
			resource_type, resource_id, details, ip_address, user_agent)
		VALUES (?, ?, (SELECT id FROM users WHERE id = ?), ?, (SELECT id FROM projects WHERE id = ?), ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`,
		row.ID, row.Timestamp, row.UserID, row.UserEmail, row.ProjectID, row.OrgID, row.Action, row.Level,
		row.ResourceType, row.ResourceID, row.Details, row.IPAddress, row.UserAgent).Exec(ctx)
	if err != nil {
		return fmt.Errorf("write audit row %s: %w", a.ID, err)
	}
	return nil
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}

// EventJobs is what an event consumer returns for one audited event: details are
// marshalled into e.Details, and the result holds the job, or nothing when e's level
// is switched off.
func (r *Recorder) EventJobs(ctx context.Context, tx bun.Tx, e Entry, details any) ([]river.InsertManyParams, error) {
	// The toggle first: with the level off, the details are never encoded.
	if on, err := levelOn(ctx, tx, LevelOf(e.Action)); err != nil || !on {
		return nil, err
	}
	raw, err := json.Marshal(details)
	if err != nil {
		return nil, fmt.Errorf("audit details: %w", err)
	}
	e.Details = string(raw)
	p, err := r.Job(ctx, tx, e)
	if err != nil || p == nil {
		return nil, err
	}
	return []river.InsertManyParams{*p}, nil
}
