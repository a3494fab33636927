package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// exOp is one operation with a request body, and the examples Swagger UI's "Try it
// out" would send (media type → value).
type exOp struct {
	id, method, path string
	op               *openapi3.Operation
	examples         map[string]any
}

// exampleOps lists every operation with a request body; an operation whose body (one
// of its media types) has no example is reported in missing.
func exampleOps(t *testing.T, doc *openapi3.T) (ops []exOp, missing []string) {
	t.Helper()
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.RequestBody == nil || op.RequestBody.Value == nil {
				continue
			}
			e := exOp{id: op.OperationID, method: method, path: path, op: op, examples: map[string]any{}}
			for ct, mt := range op.RequestBody.Value.Content {
				switch {
				case mt.Example != nil:
					e.examples[ct] = mt.Example
				case mt.Schema != nil && mt.Schema.Value != nil && mt.Schema.Value.Example != nil:
					e.examples[ct] = mt.Schema.Value.Example
				default:
					missing = append(missing, op.OperationID+" "+ct)
				}
			}
			ops = append(ops, e)
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].id < ops[j].id })
	sort.Strings(missing)
	return ops, missing
}

// exSeed is a project with one issue, owned by a system ADMIN, on which an example runs.
type exSeed struct {
	t         *testing.T
	h         *apitest.Harness
	admin     apitest.User
	key       string
	issueKey  string
	issueID   string
	exampleOf func(op string) any
}

func newExSeed(t *testing.T, h *apitest.Harness, exampleOf func(string) any) *exSeed {
	t.Helper()
	s := &exSeed{t: t, h: h, admin: h.Register("Examples"), key: apitest.UniqueProjectKey(), exampleOf: exampleOf}
	h.MakeAdmin(s.admin)
	s.post("/api/v1/projects", map[string]any{"key": s.key, "name": "Examples " + s.key})
	iss := s.post(s.p("/issues"), map[string]any{"title": "Seeded"})
	s.issueKey, s.issueID = iss["key"].(string), iss["id"].(string)
	return s
}

// p is /api/v1/projects/{key} followed by suffix.
func (s *exSeed) p(suffix string) string { return "/api/v1/projects/" + s.key + suffix }

// send makes a seeding request as the admin and requires a 2xx.
func (s *exSeed) send(method, path string, body any) *apitest.Response {
	s.t.Helper()
	r := s.h.Do(method, path, body, s.admin.Access)
	require.True(s.t, r.Status >= 200 && r.Status < 300, "seed %s %s: %d %s", method, path, r.Status, r.Body)
	return r
}

func (s *exSeed) post(path string, body any) map[string]any {
	s.t.Helper()
	return s.send("POST", path, body).JSON(s.t)
}

func (s *exSeed) id(m map[string]any) string { return m["id"].(string) }

// statuses are the project's workflow status ids by position.
func (s *exSeed) statuses() []string {
	s.t.Helper()
	wf := s.send("GET", s.p("/workflow"), nil).JSON(s.t)
	var ids []string
	for _, st := range wf["statuses"].([]any) {
		ids = append(ids, st.(map[string]any)["id"].(string))
	}
	return ids
}

// member registers a user and adds them to the project as MEMBER.
func (s *exSeed) member() apitest.User {
	s.t.Helper()
	u := s.h.Register("Member")
	s.post(s.p("/members"), map[string]any{"userId": u.ID, "role": "MEMBER"})
	return u
}

func (s *exSeed) serviceDesk() {
	s.t.Helper()
	s.post(s.p("/service-desk/enable"), map[string]any{})
}

