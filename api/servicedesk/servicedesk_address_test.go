package servicedesk_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api"
	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/servicedesk"
	"github.com/taskweave/taskweave/workers"
)

// deskAddr is a fresh address for one test's desks.
func deskAddr(name string) string {
	return name + "-" + strings.ToLower(uuid.NewString()[:8]) + "@acme.test"
}

// verificationCode is the code of the latest verification mail queued for addr.
func verificationCode(t *testing.T, h *apitest.Harness, projectID uuid.UUID, addr string) string {
	t.Helper()
	var code string
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(), `SELECT j.args->>'code' FROM river_job AS j
		JOIN service_desks AS d ON d.id = (j.args->>'deskId')::uuid
		WHERE j.kind = 'servicedesk.address_verification' AND d.project_id = $1 AND j.args->>'address' = $2
		ORDER BY j.id DESC LIMIT 1`, projectID, addr).Scan(&code))
	return code
}

// deliverMail ingests one e-mail to addr as the mail poll does.
func deliverMail(t *testing.T, h *apitest.Harness, to, subject string) servicedesk.Ingested {
	t.Helper()
	raw := "From: carol@example.com\r\nTo: " + to + "\r\nSubject: " + subject + "\r\nMessage-ID: <" + uuid.NewString() +
		"@example.com>\r\nContent-Type: text/plain\r\n\r\nHello\r\n"
	e, err := servicedesk.ParseEmail([]byte(raw))
	require.NoError(t, err)
	svc := servicedesk.NewService(h.DB, h.Server.Bus(), audit.NewRecorder(h.Server.Bus()))
	got, err := svc.Ingest(context.Background(), e, false)
	if err != nil {
		require.True(t, servicedesk.Skipped(err), "%v", err)
	}
	return got
}

// deskTickets counts the tickets of the project's desk.
func deskTickets(h *apitest.Harness, projectID uuid.UUID) int {
	return h.Count(`SELECT count(*) FROM service_desk_tickets AS t JOIN service_desks AS d ON d.id = t.service_desk_id
		WHERE d.project_id = $1`, projectID)
}

