package servicedesk

import (
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/domain/servicedesk"
	"github.com/taskweave/taskweave/store"
)

// ticketListPageSize is GET …/service-desk/tickets' default size
// (docs/api-conventions.md#pages).
const ticketListPageSize = 50

// serviceDesk is the desk service over the server's database, bus and audit log.
func (s *handlers) serviceDesk() *servicedesk.Service {
	return servicedesk.NewService(s.DB, s.Bus, s.Audit).WithMailbox(s.Cfg.MailboxAddresses)
}

func deskProject(a *project.Access) servicedesk.Project {
	return servicedesk.Project{ID: a.Project.ID, Key: a.Project.Key, WorkflowID: a.Project.WorkflowID}
}

// serviceDeskResponse is ServiceDesk in api/openapi/91-servicedesk.yaml: emailAddress
// as set, its status (PENDING routes no mail) and when it was verified.
type serviceDeskResponse struct {
	ID                     uuid.UUID `json:"id"`
	ProjectID              uuid.UUID `json:"projectId"`
	EmailAddress           *string   `json:"emailAddress"`
	Enabled                bool      `json:"enabled"`
	EmailAddressStatus     *string   `json:"emailAddressStatus"`
	EmailAddressVerifiedAt *string   `json:"emailAddressVerifiedAt"`
}

func toServiceDeskResponse(d *store.ServiceDesk) serviceDeskResponse {
	return serviceDeskResponse{ID: d.ID, ProjectID: d.ProjectID, EmailAddress: d.EmailAddress, Enabled: d.Enabled,
		EmailAddressStatus: servicedesk.AddressStatus(d), EmailAddressVerifiedAt: core.InstantPtr(d.EmailVerifiedAt)}
}

// ticketReceipt is TicketReceipt: the public submission's reply; replyToken only for
// a ticket without a sender.
type ticketReceipt struct {
	TicketID   uuid.UUID `json:"ticketId"`
	IssueKey   string    `json:"issueKey"`
	Status     string    `json:"status"`
	ReplyToken string    `json:"replyToken,omitempty"`
}

// ticketItem is TicketItem: IssueResponse plus the status name as `status`, where it
// came from and its SLA state.
type ticketItem struct {
	core.IssueResponse
	Status      string  `json:"status"`
	SenderEmail *string `json:"senderEmail"`
	Channel     string  `json:"channel"`
	SLADueAt    *string `json:"slaDueAt"`
	Breached    bool    `json:"breached"`
}

// slaPolicyResponse is SlaPolicy.
type slaPolicyResponse struct {
	ID                uuid.UUID                `json:"id"`
	ServiceDeskID     uuid.UUID                `json:"serviceDeskId"`
	Name              string                   `json:"name"`
	Priority          string                   `json:"priority"`
	ResponseMinutes   int                      `json:"responseMinutes"`
	ResolutionMinutes int                      `json:"resolutionMinutes"`
	EscalationRules   []escalationRuleResponse `json:"escalationRules"`
	CalendarID        *uuid.UUID               `json:"calendarId"`
	PauseStatusIDs    []uuid.UUID              `json:"pauseStatusIds"`
}

// escalationRuleResponse is EscalationRule.
type escalationRuleResponse struct {
	ID                   uuid.UUID   `json:"id"`
	SLAPolicyID          uuid.UUID   `json:"slaPolicyId"`
	EscalateAfterMinutes int         `json:"escalateAfterMinutes"`
	AssigneeID           *uuid.UUID  `json:"assigneeId"`
	NotifyUserIDs        []uuid.UUID `json:"notifyUserIds"`
}

func toEscalationRuleResponse(r *store.EscalationRule) escalationRuleResponse {
	ids := r.NotifyUserIDs
	if ids == nil {
		ids = []uuid.UUID{}
	}
	return escalationRuleResponse{ID: r.ID, SLAPolicyID: r.SLAPolicyID, EscalateAfterMinutes: r.EscalateAfterMinutes,
		AssigneeID: r.AssigneeID, NotifyUserIDs: ids}
}

func toSLAPolicyResponse(p *servicedesk.Policy) slaPolicyResponse {
	out := slaPolicyResponse{ID: p.ID, ServiceDeskID: p.ServiceDeskID, Name: p.Name, Priority: p.Priority,
		ResponseMinutes: p.ResponseMinutes, ResolutionMinutes: p.ResolutionMinutes,
		EscalationRules: make([]escalationRuleResponse, len(p.Rules)), CalendarID: p.CalendarID,
		PauseStatusIDs: p.PauseStatusIDs}
	if out.PauseStatusIDs == nil {
		out.PauseStatusIDs = []uuid.UUID{}
	}
	for i := range p.Rules {
		out.EscalationRules[i] = toEscalationRuleResponse(&p.Rules[i])
	}
	return out
}

