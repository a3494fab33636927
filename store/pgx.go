package store

import (
	"database/sql"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// The helpers below are how code outside store hands ids to pgx and reads them back
// (docs/design.md#who-may-use-pgx-directly): a uuid.UUID is a driver.Valuer and an sql.Scanner, so pgx would
// format every id as text and parse it back; 16 raw bytes it encodes and decodes as a
// binary uuid directly.

// UUID is id as an argument of a pgx statement (also through database/sql on the pgx
// driver, which passes it on unchanged).
func UUID(id uuid.UUID) [16]byte { return id }

// UUIDs is ids as an argument of a pgx statement (a uuid[]).
func UUIDs(ids []uuid.UUID) [][16]byte {
	out := make([][16]byte, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// NullUUID is an optional id as an argument of a pgx statement: nil is NULL.
func NullUUID(id *uuid.UUID) pgtype.UUID {
	if id == nil {
		return pgtype.UUID{}
	}
	return pgtype.UUID{Bytes: *id, Valid: true}
}

// UUIDDest is a pgx scan destination that reads a non-null uuid column into id.
func UUIDDest(id *uuid.UUID) *[16]byte { return (*[16]byte)(id) }

// UUIDPtr is a nullable uuid column, scanned into a pgtype.UUID, as an optional id.
func UUIDPtr(u pgtype.UUID) *uuid.UUID {
	if !u.Valid {
		return nil
	}
	id := uuid.UUID(u.Bytes)
	return &id
}

// IsNotFound reports whether err means that a single row was asked for and none
// exists, whichever driver answered (bun and database/sql, pgx) and whether or not the
// error went through Translate.
func IsNotFound(err error) bool {
	return errors.Is(err, ErrNotFound) || errors.Is(err, sql.ErrNoRows) || errors.Is(err, pgx.ErrNoRows)
}