// TestDeskAddressClaim: setting an address makes it PENDING (emailAddress stays as
// set) with its verification mail queued in the same transaction; pending addresses
// route no mail and block no other desk; the first desk to prove the address (by the
// mailed code) gets its mail, and the other's proof, resend, re-enable and approval are
// 409 DESK_EMAIL_TAKEN while it stays pending.
func TestDeskAddressClaim(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	apitest.SetAuditLevel(t, h, "WRITE", true)
	sys := h.Register("Sys") // first: the fixtures' owners are no system ADMINs
	h.MakeAdmin(sys)
	rightful, attacker := apitest.NewProject(t, h), apitest.NewProject(t, h)
	addr := deskAddr("support")

	// The attacker sets the address first; the rightful desk can still set it.
	claim := h.Do("POST", attacker.Path("/service-desk/enable"), map[string]any{"emailAddress": addr}, attacker.Owner.Access)
	require.Equal(t, http.StatusOK, claim.Status, "%s", claim.Body)
	require.Equal(t, "PENDING", claim.JSON(t)["emailAddressStatus"])
	mixed := strings.ToUpper(addr[:1]) + addr[1:]
	r := h.Do("POST", rightful.Path("/service-desk/enable"), map[string]any{"emailAddress": mixed}, rightful.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	desk := r.JSON(t)
	require.Equal(t, mixed, desk["emailAddress"], "the address as set")
	require.Equal(t, "PENDING", desk["emailAddressStatus"])
	require.Nil(t, desk["emailAddressVerifiedAt"])
	// The verification mail's job committed with the desk's change.
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM river_job AS j, service_desks AS d WHERE d.project_id = $1
		AND j.kind = 'servicedesk.address_verification' AND j.args->>'deskId' = d.id::text AND j.xmin = d.xmin`, rightful.ProjectID))

	// Pending addresses route nothing.
	require.Equal(t, servicedesk.IngestSkipped, deliverMail(t, h, addr, "while pending").Outcome)
	require.Zero(t, deskTickets(h, rightful.ProjectID)+deskTickets(h, attacker.ProjectID))

	// A wrong code is refused and counted; the mailed code proves the address.
	apitest.RequireProblem(t, h.Do("POST", rightful.Path("/service-desk/email/verify"), map[string]any{"code": "AAAA-AAAA"}, rightful.Owner.Access),
		400, "BAD_REQUEST", apitest.Reason("DESK_EMAIL_CODE_INVALID"))
	apitest.RequireProblem(t, h.Do("POST", rightful.Path("/service-desk/email/verify"), map[string]any{"code": "x"}, rightful.Member.Access),
		403, "FORBIDDEN", apitest.NoReason)
	code := verificationCode(t, h, rightful.ProjectID, mixed)
	spaced := strings.ToLower(code[:4]) + " - " + code[4:]
	v := h.Do("POST", rightful.Path("/service-desk/email/verify"), map[string]any{"code": spaced}, rightful.Owner.Access)
	require.Equal(t, http.StatusOK, v.Status, "%s", v.Body)
	require.Equal(t, "VERIFIED", v.JSON(t)["emailAddressStatus"])
	require.NotNil(t, v.JSON(t)["emailAddressVerifiedAt"])
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM river_job WHERE kind = 'audit.record'
		AND args->>'action' = 'SERVICE_DESK_EMAIL_VERIFIED' AND args->>'projectId' = $1`, rightful.ProjectID.String()))

	// Its mail now goes to the rightful desk only.
	got := deliverMail(t, h, strings.ToUpper(addr), "after proof")
	require.Equal(t, servicedesk.IngestTicket, got.Outcome)
	require.True(t, strings.HasPrefix(got.IssueKey, rightful.Key+"-"), got.IssueKey)
	require.Zero(t, deskTickets(h, attacker.ProjectID))

	// The attacker's proof comes second: 409, and the address stays pending there.
	attackerCode := verificationCode(t, h, attacker.ProjectID, addr)
	apitest.RequireProblem(t, h.Do("POST", attacker.Path("/service-desk/email/verify"), map[string]any{"code": attackerCode}, attacker.Owner.Access),
		409, "CONFLICT", apitest.Reason("DESK_EMAIL_TAKEN"))
	apitest.RequireProblem(t, h.Do("POST", attacker.Path("/service-desk/email/resend"), nil, attacker.Owner.Access), 409, "CONFLICT", apitest.Reason("DESK_EMAIL_TAKEN"))
	apitest.RequireProblem(t, h.Do("POST", "/api/v1/admin/service-desk/addresses/"+attacker.Key+"/approve", map[string]any{"emailAddress": addr}, sys.Access),
		409, "CONFLICT", apitest.Reason("DESK_EMAIL_TAKEN"))
	apitest.RequireProblem(t, h.Do("POST", attacker.Path("/service-desk/enable"), map[string]any{"emailAddress": addr}, attacker.Owner.Access),
		409, "CONFLICT", apitest.Reason("DESK_EMAIL_TAKEN"))
	require.Equal(t, "PENDING", h.Do("GET", attacker.Path("/service-desk"), nil, attacker.Owner.Access).JSON(t)["emailAddressStatus"])
	third := apitest.NewProject(t, h)
	apitest.RequireProblem(t, h.Do("POST", third.Path("/service-desk/enable"), map[string]any{"emailAddress": addr}, third.Owner.Access),
		409, "CONFLICT", apitest.Reason("DESK_EMAIL_TAKEN"))

	// Enabling again with the same address (any case) keeps it verified and mails nothing.
	again := h.Do("POST", rightful.Path("/service-desk/enable"), map[string]any{"emailAddress": strings.ToUpper(addr)}, rightful.Owner.Access)
	require.Equal(t, http.StatusOK, again.Status, "%s", again.Body)
	require.Equal(t, "VERIFIED", again.JSON(t)["emailAddressStatus"])
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM river_job AS j JOIN service_desks AS d ON j.args->>'deskId' = d.id::text
		WHERE j.kind = 'servicedesk.address_verification' AND d.project_id = $1`, rightful.ProjectID))
	apitest.RequireProblem(t, h.Do("POST", rightful.Path("/service-desk/email/resend"), nil, rightful.Owner.Access), 409, "CONFLICT", apitest.Reason("DESK_EMAIL_NOT_PENDING"))
}

// TestDeskAddressApprovalAndCodeLimits: a system ADMIN's approval (of the address the
// desk has now) makes it effective; codes expire after five wrong tries, a resend waits
// a minute and replaces the code.
func TestDeskAddressApprovalAndCodeLimits(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	apitest.SetAuditLevel(t, h, "WRITE", true)
	sys := h.Register("Sys") // first: the fixture's owner is no system ADMIN
	h.MakeAdmin(sys)
	f := apitest.NewProject(t, h)
	addr := deskAddr("help")
	approve := func(token, address string) *apitest.Response {
		return h.Do("POST", "/api/v1/admin/service-desk/addresses/"+f.Key+"/approve", map[string]any{"emailAddress": address}, token)
	}

	apitest.RequireProblem(t, approve(sys.Access, addr), 404, "NOT_FOUND", apitest.Reason("SERVICE_DESK_NOT_FOUND"))
	require.Equal(t, http.StatusOK, h.Do("POST", f.Path("/service-desk/enable"), map[string]any{"emailAddress": addr}, f.Owner.Access).Status)
	apitest.RequireProblem(t, approve(f.Owner.Access, addr), 403, "FORBIDDEN", apitest.Reason("ADMIN_ONLY"))
	apitest.RequireProblem(t, approve(sys.Access, "other@acme.test"), 409, "CONFLICT", apitest.Reason("DESK_EMAIL_CHANGED"))
	apitest.RequireProblem(t, approve(sys.Access, "not an address"), 400, "VALIDATION_ERROR", apitest.NoReason)

	// Five wrong codes use the code up, the right one then included.
	code := verificationCode(t, h, f.ProjectID, addr)
	for i := 0; i < servicedesk.MaxCodeAttempts; i++ {
		apitest.RequireProblem(t, h.Do("POST", f.Path("/service-desk/email/verify"), map[string]any{"code": "ZZZZZZZZ"}, f.Owner.Access),
			400, "BAD_REQUEST", apitest.Reason("DESK_EMAIL_CODE_INVALID"))
	}
	apitest.RequireProblem(t, h.Do("POST", f.Path("/service-desk/email/verify"), map[string]any{"code": code}, f.Owner.Access),
		400, "BAD_REQUEST", apitest.Reason("DESK_EMAIL_CODE_EXPIRED"))
	// A resend waits a minute, then makes a new code; the old one is dead.
	apitest.RequireProblem(t, h.Do("POST", f.Path("/service-desk/email/resend"), nil, f.Owner.Access), 409, "CONFLICT", apitest.Reason("DESK_EMAIL_RESEND_TOO_SOON"))
	_, err := h.DB.Pool.Exec(context.Background(),
		"UPDATE service_desks SET email_code_sent_at = email_code_sent_at - interval '2 minutes' WHERE project_id = $1", f.ProjectID)
	require.NoError(t, err)
	resent := h.Do("POST", f.Path("/service-desk/email/resend"), nil, f.Owner.Access)
	require.Equal(t, http.StatusAccepted, resent.Status, "%s", resent.Body)
	require.Equal(t, "PENDING", resent.JSON(t)["emailAddressStatus"])
	fresh := verificationCode(t, h, f.ProjectID, addr)
	require.NotEqual(t, code, fresh)
	apitest.RequireProblem(t, h.Do("POST", f.Path("/service-desk/email/verify"), map[string]any{"code": code}, f.Owner.Access),
		400, "BAD_REQUEST", apitest.Reason("DESK_EMAIL_CODE_INVALID"))
	// An expired code is refused.
	_, err = h.DB.Pool.Exec(context.Background(),
		"UPDATE service_desks SET email_code_expires_at = clock_timestamp() - interval '1 second' WHERE project_id = $1", f.ProjectID)
	require.NoError(t, err)
	apitest.RequireProblem(t, h.Do("POST", f.Path("/service-desk/email/verify"), map[string]any{"code": fresh}, f.Owner.Access),
		400, "BAD_REQUEST", apitest.Reason("DESK_EMAIL_CODE_EXPIRED"))
	require.Equal(t, servicedesk.IngestSkipped, deliverMail(t, h, addr, "still pending").Outcome)

	// Changing the address within the minute mails nothing (the desk waits for a resend),
	// so enable cannot mail third parties in a loop.
	other := deskAddr("other")
	changed := h.Do("POST", f.Path("/service-desk/enable"), map[string]any{"emailAddress": other}, f.Owner.Access)
	require.Equal(t, "PENDING", changed.JSON(t)["emailAddressStatus"])
	require.Zero(t, h.Count("SELECT count(*) FROM river_job WHERE kind = 'servicedesk.address_verification' AND args->>'address' = $1", other))
	apitest.RequireProblem(t, h.Do("POST", f.Path("/service-desk/email/resend"), nil, f.Owner.Access), 409, "CONFLICT", apitest.Reason("DESK_EMAIL_RESEND_TOO_SOON"))
	require.Equal(t, http.StatusOK, h.Do("POST", f.Path("/service-desk/enable"), map[string]any{"emailAddress": addr}, f.Owner.Access).Status)

	// The system ADMIN sees it waiting, and nobody else does.
	list := h.Do("GET", "/api/v1/admin/service-desk/addresses?size=200", nil, sys.Access)
	require.Equal(t, http.StatusOK, list.Status, "%s", list.Body)
	var listed map[string]any
	for _, it := range list.Array(t) {
		if m := it.(map[string]any); m["projectKey"] == f.Key {
			listed = m
		}
	}
	require.NotNil(t, listed, "%s", list.Body)
	require.Equal(t, addr, listed["emailAddress"])
	require.Equal(t, "PENDING", listed["emailAddressStatus"])
	apitest.RequireProblem(t, h.Do("GET", "/api/v1/admin/service-desk/addresses", nil, f.Owner.Access), 403, "FORBIDDEN", apitest.Reason("ADMIN_ONLY"))

	// The system ADMIN's approval proves it (audited in the project's log).
	r := approve(sys.Access, strings.ToUpper(addr))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, "VERIFIED", r.JSON(t)["emailAddressStatus"])
	require.Equal(t, addr, r.JSON(t)["emailAddress"])
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM river_job WHERE kind = 'audit.record'
		AND args->>'action' = 'SERVICE_DESK_EMAIL_APPROVED' AND args->>'projectId' = $1`, f.ProjectID.String()))
	require.Equal(t, servicedesk.IngestTicket, deliverMail(t, h, addr, "approved").Outcome)
	require.Equal(t, 1, deskTickets(h, f.ProjectID))
	// Approving again answers the desk; it is no longer listed.
	require.Equal(t, http.StatusOK, approve(sys.Access, addr).Status)
	require.NotContains(t, string(h.Do("GET", "/api/v1/admin/service-desk/addresses?size=200", nil, sys.Access).Body), f.Key)
}

