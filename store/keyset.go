package store

import (
	"time"

	"github.com/google/uuid"
)

// After is the last row a keyset walk handed out, in a list ordered by (a timestamp,
// an id): the next page is the rows after it in the list's order, found by a row
// comparison on the order's index rather than an offset (docs/api-conventions.md#pages).
type After struct {
	Time time.Time
	ID   uuid.UUID
}