// exParams are the path parameters of the operations that need more than the project
// and its issue; each builds what its path names.
var exParams = map[string]func(s *exSeed) map[string]string{
	"renameSystemAutomationRule": func(s *exSeed) map[string]string {
		return map[string]string{"rid": s.id(s.post("/api/v1/admin/automation/rules", s.exampleOf("createSystemAutomationRule")))}
	},
	"updateSSOConfig": func(s *exSeed) map[string]string {
		return map[string]string{"id": s.id(s.post("/api/v1/admin/sso", s.exampleOf("createSSOConfig")))}
	},
	"addOrgMember": func(s *exSeed) map[string]string {
		return map[string]string{"id": s.id(s.post("/api/v1/organizations", map[string]any{"name": "Org", "slug": strings.ToLower(apitest.UniqueProjectKey())}))}
	},
	"changeOrgMemberRole": func(s *exSeed) map[string]string {
		org := s.id(s.post("/api/v1/organizations", map[string]any{"name": "Org", "slug": strings.ToLower(apitest.UniqueProjectKey())}))
		u := s.h.Register("OrgMember")
		s.post("/api/v1/organizations/"+org+"/members", map[string]any{"userId": u.ID, "role": "MEMBER"})
		return map[string]string{"id": org, "userId": u.ID.String()}
	},
	"renameProjectAutomationRule": func(s *exSeed) map[string]string {
		return map[string]string{"rid": s.id(s.post(s.p("/automation/rules"), s.exampleOf("createProjectAutomationRule")))}
	},
	"updateCustomField": func(s *exSeed) map[string]string {
		return map[string]string{"id": s.id(s.post(s.p("/custom-fields"), map[string]any{"name": "Team", "type": "TEXT"}))}
	},
	"createCustomFieldOption": func(s *exSeed) map[string]string {
		return map[string]string{"id": s.id(s.post(s.p("/custom-fields"), map[string]any{"name": "Tier", "type": "DROPDOWN"}))}
	},
	"updateCustomFieldOption": func(s *exSeed) map[string]string {
		field := s.id(s.post(s.p("/custom-fields"), map[string]any{"name": "Tier", "type": "DROPDOWN"}))
		return map[string]string{"id": field, "optionId": s.id(s.post(s.p("/custom-fields/"+field+"/options"), map[string]any{"label": "Silver"}))}
	},
	"resolveIncident": func(s *exSeed) map[string]string {
		return map[string]string{"id": s.id(s.post(s.p("/incidents"), map[string]any{"issueId": s.issueID, "severity": "P2"}))}
	},
	"editComment": func(s *exSeed) map[string]string {
		return map[string]string{"commentId": s.id(s.post(s.p("/issues/"+s.issueKey+"/comments"), map[string]any{"body": "First"}))}
	},
	"updateLabel": func(s *exSeed) map[string]string {
		return map[string]string{"id": s.id(s.post(s.p("/labels"), map[string]any{"name": "backend", "color": "#00aa00"}))}
	},
	"changeProjectMemberRole": func(s *exSeed) map[string]string {
		return map[string]string{"userId": s.member().ID.String()}
	},
	"verifyServiceDeskEmail": func(s *exSeed) map[string]string {
		s.post(s.p("/service-desk/enable"), map[string]any{"emailAddress": "verify-" + strings.ToLower(s.key) + "@example.com"})
		return nil
	},
	"approveServiceDeskEmail": func(s *exSeed) map[string]string {
		s.post(s.p("/service-desk/enable"), s.exampleOf("approveServiceDeskEmail"))
		return nil
	},
	"createSlaPolicy":   func(s *exSeed) map[string]string { s.serviceDesk(); return nil },
	"createSlaCalendar": func(s *exSeed) map[string]string { s.serviceDesk(); return nil },
	"updateSlaCalendar": func(s *exSeed) map[string]string {
		s.serviceDesk()
		return map[string]string{"id": s.id(s.post(s.p("/service-desk/calendars"), s.exampleOf("createSlaCalendar")))}
	},
	"submitTicket": func(s *exSeed) map[string]string { s.serviceDesk(); return nil },
	"createEscalationRule": func(s *exSeed) map[string]string {
		s.serviceDesk()
		return map[string]string{"id": s.id(s.post(s.p("/service-desk/sla-policies"), s.exampleOf("createSlaPolicy")))}
	},
	"patchSprint": func(s *exSeed) map[string]string {
		return map[string]string{"sprintId": s.id(s.post(s.p("/sprints"), map[string]any{"name": "Seeded sprint"}))}
	},
	"renameVersion": func(s *exSeed) map[string]string {
		return map[string]string{"id": s.id(s.post(s.p("/versions"), map[string]any{"name": "0.9"}))}
	},
	"updateWebhook": func(s *exSeed) map[string]string {
		w := s.post(s.p("/webhooks"), s.exampleOf("createWebhook"))
		return map[string]string{"webhookId": w["webhook"].(map[string]any)["id"].(string)}
	},
	"pingWebhook": func(s *exSeed) map[string]string {
		w := s.post(s.p("/webhooks"), s.exampleOf("createWebhook"))
		return map[string]string{"webhookId": w["webhook"].(map[string]any)["id"].(string)}
	},
	"updateWorkflowStatus": func(s *exSeed) map[string]string {
		return map[string]string{"sid": s.statuses()[0]}
	},
	"linkMySSOProvider": func(*exSeed) map[string]string {
		return map[string]string{"registrationId": "github"} // not configured in the example server
	},
	"putWorkflowGuards": func(s *exSeed) map[string]string {
		st := s.statuses()
		return map[string]string{"tid": s.id(s.post(s.p("/workflow/transitions"), map[string]any{"fromStatusId": st[0], "toStatusId": st[1]}))}
	},
}

