package project

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/api/core/coretest"
	"github.com/taskweave/taskweave/domain/workflow"
)

// renderWorkflowError sends err through the error handler of a bare app, as a handler
// returning it would, and decodes the reply.
func renderWorkflowError(t *testing.T, err error, acceptLanguage string) (int, map[string]any) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	app := fiber.New(fiber.Config{ErrorHandler: func(c *fiber.Ctx, err error) error {
		core.NewErrors(Errors).Write(c, core.NewFailureLog(log), err)
		return nil
	}})
	app.Get("/", func(*fiber.Ctx) error { return err })
	req := httptest.NewRequest("GET", "/", nil)
	if acceptLanguage != "" {
		req.Header.Set("Accept-Language", acceptLanguage)
	}
	resp, rerr := app.Test(req)
	require.NoError(t, rerr)
	defer resp.Body.Close()
	var body map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	return resp.StatusCode, body
}

// TestWorkflowRefusalsRender pins what the issue endpoints send when CheckStatusChange
// refuses: 400 BAD_REQUEST with reason TRANSITION_NOT_ALLOWED or GUARD_FAILED, and a
// message naming the field or the actor's role, in both languages.
func TestWorkflowRefusalsRender(t *testing.T) {
	t.Parallel()
	wrap := func(err error) error { return fmt.Errorf("patch issue ABC-1: %w", err) }
	cases := []struct {
		err          error
		lang         string
		status       int
		code, reason string
		message      string
	}{
		{wrap(workflow.ErrTransitionNotAllowed), "", 400, "BAD_REQUEST", "TRANSITION_NOT_ALLOWED", "The workflow does not allow this status change."},
		{wrap(workflow.ErrTransitionNotAllowed), "de", 400, "BAD_REQUEST", "TRANSITION_NOT_ALLOWED", "Der Workflow erlaubt diesen Statuswechsel nicht."},
		{wrap(&workflow.GuardError{Field: "assigneeId"}), "", 400, "BAD_REQUEST", "GUARD_FAILED", "The transition requires the field assigneeId."},
		{wrap(&workflow.GuardError{Field: "dueDate"}), "de-DE", 400, "BAD_REQUEST", "GUARD_FAILED", "Der Übergang erfordert das Feld dueDate."},
		{wrap(&workflow.GuardError{Role: "VIEWER"}), "", 400, "BAD_REQUEST", "GUARD_FAILED", "The role VIEWER may not make this transition."},
		{wrap(&workflow.GuardError{Role: "NONE"}), "en", 400, "BAD_REQUEST", "GUARD_FAILED", "The role NONE may not make this transition."},
		{wrap(&workflow.GuardError{Role: "MEMBER"}), "de", 400, "BAD_REQUEST", "GUARD_FAILED", "Die Rolle MEMBER darf diesen Übergang nicht ausführen."},
		{wrap(workflow.ErrStatusNotInWorkflow), "", 403, "FORBIDDEN", "STATUS_NOT_IN_WORKFLOW", "The status does not belong to this project's workflow."},
		{wrap(workflow.ErrNoDefaultStatus), "", 404, "NOT_FOUND", "NO_DEFAULT_STATUS", "The workflow has no status of category TODO for new issues."},
		{wrap(workflow.ErrStatusInUse), "", 409, "CONFLICT", "IN_USE", "The status is used by issues; move them to another status first."},
		{wrap(workflow.ErrWorkflowNotFound), "", 404, "NOT_FOUND", "WORKFLOW_NOT_FOUND", "The project has no workflow."},
		{wrap(workflow.ErrStatusNotFound), "", 404, "NOT_FOUND", "STATUS_NOT_FOUND", "The status was not found in this project's workflow."},
		{wrap(workflow.ErrTransitionNotFound), "de", 404, "NOT_FOUND", "TRANSITION_NOT_FOUND", "Der Übergang wurde im Workflow dieses Projekts nicht gefunden."},
	}
	for _, c := range cases {
		t.Run(c.reason+"/"+c.lang, func(t *testing.T) {
			t.Parallel()
			status, body := renderWorkflowError(t, c.err, c.lang)
			require.Equal(t, c.status, status)
			require.Equal(t, c.code, body["code"])
			require.Equal(t, c.reason, body["reason"])
			require.Equal(t, c.message, body["message"])
			require.Equal(t, map[string]any{}, body["details"])
			require.EqualValues(t, c.status, body["status"])
		})
	}
}

func TestGuardErrorOnlyForGuards(t *testing.T) {
	t.Parallel()
	require.Nil(t, guardError(workflow.ErrTransitionNotAllowed))
	require.Nil(t, guardError(errors.New("other")))
	e := guardError(fmt.Errorf("x: %w", &workflow.GuardError{Field: "title"}))
	require.NotNil(t, e)
	require.Equal(t, "GUARD_FAILED", e.Reason)
	require.Equal(t, []string{"field", "title"}, e.Args)
}

// FuzzWorkflowBodies: every workflow body parser answers with a value or a 400.
func FuzzWorkflowBodies(f *testing.F) {
	for _, s := range []string{
		`{"name":"Review","category":"TODO","color":"#abcdef"}`, `{"name":" ","category":"DONE"}`,
		`{"fromStatusId":null,"toStatusId":"8d9c3f0e-3c61-4d8e-9b55-0e6f0a3c1d2b"}`,
		`{"guards":[{"type":"REQUIRED_FIELD","field":"title"},{"type":"ROLE_RESTRICTION","roles":["NONE"]}]}`,
		`{"guards":[{"type":"REQUIRED_FIELD","field":"x"}]}`, `{"guards":[null,1]}`,
		`{"positions":[{"statusId":"8d9c3f0e-3c61-4d8e-9b55-0e6f0a3c1d2b","x":99999999999,"y":-1}]}`, `[]`, `{`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		_, err := parseNewWorkflowStatus(core.Body{JSON: body})
		coretest.CheckDecodeResult(t, err)
		_, err = parseWorkflowStatusChange(core.Body{JSON: body})
		coretest.CheckDecodeResult(t, err)
		_, _, err = parseWorkflowTransition(core.Body{JSON: body})
		coretest.CheckDecodeResult(t, err)
		guards, err := parseWorkflowGuards(core.Body{JSON: body})
		coretest.CheckDecodeResult(t, err)
		if err == nil {
			for _, g := range guards {
				require.True(t, workflow.IsGuardType(g.Type))
				if g.Type == workflow.GuardRequiredField {
					require.True(t, workflow.IsGuardField(g.Field))
				}
				for _, r := range g.Roles {
					require.True(t, workflow.IsGuardRole(r))
				}
			}
			_, err = workflow.EncodeGuards(guards)
			require.NoError(t, err)
		}
		_, err = parseWorkflowLayout(core.Body{JSON: body})
		coretest.CheckDecodeResult(t, err)
		in, err := parseNewWorkflowStatus(core.Body{JSON: body})
		if err == nil {
			require.True(t, workflow.IsCategory(in.Category))
			require.True(t, workflow.IsColor(in.Color))
		}
	})
}