// ticketRateLimited limits public ticket submissions per client address, with the
// login limit's size and window (TW_AUTH_RATE_LIMIT, TW_AUTH_RATE_WINDOW) but a bucket
// of its own, so a busy form never locks a client out of logging in.
func (s *handlers) ticketRateLimited(c *fiber.Ctx) error {
	if err := core.Limit(c, s.Limiter, "ticket", "ticket:"+c.IP()); err != nil {
		return err
	}
	return c.Next()
}

func (s *handlers) enableServiceDesk(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Admin)
	if err != nil {
		return err
	}
	var body struct {
		EmailAddress *string `json:"emailAddress"`
	}
	if err := core.DecodeOptional(c, &body); err != nil {
		return err
	}
	if body.EmailAddress != nil {
		e := strings.TrimSpace(*body.EmailAddress)
		var f core.Fields
		f.Email("emailAddress", e)
		if err := f.Err(); err != nil {
			return err
		}
		body.EmailAddress = &e
	}
	d, err := s.serviceDesk().Enable(c.UserContext(), core.AuditActor(c), deskProject(a), body.EmailAddress)
	if err != nil {
		return err
	}
	return c.JSON(toServiceDeskResponse(d))
}

// maxCodeLength bounds a verification code as sent (spaces and dashes included).
const maxCodeLength = 64

// verifyDeskEmail proves the desk's pending address with the code mailed to it.
func (s *handlers) verifyDeskEmail(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Admin)
	if err != nil {
		return err
	}
	var body struct {
		Code *string `json:"code"`
	}
	if err := core.Decode(c, &body); err != nil {
		return err
	}
	if body.Code == nil {
		return core.Required("code")
	}
	var f core.Fields
	f.Text("code", *body.Code, true, maxCodeLength)
	if err := f.Err(); err != nil {
		return err
	}
	d, err := s.serviceDesk().VerifyAddress(c.UserContext(), core.AuditActor(c), deskProject(a), *body.Code)
	if err != nil {
		return err
	}
	return c.JSON(toServiceDeskResponse(d))
}

// resendDeskEmail queues a new verification mail for the desk's pending address.
func (s *handlers) resendDeskEmail(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Admin)
	if err != nil {
		return err
	}
	d, err := s.serviceDesk().ResendVerification(c.UserContext(), deskProject(a))
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(toServiceDeskResponse(d))
}

// approveDeskEmail is a system ADMIN's proof of a desk's address (the admin group).
func (s *handlers) approveDeskEmail(c *fiber.Ctx) error {
	var body struct {
		EmailAddress *string `json:"emailAddress"`
	}
	if err := core.Decode(c, &body); err != nil {
		return err
	}
	if body.EmailAddress == nil {
		return core.Required("emailAddress")
	}
	e := strings.TrimSpace(*body.EmailAddress)
	var f core.Fields
	f.Email("emailAddress", e)
	if err := f.Err(); err != nil {
		return err
	}
	d, err := s.serviceDesk().ApproveAddress(c.UserContext(), core.AuditActor(c), c.Params("projectKey"), e)
	if err != nil {
		return err
	}
	return c.JSON(toServiceDeskResponse(d))
}

// pendingAddressResponse is PendingDeskAddress.
type pendingAddressResponse struct {
	DeskID             uuid.UUID `json:"deskId"`
	ProjectID          uuid.UUID `json:"projectId"`
	ProjectKey         string    `json:"projectKey"`
	EmailAddress       string    `json:"emailAddress"`
	EmailAddressStatus string    `json:"emailAddressStatus"`
	UpdatedAt          string    `json:"updatedAt"`
}

// listPendingDeskEmails lists the desks' pending addresses for a system ADMIN.
func (s *handlers) listPendingDeskEmails(c *fiber.Ctx) error {
	pr, err := core.ParsePage(c, ticketListPageSize)
	if err != nil {
		return err
	}
	list, err := s.serviceDesk().PendingAddresses(c.UserContext(), pr.Offset(), pr.Size)
	if err != nil {
		return err
	}
	out := make([]pendingAddressResponse, len(list))
	for i, a := range list {
		out[i] = pendingAddressResponse{DeskID: a.DeskID, ProjectID: a.ProjectID, ProjectKey: a.ProjectKey,
			EmailAddress: a.Address, EmailAddressStatus: servicedesk.AddressPending, UpdatedAt: core.Instant(a.UpdatedAt)}
	}
	return c.JSON(out)
}