// exRefused are the examples that name ids the caller must fill in (the document's
// placeholder 3fa85f64-…) or credentials only a real session has: as-is they get this
// documented 4xx.
var exRefused = map[string]struct {
	status int
	reason string
}{
	"refresh":                  {http.StatusForbidden, "INVALID_REFRESH_TOKEN"},
	"exchangeSSOCode":          {http.StatusForbidden, "INVALID_SSO_CODE"},
	"addOrgMember":             {http.StatusNotFound, "USER_NOT_FOUND"},
	"addProjectMember":         {http.StatusNotFound, "USER_NOT_FOUND"},
	"createIncident":           {http.StatusNotFound, "ISSUE_NOT_FOUND"},
	"moveOnBoard":              {http.StatusNotFound, "ISSUE_NOT_FOUND"},
	"reorderCustomFields":      {http.StatusNotFound, "CUSTOM_FIELD_NOT_FOUND"},
	"putDashboardLayout":       {http.StatusNotFound, "WIDGET_NOT_FOUND"},
	"putWorkflowLayout":        {http.StatusNotFound, "STATUS_NOT_FOUND"},
	"createWorkflowTransition": {http.StatusNotFound, "STATUS_NOT_FOUND"},
	"riverUICancelJobs":        {http.StatusNotFound, "JOB_NOT_FOUND"},
	"riverUIRetryJobs":         {http.StatusNotFound, "JOB_NOT_FOUND"},
	"riverUIDeleteJobs":        {http.StatusNotFound, "JOB_NOT_FOUND"},
	// The code comes by mail; the example's is not the one sent.
	"verifyServiceDeskEmail": {http.StatusBadRequest, "DESK_EMAIL_CODE_INVALID"},
	"linkMySSOProvider":      {http.StatusNotFound, "SSO_PROVIDER_NOT_FOUND"},
}

// exSequence are the account examples, run in this order on one fresh user: the
// register example creates the user the login, ops login and password examples name.
var exSequence = []string{"register", "login", "opsLogin", "refresh", "exchangeSSOCode", "changePassword"}

