package admin

import (
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/store"
)

// auditPageSize is the default size of both audit lists (docs/api-conventions.md#pages).
const auditPageSize = 50

// auditEventResponse is AuditEvent in api/openapi/60-audit.yaml; nullable members are
// sent as null.
type auditEventResponse struct {
	ID           string  `json:"id"`
	Timestamp    string  `json:"timestamp"`
	UserEmail    string  `json:"userEmail"`
	UserID       *string `json:"userId"`
	ProjectID    *string `json:"projectId"`
	Action       string  `json:"action"`
	Level        string  `json:"level"`
	ResourceType *string `json:"resourceType"`
	ResourceID   *string `json:"resourceId"`
	IPAddress    *string `json:"ipAddress"`
	OrgID        *string `json:"orgId"`
	Details      *string `json:"details"`
	UserAgent    *string `json:"userAgent"`
}

func toAuditEventResponse(e *store.AuditEvent) auditEventResponse {
	return auditEventResponse{
		ID: e.ID.String(), Timestamp: core.Instant(e.Timestamp), UserEmail: e.UserEmail, UserID: auditUUID(e.UserID),
		ProjectID: auditUUID(e.ProjectID), Action: e.Action, Level: e.Level, ResourceType: e.ResourceType,
		ResourceID: e.ResourceID, IPAddress: e.IPAddress, OrgID: auditUUID(e.OrgID), Details: e.Details,
		UserAgent: e.UserAgent,
	}
}

func auditUUID(id *uuid.UUID) *string {
	if id == nil {
		return nil
	}
	s := id.String()
	return &s
}

// auditActionPattern is the shape of every action name (upper case and underscores).
// Anything else is refused before it reaches SQL; a well-formed name nobody recorded
// simply matches nothing, since new actions need no migration.
var auditActionPattern = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,63}$`)

// parseAuditFilter reads from, to and action, and for the admin list also userId and
// level. A malformed value is BAD_REQUEST naming the parameter.
func parseAuditFilter(c *fiber.Ctx, admin bool) (audit.Filter, error) {
	var f audit.Filter
	var err error
	if f.From, err = auditInstant(c, "from"); err != nil {
		return f, err
	}
	if f.To, err = auditInstant(c, "to"); err != nil {
		return f, err
	}
	if f.From != nil && f.To != nil && f.From.After(*f.To) {
		return f, core.BadRequest("INVALID_TIME_RANGE")
	}
	if v := c.Query("action"); v != "" {
		if !auditActionPattern.MatchString(v) {
			return f, core.BadRequest("INVALID_QUERY", "field", "action")
		}
		f.Action = strings.Clone(v)
	}
	if !admin {
		return f, nil
	}
	if f.UserID, err = core.QueryID("userId", c.Query("userId")); err != nil {
		return f, err
	}
	if v := c.Query("level"); v != "" {
		l, ok := audit.ParseLevel(v)
		if !ok {
			return f, unknownAuditLevel(v)
		}
		f.Level = l
	}
	return f, nil
}

// auditInstant parses an RFC 3339 query instant (offsets and fractions allowed). A '+'
// of an offset sent unencoded arrives as a space; it is read back as '+'.
func auditInstant(c *fiber.Ctx, name string) (*time.Time, error) {
	v := c.Query(name)
	if v == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, strings.Replace(v, " ", "+", 1))
	if err != nil {
		return nil, core.BadRequest("INVALID_INSTANT", "field", name)
	}
	return &t, nil
}

// unknownLevelEcho is how many characters of an unknown level the message repeats.
const unknownLevelEcho = 20

// unknownAuditLevel is the BAD_REQUEST for a level that does not exist; the echoed
// value is cut so a huge parameter does not come back in the message.
func unknownAuditLevel(v string) error {
	if utf8.RuneCountInString(v) > unknownLevelEcho {
		v = string([]rune(v)[:unknownLevelEcho]) + "…"
	}
	return core.BadRequest("UNKNOWN_AUDIT_LEVEL", "level", v)
}

// auditPageRequest parses page and size of the audit lists.
func auditPageRequest(c *fiber.Ctx) (core.PageRequest, error) {
	return core.ParsePage(c, auditPageSize)
}

// sendAuditPage answers one page of f: a count query (capped, store.PageCountAhead) and a
// page query.
func (s *handlers) sendAuditPage(c *fiber.Ctx, f audit.Filter, pr core.PageRequest) error {
	after, err := pr.AfterTimeID("audit")
	if err != nil {
		return err
	}
	events, total, exact, err := audit.List(c.UserContext(), s.DB.Pool, f, after, pr.Offset(), pr.Limit())
	if err != nil {
		return err
	}
	next := pr.Next(c, "audit", len(events), total, func(i int) []string { return core.TimeIDKeys(events[i].Timestamp, events[i].ID) })
	events = core.Trim(events, pr)
	content := make([]auditEventResponse, len(events))
	for i := range events {
		content[i] = toAuditEventResponse(&events[i])
	}
	return c.JSON(core.NewCountedPage(content, pr, total, exact, next))
}

// listAuditEvents is the system ADMIN's view of every audit event.
func (s *handlers) listAuditEvents(c *fiber.Ctx) error {
	pr, err := auditPageRequest(c)
	if err != nil {
		return err
	}
	f, err := parseAuditFilter(c, true)
	if err != nil {
		return err
	}
	return s.sendAuditPage(c, f, pr)
}

// listProjectAuditEvents shows one project's events to a system ADMIN (member or not)
// or to the project's effective ADMIN (explicit, owner or organization inherited).
func (s *handlers) listProjectAuditEvents(c *fiber.Ctx) error {
	a, err := s.ProjectAccessOrAdmin(c, project.Admin)
	if err != nil {
		return err
	}
	pr, err := auditPageRequest(c)
	if err != nil {
		return err
	}
	f, err := parseAuditFilter(c, false)
	if err != nil {
		return err
	}
	f.ProjectID = &a.Project.ID
	return s.sendAuditPage(c, f, pr)
}

// auditSettingJSON is one level's toggle on the wire.
type auditSettingJSON struct {
	Level   string `json:"level"`
	Enabled bool   `json:"enabled"`
}

// getAuditConfig lists the toggles in SECURITY, WRITE, ALL order.
func (s *handlers) getAuditConfig(c *fiber.Ctx) error {
	settings, err := audit.Settings(c.UserContext(), s.DB.Bun)
	if err != nil {
		return err
	}
	out := make([]auditSettingJSON, len(settings))
	for i, st := range settings {
		out[i] = auditSettingJSON{Level: string(st.Level), Enabled: st.Enabled}
	}
	return c.JSON(out)
}

type auditSettingRequest struct {
	Level   *string `json:"level"`
	Enabled *bool   `json:"enabled"`
}

// putAuditConfig sets one level's toggle; 200 with an empty body
// (docs/api-conventions.md#wire-format).
func (s *handlers) putAuditConfig(c *fiber.Ctx) error {
	var r auditSettingRequest
	if err := core.Decode(c, &r); err != nil {
		return err
	}
	switch {
	case r.Level == nil:
		return core.Required("level")
	case r.Enabled == nil:
		return core.Required("enabled")
	}
	level, ok := audit.ParseLevel(*r.Level)
	if !ok {
		return unknownAuditLevel(*r.Level)
	}
	if err := audit.SetEnabled(c.UserContext(), s.DB.Bun, s.Audit, level, *r.Enabled, core.AuditActor(c)); err != nil {
		return err
	}
	c.Status(fiber.StatusOK)
	return nil
}