func (s *handlers) getServiceDesk(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Viewer)
	if err != nil {
		return err
	}
	d, err := s.serviceDesk().Desk(c.UserContext(), deskProject(a))
	if err != nil {
		return err
	}
	return c.JSON(toServiceDeskResponse(d))
}

// parseTicket reads the public submission: title required (not blank, ≤ 255),
// description optional (≤ 5000, default ""), senderEmail optional but a valid address
// when sent.
func parseTicket(body core.Body) (servicedesk.NewTicket, error) {
	var r struct {
		Title       *string `json:"title"`
		Description *string `json:"description"`
		SenderEmail *string `json:"senderEmail"`
	}
	if err := body.Decode(&r); err != nil {
		return servicedesk.NewTicket{}, err
	}
	if r.Title == nil {
		return servicedesk.NewTicket{}, core.Required("title")
	}
	in := servicedesk.NewTicket{Title: strings.TrimSpace(*r.Title), Channel: servicedesk.ChannelWeb}
	var f core.Fields
	f.Text("title", in.Title, true, servicedesk.MaxTitle)
	if r.Description != nil {
		f.Text("description", *r.Description, false, servicedesk.MaxDescription)
		in.Description = *r.Description
	}
	if r.SenderEmail != nil {
		e := strings.TrimSpace(*r.SenderEmail)
		f.Email("senderEmail", e)
		in.SenderEmail = &e
	}
	return in, f.Err()
}

// submitTicket is the PUBLIC ticket form; tickets counts WEB tickets.
func (s *handlers) submitTicket(tickets *servicedesk.Metrics) fiber.Handler {
	return func(c *fiber.Ctx) error {
		in, err := parseTicket(core.BodyOf(c))
		if err != nil {
			return err
		}
		m := core.Meta(c)
		in.IP, in.UserAgent = m.IP, m.UserAgent
		r, err := s.serviceDesk().Submit(c.UserContext(), c.Params("key"), in)
		if err != nil {
			return err
		}
		tickets.Tickets.WithLabelValues(servicedesk.ChannelWeb).Inc()
		return c.Status(fiber.StatusCreated).JSON(ticketReceipt{TicketID: r.TicketID, IssueKey: r.IssueKey, Status: "RECEIVED",
			ReplyToken: r.ReplyToken})
	}
}

func (s *handlers) listTickets(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Viewer)
	if err != nil {
		return err
	}
	pr, err := core.ParsePage(c, ticketListPageSize)
	if err != nil {
		return err
	}
	items, err := s.serviceDesk().Tickets(c.UserContext(), deskProject(a), pr.Offset(), pr.Size)
	if err != nil {
		return err
	}
	out := make([]ticketItem, len(items))
	for i, t := range items {
		out[i] = ticketItem{IssueResponse: core.ToIssueResponse(t.View), Status: t.StatusName, SenderEmail: t.SenderEmail,
			Channel: t.Channel, SLADueAt: core.InstantPtr(t.SLADueAt), Breached: t.Breached}
	}
	return c.JSON(out)
}

// minutes checks a required whole number of minutes, 1 to servicedesk.MaxMinutes.
func minutes(f *core.Fields, field string, v int) {
	if v < 1 || v > servicedesk.MaxMinutes {
		f.Add(field, "RANGE", "field.RANGE", "min", "1", "max", strconv.Itoa(servicedesk.MaxMinutes))
	}
}

// parsePolicy reads an SLA policy: every member required; an unknown priority is
// BAD_REQUEST, a blank or long name and minutes out of range VALIDATION_ERRORs.
func parsePolicy(body core.Body) (servicedesk.NewPolicy, error) {
	var r struct {
		Name              *string  `json:"name"`
		Priority          *string  `json:"priority"`
		ResponseMinutes   *int     `json:"responseMinutes"`
		ResolutionMinutes *int     `json:"resolutionMinutes"`
		CalendarID        *string  `json:"calendarId"`
		PauseStatusIDs    []string `json:"pauseStatusIds"`
	}
	if err := body.Decode(&r); err != nil {
		return servicedesk.NewPolicy{}, err
	}
	switch {
	case r.Name == nil:
		return servicedesk.NewPolicy{}, core.Required("name")
	case r.Priority == nil:
		return servicedesk.NewPolicy{}, core.Required("priority")
	case r.ResponseMinutes == nil:
		return servicedesk.NewPolicy{}, core.Required("responseMinutes")
	case r.ResolutionMinutes == nil:
		return servicedesk.NewPolicy{}, core.Required("resolutionMinutes")
	}
	if !issue.Valid(issue.Priorities, *r.Priority) {
		return servicedesk.NewPolicy{}, core.BadRequest("INVALID_ENUM", "field", "priority", "values", strings.Join(issue.Priorities, ", "))
	}
	in := servicedesk.NewPolicy{Name: strings.TrimSpace(*r.Name), Priority: *r.Priority,
		ResponseMinutes: *r.ResponseMinutes, ResolutionMinutes: *r.ResolutionMinutes}
	var err error
	if in.CalendarID, err = core.OptionalID("calendarId", r.CalendarID); err != nil {
		return in, err
	}
	if in.PauseStatusIDs, err = core.ParseIDs("pauseStatusIds", r.PauseStatusIDs); err != nil {
		return in, err
	}
	in.PauseStatusIDs = uniqueIDs(in.PauseStatusIDs)
	var f core.Fields
	if len(in.PauseStatusIDs) > servicedesk.MaxPauseStatuses {
		f.Add("pauseStatusIds", "SIZE", "field.TOO_MANY", "max", strconv.Itoa(servicedesk.MaxPauseStatuses))
	}
	f.Text("name", in.Name, true, servicedesk.MaxPolicyName)
	minutes(&f, "responseMinutes", in.ResponseMinutes)
	minutes(&f, "resolutionMinutes", in.ResolutionMinutes)
	return in, f.Err()
}

