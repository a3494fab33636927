package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/domain/locale"
	"github.com/taskweave/taskweave/store"
)

// Error is an API error before localization: a code of docs/api-conventions.md#errors, an
// optional reason and the message key with its arguments.
type Error struct {
	Status int
	Code   string
	Reason string
	Key    string
	Args   []string
	Fields []FieldError
	// Details are sent as the body's details (a limit's name and value, for a client to
	// read rather than parse the message).
	Details map[string]string
	// RetryAfter (seconds) is sent as a header with 429.
	RetryAfter int
}

// FieldError is one member that broke a constraint.
type FieldError struct {
	Field string
	Code  string
	Key   string
	Args  []string
}

func (e *Error) Error() string {
	if e.Reason != "" {
		return e.Code + "/" + e.Reason
	}
	return e.Code
}

func newError(status int, code, reason string, args ...string) *Error {
	key := "error." + code
	if reason != "" {
		if _, ok := locale.Raw(locale.English, "reason."+reason); ok {
			key = "reason." + reason
		}
	}
	return &Error{Status: status, Code: code, Reason: reason, Key: key, Args: args}
}

func badRequest(reason string, args ...string) *Error {
	return newError(http.StatusBadRequest, "BAD_REQUEST", reason, args...)
}

func forbidden(reason string) *Error { return newError(http.StatusForbidden, "FORBIDDEN", reason) }

func notFound(reason string) *Error { return newError(http.StatusNotFound, "NOT_FOUND", reason) }

var errUnauthorized = newError(http.StatusUnauthorized, "UNAUTHORIZED", "")

// errorMapping ties a domain sentinel to its status, code and reason.
type errorMapping struct {
	err    error
	status int
	code   string
	reason string
}

// errorTables are where rules meet the wire: one table per resource group
// (errors_<group>.go), consulted in order.
var errorTables = [][]errorMapping{coreErrors, projectErrors, workflowErrors, issueErrors,
	webhookErrors, integrationErrors, auditErrors, jobErrors, sprintErrors, reportErrors,
	commentErrors, attachmentErrors, notificationErrors, ssoErrors, automationErrors, serviceDeskErrors, customFieldErrors, taskErrors}

// errorMappers handle domain error structs that carry data for the message.
var errorMappers = []func(error) *Error{guardError, commentEmpty, sprintDateOrder, attachmentTooLarge, automationInvalid,
	customFieldValueError}

// coreErrors maps the account and store sentinels.
var coreErrors = []errorMapping{
	{auth.ErrInvalidCredentials, 403, "FORBIDDEN", "INVALID_CREDENTIALS"},
	{auth.ErrInvalidRefreshToken, 403, "FORBIDDEN", "INVALID_REFRESH_TOKEN"},
	{auth.ErrRegistrationDisabled, 403, "FORBIDDEN", "REGISTRATION_DISABLED"},
	{auth.ErrInvalidCurrentPassword, 403, "FORBIDDEN", "INVALID_CURRENT_PASSWORD"},
	{auth.ErrDuplicateEmail, 409, "CONFLICT", "DUPLICATE_EMAIL"},
	{auth.ErrNoPassword, 409, "CONFLICT", "NO_PASSWORD"},
	{auth.ErrLastAdmin, 409, "CONFLICT", "LAST_ADMIN"},
	{auth.ErrUserDeleted, 409, "CONFLICT", "USER_DELETED"},
	{auth.ErrUserNotFound, 404, "NOT_FOUND", "USER_NOT_FOUND"},
	{auth.ErrTokenNotFound, 404, "NOT_FOUND", "TOKEN_NOT_FOUND"},
	{auth.ErrTokenExpired, 401, "UNAUTHORIZED", "TOKEN_EXPIRED"},
	{auth.ErrUnauthenticated, 401, "UNAUTHORIZED", ""},
	{store.ErrNotFound, 404, "NOT_FOUND", ""},
	{store.ErrUnavailable, 503, "UNAVAILABLE", ""},
}

