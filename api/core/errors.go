package core

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/domain/idempotency"
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

// NewError is an API error of status and code with reason (may be empty), its message
// the reason's when the catalog has one, else the code's.
func NewError(status int, code, reason string, args ...string) *Error {
	key := "error." + code
	if reason != "" {
		if _, ok := locale.Raw(locale.English, "reason."+reason); ok {
			key = "reason." + reason
		}
	}
	return &Error{Status: status, Code: code, Reason: reason, Key: key, Args: args}
}

// BadRequest is 400 BAD_REQUEST with reason.
func BadRequest(reason string, args ...string) *Error {
	return NewError(http.StatusBadRequest, "BAD_REQUEST", reason, args...)
}

// Forbidden is 403 FORBIDDEN with reason.
func Forbidden(reason string) *Error { return NewError(http.StatusForbidden, "FORBIDDEN", reason) }

// NotFound is 404 NOT_FOUND with reason.
func NotFound(reason string) *Error { return NewError(http.StatusNotFound, "NOT_FOUND", reason) }

// ErrUnauthorized is 401 UNAUTHORIZED without a reason.
var ErrUnauthorized = NewError(http.StatusUnauthorized, "UNAUTHORIZED", "")

// ErrorMapping ties a domain sentinel to its status, code and reason.
type ErrorMapping struct {
	Err    error
	Status int
	Code   string
	Reason string
}

// Mapper renders a domain error struct that carries data for the message; nil: not its
// error.
type Mapper func(error) *Error

// ErrorTable is one area's part of where rules meet the wire
// (docs/api-conventions.md#errors): its sentinels and its mappers.
type ErrorTable struct {
	Mappings []ErrorMapping
	Mappers  []Mapper
}

// Errors classifies every error a handler returns: the mappers of every table first,
// then the mappings, each in the order of the tables.
type Errors struct {
	tables []ErrorTable
}

// NewErrors consults Table (the account and store sentinels) and then tables in order.
func NewErrors(tables ...ErrorTable) *Errors {
	return &Errors{tables: append([]ErrorTable{Table}, tables...)}
}

// Tables are the tables consulted, Table first.
func (t *Errors) Tables() []ErrorTable { return t.tables }

// Table maps the account, idempotency and store sentinels; every Errors consults it
// first.
var Table = ErrorTable{Mappings: []ErrorMapping{
	{Err: auth.ErrInvalidCredentials, Status: 403, Code: "FORBIDDEN", Reason: "INVALID_CREDENTIALS"},
	{Err: auth.ErrInvalidRefreshToken, Status: 403, Code: "FORBIDDEN", Reason: "INVALID_REFRESH_TOKEN"},
	{Err: auth.ErrRegistrationDisabled, Status: 403, Code: "FORBIDDEN", Reason: "REGISTRATION_DISABLED"},
	{Err: auth.ErrInvalidCurrentPassword, Status: 403, Code: "FORBIDDEN", Reason: "INVALID_CURRENT_PASSWORD"},
	{Err: auth.ErrDuplicateEmail, Status: 409, Code: "CONFLICT", Reason: "DUPLICATE_EMAIL"},
	{Err: auth.ErrNoPassword, Status: 409, Code: "CONFLICT", Reason: "NO_PASSWORD"},
	{Err: auth.ErrLastAdmin, Status: 409, Code: "CONFLICT", Reason: "LAST_ADMIN"},
	{Err: auth.ErrUserDeleted, Status: 409, Code: "CONFLICT", Reason: "USER_DELETED"},
	{Err: auth.ErrUserNotFound, Status: 404, Code: "NOT_FOUND", Reason: "USER_NOT_FOUND"},
	{Err: auth.ErrTokenNotFound, Status: 404, Code: "NOT_FOUND", Reason: "TOKEN_NOT_FOUND"},
	{Err: auth.ErrTokenExpired, Status: 401, Code: "UNAUTHORIZED", Reason: "TOKEN_EXPIRED"},
	{Err: auth.ErrUnauthenticated, Status: 401, Code: "UNAUTHORIZED", Reason: ""},
	{Err: idempotency.ErrInProgress, Status: 409, Code: "CONFLICT", Reason: "IDEMPOTENCY_IN_PROGRESS"},
	{Err: idempotency.ErrNotStored, Status: 409, Code: "CONFLICT", Reason: "IDEMPOTENCY_ANSWER_NOT_KEPT"},
	{Err: idempotency.ErrKeyReused, Status: 422, Code: "UNPROCESSABLE_ENTITY", Reason: "IDEMPOTENCY_KEY_REUSED"},
	{Err: store.ErrNotFound, Status: 404, Code: "NOT_FOUND", Reason: ""},
	{Err: store.ErrUnavailable, Status: 503, Code: "UNAVAILABLE", Reason: ""},
}}

// ToAPI classifies any error; unknown ones become a bare 500.
func (t *Errors) ToAPI(err error) *Error {
	var ae *Error
	if errors.As(err, &ae) {
		return ae
	}
	var rl *auth.RateLimitError
	if errors.As(err, &rl) {
		e := NewError(http.StatusTooManyRequests, "RATE_LIMITED", "", "seconds", strconv.Itoa(rl.RetryAfterSeconds()))
		e.RetryAfter = rl.RetryAfterSeconds()
		return e
	}
	var fe *fiber.Error
	if errors.As(err, &fe) {
		switch fe.Code {
		case http.StatusNotFound:
			return NotFound("ROUTE_NOT_FOUND")
		case http.StatusMethodNotAllowed:
			return NewError(http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "")
		case http.StatusRequestEntityTooLarge:
			return NewError(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", "")
		case http.StatusBadRequest, http.StatusUnprocessableEntity:
			return BadRequest("")
		case http.StatusRequestTimeout:
			return NewError(http.StatusServiceUnavailable, "UNAVAILABLE", "")
		}
	}
	for _, table := range t.tables {
		for _, m := range table.Mappers {
			if e := m(err); e != nil {
				return e
			}
		}
	}
	for _, table := range t.tables {
		for _, m := range table.Mappings {
			if errors.Is(err, m.Err) {
				return NewError(m.Status, m.Code, m.Reason)
			}
		}
	}
	var ce *store.ConstraintError
	if errors.As(store.Translate(err), &ce) && (ce.Kind == "unique" || ce.Kind == "foreign_key") {
		return NewError(http.StatusConflict, "CONFLICT", "")
	}
	if errors.Is(store.Translate(err), store.ErrInvalidInput) {
		return BadRequest("")
	}
	if errors.Is(store.Translate(err), store.ErrUnavailable) {
		return NewError(http.StatusServiceUnavailable, "UNAVAILABLE", "")
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return NewError(http.StatusServiceUnavailable, "UNAVAILABLE", "")
	}
	return NewError(http.StatusInternalServerError, "INTERNAL_ERROR", "")
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

// Write renders err in the caller's language. 5xx details go to log only.
func (t *Errors) Write(c *fiber.Ctx, log *FailureLog, err error) {
	e := t.ToAPI(err)
	if e.Status >= 500 {
		log.Failed(c.UserContext(), c.Method(), c.Path(), e.Status, err)
	}
	lang := Language(c)
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