func (s *handlers) createSLAPolicy(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Admin)
	if err != nil {
		return err
	}
	in, err := parsePolicy(core.BodyOf(c))
	if err != nil {
		return err
	}
	p, err := s.serviceDesk().CreatePolicy(c.UserContext(), core.AuditActor(c), deskProject(a), in)
	if err != nil {
		return err
	}
	return c.JSON(toSLAPolicyResponse(p))
}

func (s *handlers) listSLAPolicies(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Viewer)
	if err != nil {
		return err
	}
	ps, err := s.serviceDesk().Policies(c.UserContext(), deskProject(a))
	if err != nil {
		return err
	}
	out := make([]slaPolicyResponse, len(ps))
	for i := range ps {
		out[i] = toSLAPolicyResponse(&ps[i])
	}
	return c.JSON(out)
}

func (s *handlers) deleteSLAPolicy(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Admin)
	if err != nil {
		return err
	}
	id, err := core.PathUUID(c, "id")
	if err != nil {
		return err
	}
	if err := s.serviceDesk().DeletePolicy(c.UserContext(), core.AuditActor(c), deskProject(a), id); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// parseEscalationRule reads an escalation rule: escalateAfterMinutes required,
// assigneeId optional, notifyUserIds optional (absent = none; repeated ids count once).
func parseEscalationRule(body core.Body) (servicedesk.NewRule, error) {
	var r struct {
		EscalateAfterMinutes *int     `json:"escalateAfterMinutes"`
		AssigneeID           *string  `json:"assigneeId"`
		NotifyUserIDs        []string `json:"notifyUserIds"`
	}
	if err := body.Decode(&r); err != nil {
		return servicedesk.NewRule{}, err
	}
	if r.EscalateAfterMinutes == nil {
		return servicedesk.NewRule{}, core.Required("escalateAfterMinutes")
	}
	in := servicedesk.NewRule{EscalateAfterMinutes: *r.EscalateAfterMinutes}
	var err error
	if in.AssigneeID, err = core.OptionalID("assigneeId", r.AssigneeID); err != nil {
		return in, err
	}
	if in.NotifyUserIDs, err = core.ParseIDs("notifyUserIds", r.NotifyUserIDs); err != nil {
		return in, err
	}
	in.NotifyUserIDs = uniqueIDs(in.NotifyUserIDs)
	var f core.Fields
	minutes(&f, "escalateAfterMinutes", in.EscalateAfterMinutes)
	if len(in.NotifyUserIDs) > servicedesk.MaxNotifyUsers {
		f.Add("notifyUserIds", "SIZE", "field.TOO_MANY", "max", strconv.Itoa(servicedesk.MaxNotifyUsers))
	}
	return in, f.Err()
}

func (s *handlers) createEscalationRule(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Admin)
	if err != nil {
		return err
	}
	id, err := core.PathUUID(c, "id")
	if err != nil {
		return err
	}
	in, err := parseEscalationRule(core.BodyOf(c))
	if err != nil {
		return err
	}
	r, err := s.serviceDesk().AddEscalationRule(c.UserContext(), core.AuditActor(c), deskProject(a), id, in)
	if err != nil {
		return err
	}
	return c.JSON(toEscalationRuleResponse(r))
}

// uniqueIDs keeps the first occurrence of each id, in order: a recipient listed twice
// is notified once.
func uniqueIDs(ids []uuid.UUID) []uuid.UUID {
	out := make([]uuid.UUID, 0, len(ids))
	seen := make(map[uuid.UUID]bool, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