// toAPIError classifies any error; unknown ones become a bare 500.
func toAPIError(err error) *Error {
	var ae *Error
	if errors.As(err, &ae) {
		return ae
	}
	var rl *auth.RateLimitError
	if errors.As(err, &rl) {
		e := newError(http.StatusTooManyRequests, "RATE_LIMITED", "", "seconds", strconv.Itoa(rl.RetryAfterSeconds()))
		e.RetryAfter = rl.RetryAfterSeconds()
		return e
	}
	var fe *fiber.Error
	if errors.As(err, &fe) {
		switch fe.Code {
		case http.StatusNotFound:
			return notFound("ROUTE_NOT_FOUND")
		case http.StatusMethodNotAllowed:
			return newError(http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "")
		case http.StatusRequestEntityTooLarge:
			return newError(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", "")
		case http.StatusBadRequest, http.StatusUnprocessableEntity:
			return badRequest("")
		case http.StatusRequestTimeout:
			return newError(http.StatusServiceUnavailable, "UNAVAILABLE", "")
		}
	}
	for _, m := range errorMappers {
		if e := m(err); e != nil {
			return e
		}
	}
	for _, table := range errorTables {
		for _, m := range table {
			if errors.Is(err, m.err) {
				return newError(m.status, m.code, m.reason)
			}
		}
	}
	var ce *store.ConstraintError
	if errors.As(store.Translate(err), &ce) && (ce.Kind == "unique" || ce.Kind == "foreign_key") {
		return newError(http.StatusConflict, "CONFLICT", "")
	}
	if errors.Is(store.Translate(err), store.ErrInvalidInput) {
		return badRequest("")
	}
	if errors.Is(store.Translate(err), store.ErrUnavailable) {
		return newError(http.StatusServiceUnavailable, "UNAVAILABLE", "")
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return newError(http.StatusServiceUnavailable, "UNAVAILABLE", "")
	}
	return newError(http.StatusInternalServerError, "INTERNAL_ERROR", "")
}

// problem is the error body (docs/api-conventions.md#errors; Problem in
// api/openapi/00-core.yaml).
type problem struct {
	Code    string            `json:"code"`
	Message string            `json:"message"`
	Details map[string]string `json:"details"`
	Reason  string            `json:"reason,omitempty"`
	Type    string            `json:"type"`
	Title   string            `json:"title"`
	Status  int               `json:"status"`
	Errors  []problemField    `json:"errors,omitempty"`
}

type problemField struct {
	Field   string `json:"field"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// writeError renders err in the caller's language. 5xx details go to the log only.
func writeError(c *fiber.Ctx, log *failureLog, err error) {
	e := toAPIError(err)
	if e.Status >= 500 {
		log.failed(c.UserContext(), c.Method(), c.Path(), e.Status, err)
	}
	lang := language(c)
	body := problem{
		Code: e.Code, Message: locale.T(lang, e.Key, e.Args...), Details: map[string]string{}, Reason: e.Reason,
		Type: "about:blank", Title: http.StatusText(e.Status), Status: e.Status,
	}
	for k, v := range e.Details {
		body.Details[k] = v
	}
	if e.Code == "VALIDATION_ERROR" {
		body.Errors = make([]problemField, 0, len(e.Fields))
		for _, f := range e.Fields {
			msg := locale.T(lang, f.Key, f.Args...)
			body.Details[f.Field] = msg
			body.Errors = append(body.Errors, problemField{Field: f.Field, Code: f.Code, Message: msg})
		}
	}
	if e.Status == http.StatusUnauthorized {
		c.Set(fiber.HeaderWWWAuthenticate, "Bearer")
	}
	if e.RetryAfter > 0 {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(e.RetryAfter))
	}
	ct := fiber.MIMEApplicationJSON
	if prefersProblemJSON(c.Get(fiber.HeaderAccept)) {
		ct = "application/problem+json"
	}
	c.Status(e.Status)
	if err := c.JSON(body); err != nil {
		log.log.Error("write error body", "err", err)
	}
	c.Set(fiber.HeaderContentType, ct)
}

// prefersProblemJSON is true when Accept names application/problem+json ahead of (or
// without) application/json.
func prefersProblemJSON(accept string) bool {
	p := strings.Index(accept, "application/problem+json")
	if p < 0 {
		return false
	}
	j := strings.Index(accept, "application/json")
	return j < 0 || p < j
}
