package store

import (
	"context"
	"errors"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrNotFound is returned when a single row was asked for and none exists.
var ErrNotFound = errors.New("store: not found")

// ErrUnavailable wraps failures to reach the database at all; the API answers 503.
var ErrUnavailable = errors.New("store: database unavailable")

// ErrInvalidInput wraps data errors Postgres raised on input the edge let through.
var ErrInvalidInput = errors.New("store: invalid input")

// ConstraintError is a unique, foreign-key or check violation, named by its constraint
// so the domain can turn it into its own error.
type ConstraintError struct {
	Kind       string // "unique", "foreign_key", "check"
	Constraint string
	Err        error
}

func (e *ConstraintError) Error() string { return "store: " + e.Kind + " violation on " + e.Constraint }
func (e *ConstraintError) Unwrap() error { return e.Err }

// Translate maps driver errors to the store's: no rows → ErrNotFound, 23xxx → a
// ConstraintError, connection failures → ErrUnavailable. Others pass through.
func Translate(err error) error {
	if err == nil {
		return nil
	}
	if IsNotFound(err) {
		return ErrNotFound
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505":
			return &ConstraintError{Kind: "unique", Constraint: pgErr.ConstraintName, Err: err}
		case "23503":
			return &ConstraintError{Kind: "foreign_key", Constraint: pgErr.ConstraintName, Err: err}
		case "23514":
			return &ConstraintError{Kind: "check", Constraint: pgErr.ConstraintName, Err: err}
		case "22021", "22P05", "22001", "22003", "22007", "22008", "22P02":
			// Bad text encoding, too long, out of range or unparsable input that slipped past
			// validation: the caller's fault, never a 500.
			return errors.Join(ErrInvalidInput, err)
		case "57P01", "57P02", "57P03", "53300":
			return errors.Join(ErrUnavailable, err)
		case "57014":
			// The statement timeout (or a cancel request) ended the statement: the server
			// could not answer in time, as when the request deadline runs out.
			return errors.Join(ErrUnavailable, err)
		case "40P01", "40001":
			// A deadlock or serialization failure: Postgres rolled the transaction back and
			// nothing changed; trying again is the answer, as with a server going away.
			return errors.Join(ErrUnavailable, err)
		}
		return err
	}
	var connErr *pgconn.ConnectError
	var netErr net.Error
	if errors.As(err, &connErr) || errors.As(err, &netErr) {
		if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			return errors.Join(ErrUnavailable, err)
		}
	}
	return err
}

// IsUnique reports whether err is a unique violation of the named constraint
// (any unique constraint when name is empty).
func IsUnique(err error, name string) bool {
	var ce *ConstraintError
	if !errors.As(Translate(err), &ce) {
		return false
	}
	return ce.Kind == "unique" && (name == "" || ce.Constraint == name)
}