// TestDeskAddressReservedForMailbox: the shared mailbox's own addresses
// (TW_MAIL_MAILBOX_ADDRESSES, an address-shaped TW_IMAP_USER) can never be a desk's.
func TestDeskAddressReservedForMailbox(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{Configure: func(s *api.Settings) {
		s.MailboxAddresses = []string{"desk@mailbox.test", "catchall@mailbox.test"}
	}})
	f := apitest.NewProject(t, h)
	for _, a := range []string{"desk@mailbox.test", "Desk@Mailbox.TEST", " catchall@mailbox.test "} {
		apitest.RequireProblem(t, h.Do("POST", f.Path("/service-desk/enable"), map[string]any{"emailAddress": a}, f.Owner.Access),
			409, "CONFLICT", apitest.Reason("DESK_EMAIL_RESERVED"))
	}
	require.Zero(t, h.Count("SELECT count(*) FROM service_desks WHERE lower(email_address) LIKE '%@mailbox.test'"))
	require.Zero(t, h.Count("SELECT count(*) FROM river_job WHERE kind = 'servicedesk.address_verification'"))
}

// TestDeskAddressVerificationMail runs the verification as the worker does: the mail
// goes out over SMTP to the address with the code, and that code proves the address.
func TestDeskAddressVerificationMail(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewProject(t, h)
	relay := apitest.NewSMTPRecorder(t)
	h.StartWorkersWith(func(c *workers.Config) {
		c.Mail = workers.MailConfig{Addr: relay.Addr, From: "Taskweave <desk@acme.test>"}
	})
	addr := deskAddr("verify")
	require.Equal(t, http.StatusOK, h.Do("POST", f.Path("/service-desk/enable"), map[string]any{"emailAddress": addr}, f.Owner.Access).Status)

	mails := relay.Wait(t, 1)
	require.Equal(t, []string{addr}, mails[0].To)
	m := apitest.ParseMail(t, mails[0])
	require.Equal(t, "Confirm the service desk address "+addr, m.Subject)
	require.Equal(t, servicedesk.VerificationType, m.Header.Get("X-Taskweave-Notification-Type"))
	require.Contains(t, m.Text, f.Key)
	code := regexp.MustCompile(`(?m)^\s+([A-Z2-9]{8})\s*$`).FindStringSubmatch(m.Text)
	require.NotNil(t, code, m.Text)
	r := h.Do("POST", f.Path("/service-desk/email/verify"), map[string]any{"code": code[1]}, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, "VERIFIED", r.JSON(t)["emailAddressStatus"])
}