// TestOpenAPIRequestExamples posts every operation's request example, as Swagger UI's
// "Try it out" would, against a seeded project (path parameters from the seed) and
// expects a 2xx, or for the listed examples that need real ids the documented 4xx. The
// harness checks every answer against the document as well.
func TestOpenAPIRequestExamples(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	ops, missing := exampleOps(t, doc)
	require.Empty(t, missing, "request bodies without an example")
	byID := map[string]exOp{}
	for _, o := range ops {
		byID[o.id] = o
	}
	exampleOf := func(op string) any {
		o, ok := byID[op]
		require.True(t, ok, "no operation %s with a body", op)
		return o.examples["application/json"]
	}
	for id := range exRefused {
		require.Contains(t, byID, id)
	}
	// Its own database: the examples name fixed e-mails, keys and slugs.
	h := apitest.New(t, apitest.Options{})

	var mu sync.Mutex
	done := map[string]bool{}
	run := func(t *testing.T, o exOp, s *exSeed, token string) {
		t.Helper()
		params := map[string]string{"key": s.key, "projectKey": s.key, "issueKey": s.issueKey}
		if f := exParams[o.id]; f != nil {
			for k, v := range f(s) {
				params[k] = v
			}
		}
		path := regexp.MustCompile(`\{([^}]+)\}`).ReplaceAllStringFunc(o.path, func(m string) string {
			v, ok := params[m[1:len(m)-1]]
			require.True(t, ok, "%s: no seed for path parameter %s (add it to exParams)", o.id, m)
			return url.PathEscape(v)
		})
		cts := make([]string, 0, len(o.examples))
		for ct := range o.examples {
			cts = append(cts, ct)
		}
		sort.Strings(cts)
		for _, ct := range cts {
			body, contentType := exBody(t, ct, o.examples[ct])
			r := h.Do(strings.ToUpper(o.method), path, body, token, "Content-Type", contentType)
			if want, ok := exRefused[o.id]; ok {
				require.Equal(t, want.status, r.Status, "%s %s (%s): %s", o.method, path, ct, r.Body)
				require.NotNil(t, o.op.Responses.Status(want.status), "%s: %d is not documented", o.id, want.status)
				if want.reason != "" {
					require.Equal(t, want.reason, r.JSON(t)["reason"], "%s: %s", o.id, r.Body)
				}
			} else if o.id == "opsLogin" {
				// The ops page's sign-in answers a redirect with its session cookie.
				require.Equal(t, http.StatusSeeOther, r.Status, "%s", r.Body)
				require.NotEmpty(t, r.Header.Get("Set-Cookie"))
			} else {
				require.True(t, r.Status >= 200 && r.Status < 300, "%s %s (%s) example refused: %d %s", o.method, path, ct, r.Status, r.Body)
			}
		}
		mu.Lock()
		done[o.id] = true
		mu.Unlock()
	}

	t.Run("group", func(t *testing.T) {
		t.Run("account", func(t *testing.T) {
			t.Parallel()
			s := newExSeed(t, h, exampleOf)
			var ada apitest.User
			for _, id := range exSequence {
				o, ok := byID[id]
				require.True(t, ok, id)
				token := ada.Access
				if id == "changePassword" {
					login := h.Do("POST", "/api/v1/auth/login", exampleOf("login"), "")
					require.Equal(t, http.StatusOK, login.Status, "%s", login.Body)
					token = login.JSON(t)["accessToken"].(string)
				}
				run(t, o, s, token)
				if id == "register" {
					var err error
					ada.ID, err = uuid.Parse(exUserID(t, h, exampleOf("register")))
					require.NoError(t, err)
					h.MakeAdmin(ada)
				}
			}
		})
		for _, o := range ops {
			if contains(exSequence, o.id) {
				continue
			}
			t.Run(o.id, func(t *testing.T) {
				t.Parallel()
				s := newExSeed(t, h, exampleOf)
				run(t, o, s, s.admin.Access)
			})
		}
	})
	for _, o := range ops {
		require.True(t, done[o.id], "the example of %s did not run", o.id)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// exUserID finds the id of the user an example registered.
func exUserID(t *testing.T, h *apitest.Harness, register any) string {
	t.Helper()
	var id string
	email := strings.ToLower(register.(map[string]any)["email"].(string))
	require.NoError(t, h.DB.Pool.QueryRow(t.Context(), "SELECT id::text FROM users WHERE email = $1", email).Scan(&id))
	return id
}

// exBody encodes an example for its media type as Swagger UI sends it.
func exBody(t *testing.T, contentType string, example any) ([]byte, string) {
	t.Helper()
	switch contentType {
	case "application/json":
		raw, err := json.Marshal(example)
		require.NoError(t, err)
		return raw, contentType
	case "text/plain":
		s, ok := example.(string)
		require.True(t, ok, "a text/plain example is a string")
		return []byte(s), contentType
	case "application/x-www-form-urlencoded":
		form := url.Values{}
		for k, v := range example.(map[string]any) {
			form.Set(k, fmt.Sprint(v))
		}
		return []byte(form.Encode()), contentType
	case "multipart/form-data":
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		for k, v := range example.(map[string]any) {
			if k == "file" {
				part, err := w.CreateFormFile(k, "example.txt")
				require.NoError(t, err)
				_, err = part.Write([]byte(fmt.Sprint(v)))
				require.NoError(t, err)
				continue
			}
			require.NoError(t, w.WriteField(k, fmt.Sprint(v)))
		}
		require.NoError(t, w.Close())
		return buf.Bytes(), w.FormDataContentType()
	}
	t.Fatalf("no encoding for example media type %s", contentType)
	return nil, ""
}
