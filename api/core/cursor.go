package core

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/taskweave/taskweave/store"
)

// Keyset cursors (docs/api-conventions.md#pages). Beside page/size every paged list takes
// `cursor`: empty starts a walk, else it is a page's nextCursor, the position after
// that page's last row. A cursor is the list's scope (which list, which order) and the
// last row's sort key and id, as JSON, signed with an HMAC whose key every replica
// derives from TW_JWT_SECRET (CursorKey), in URL-safe base64: opaque to clients, and any
// other string (tampered, cut, from another list or order) is 400 INVALID_CURSOR.

// cursorKeyLocal holds the request's cursor key (Config.CursorKey, set by the edge).
const cursorKeyLocal = "cursorKey"

// cursorMAC is how much of the HMAC-SHA256 a cursor carries.
const cursorMAC = 16

// maxCursor bounds the length of a cursor parameter: far above any cursor handed out.
const maxCursor = 512

// CursorKey derives the cursor signing key from the JWT secret every replica shares.
func CursorKey(secret string) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("taskweave page cursor v1"))
	return m.Sum(nil)
}

// SetCursorKey makes key the request's cursor key (the edge calls it on every request).
func SetCursorKey(c *fiber.Ctx, key []byte) { c.Locals(cursorKeyLocal, key) }

func cursorKey(c *fiber.Ctx) []byte {
	if k, _ := c.Locals(cursorKeyLocal).([]byte); len(k) > 0 {
		return k
	}
	return CursorKey("")
}

// errInvalidCursor answers a cursor this list did not hand out.
func errInvalidCursor() error { return BadRequest("INVALID_CURSOR") }

// Cursor is a verified cursor of a request: the scope it was handed out for and the
// last row's keys. A walk's start has neither.
type Cursor struct {
	Scope string
	Keys  []string
}

// Start is true for `cursor=` (a walk from the first row).
func (c *Cursor) Start() bool { return c == nil || c.Scope == "" }

func sign(key []byte, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(payload)
	return m.Sum(nil)[:cursorMAC]
}

// EncodeCursor is the cursor after a row of scope whose keys are keys.
func EncodeCursor(c *fiber.Ctx, scope string, keys ...string) string {
	payload, _ := json.Marshal(append([]string{scope}, keys...))
	return base64.RawURLEncoding.EncodeToString(append(payload, sign(cursorKey(c), payload)...))
}

// parseCursor verifies a cursor parameter: "" starts a walk.
func parseCursor(c *fiber.Ctx, v string) (*Cursor, error) {
	if v == "" {
		return &Cursor{}, nil
	}
	if len(v) > maxCursor {
		return nil, errInvalidCursor()
	}
	raw, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || len(raw) <= cursorMAC {
		return nil, errInvalidCursor()
	}
	payload, mac := raw[:len(raw)-cursorMAC], raw[len(raw)-cursorMAC:]
	if !hmac.Equal(mac, sign(cursorKey(c), payload)) {
		return nil, errInvalidCursor()
	}
	var parts []string
	if json.Unmarshal(payload, &parts) != nil || len(parts) < 2 || parts[0] == "" {
		return nil, errInvalidCursor()
	}
	return &Cursor{Scope: parts[0], Keys: parts[1:]}, nil
}

// After is the position a cursor request continues after, for a list of scope whose
// rows are keyed by n values: nil at a walk's start (and without a cursor); a cursor of
// another scope or shape is INVALID_CURSOR.
func (p PageRequest) After(scope string, n int) ([]string, error) {
	if p.Cursor.Start() {
		return nil, nil
	}
	if p.Cursor.Scope != scope || len(p.Cursor.Keys) != n {
		return nil, errInvalidCursor()
	}
	return p.Cursor.Keys, nil
}

// AfterTimeID is After for the lists ordered by (a timestamp, a UUID id): the last
// row's time and id, or nil.
func (p PageRequest) AfterTimeID(scope string) (*store.After, error) {
	keys, err := p.After(scope, 2)
	if keys == nil || err != nil {
		return nil, err
	}
	t, err := time.Parse(time.RFC3339Nano, keys[0])
	id, err2 := uuid.Parse(keys[1])
	if err != nil || err2 != nil {
		return nil, errInvalidCursor()
	}
	return &store.After{Time: t, ID: id}, nil
}

// TimeIDKeys are the cursor keys of a row ordered by (t, id).
func TimeIDKeys(t time.Time, id uuid.UUID) []string { return []string{Instant(t), id.String()} }

// AfterInt is After for lists ordered by one integer (a job id).
func (p PageRequest) AfterInt(scope string) (*int64, error) {
	keys, err := p.After(scope, 1)
	if keys == nil || err != nil {
		return nil, err
	}
	n, err := strconv.ParseInt(keys[0], 10, 64)
	if err != nil {
		return nil, errInvalidCursor()
	}
	return &n, nil
}

// Next is the nextCursor of a page that read rows rows (Limit of them at most): in a
// cursor walk, a cursor when the extra row says another page follows; by page number,
// one when a later page holds rows, so a client may switch to cursors. keys gives the
// keys of the page's last row (index Size-1 or less); nil: no next page.
func (p PageRequest) Next(c *fiber.Ctx, scope string, rows, total int, keys func(last int) []string) *string {
	last := min(rows, p.Size) - 1
	more := rows > p.Size
	if p.Cursor == nil {
		more = p.Offset()+rows < total
	}
	if last < 0 || !more {
		return nil
	}
	s := EncodeCursor(c, scope, keys(last)...)
	return &s
}

// Trim cuts a cursor page's extra row (Limit reads one more than Size).
func Trim[T any](rows []T, p PageRequest) []T {
	if len(rows) > p.Size {
		return rows[:p.Size]
	}
	return rows
}