// TestTicketReceiptReplyToken: a form ticket without a sender gets a reply token in its
// receipt (none with a sender); an e-mail naming the ticket with the token adds to it,
// a stranger's "Re: [KEY-n]" opens a new ticket.
func TestTicketReceiptReplyToken(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	f := apitest.NewProject(t, h)
	addr := deskAddr("form")
	require.Equal(t, http.StatusOK, h.Do("POST", f.Path("/service-desk/enable"), map[string]any{"emailAddress": addr}, f.Owner.Access).Status)
	sys := h.Register("Sys")
	h.MakeAdmin(sys)
	require.Equal(t, http.StatusOK, h.Do("POST", "/api/v1/admin/service-desk/addresses/"+f.Key+"/approve", map[string]any{"emailAddress": addr}, sys.Access).Status)
	df := &deskFixture{Project: f}

	anon := df.ticket(t, map[string]any{"title": "No sender"})
	token, _ := anon["replyToken"].(string)
	require.Regexp(t, `^[a-z2-7]{16}$`, token)
	require.NotContains(t, df.ticket(t, map[string]any{"title": "Signed", "senderEmail": "ann@example.com"}), "replyToken")
	key := anon["issueKey"].(string)

	stranger := deliverMail(t, h, addr, "Re: ["+key+"] We received your request")
	require.Equal(t, servicedesk.IngestTicket, stranger.Outcome)
	require.NotEqual(t, key, stranger.IssueKey)
	require.Zero(t, h.Count("SELECT count(*) FROM comments AS c JOIN issues AS i ON i.id = c.issue_id WHERE i.key = $1", key))
	reply := deliverMail(t, h, addr, "Re: ["+key+" #"+token+"] more")
	require.Equal(t, servicedesk.IngestComment, reply.Outcome)
	require.Equal(t, key, reply.IssueKey)
}
