package issue

import (
	"strconv"
	"time"
)

// Orders of the list, as a cursor names them (Filter.OrderName).
const (
	OrderNumber  = "number"
	OrderUpdated = "updatedAt"
	OrderDue     = "dueDate"
)

// ListKey is the position of a keyset walk (a cursor): the sort key and number of the
// last issue handed out. Only the order's member is read: Number always, Updated in
// OrderUpdated, Due in OrderDue.
type ListKey struct {
	Number  int
	Updated time.Time
	Due     time.Time
}

// OrderName is the list order f sorts by; "" for an order a cursor cannot walk (a
// computed one, such as a search rank: Keyset is false).
func (f Filter) OrderName() string {
	switch {
	case f.Q != "" && f.Sort == "":
		return "" // by rank: no key to walk
	case f.Sort == SortUpdated:
		return OrderUpdated
	case f.Overdue && f.Sort == "":
		return OrderDue
	case f.Sort == "" || f.Sort == SortCreated:
		return OrderNumber
	}
	return ""
}

// Keyset is true when f's order can be walked by cursor (it is one of the orders above).
func (f Filter) Keyset() bool { return f.OrderName() != "" }

// KeyOf is v's position in f's order.
func (f Filter) KeyOf(v *View) ListKey {
	k := ListKey{Number: v.Number, Updated: v.UpdatedAt}
	if v.DueDate != nil {
		k.Due = *v.DueDate
	}
	return k
}

// CursorKeys are k as the strings of a cursor, in f's order.
func (f Filter) CursorKeys(k ListKey) []string {
	n := strconv.Itoa(k.Number)
	switch f.OrderName() {
	case OrderUpdated:
		return []string{k.Updated.UTC().Format(time.RFC3339Nano), n}
	case OrderDue:
		return []string{k.Due.Format(time.DateOnly), n}
	}
	return []string{n}
}

// ParseCursorKeys reads CursorKeys back; ok is false when they do not fit f's order.
func (f Filter) ParseCursorKeys(keys []string) (k ListKey, ok bool) {
	if len(keys) == 0 {
		return k, false
	}
	n, err := strconv.Atoi(keys[len(keys)-1])
	if err != nil || n < 1 {
		return k, false
	}
	k.Number = n
	switch f.OrderName() {
	case OrderUpdated:
		if len(keys) != 2 {
			return k, false
		}
		k.Updated, err = time.Parse(time.RFC3339Nano, keys[0])
	case OrderDue:
		if len(keys) != 2 {
			return k, false
		}
		k.Due, err = time.Parse(time.DateOnly, keys[0])
	default:
		if len(keys) != 1 {
			return k, false
		}
	}
	return k, err == nil
}

// keyset is the condition on alias t that keeps the issues after f.After in f's order:
// one row comparison on the order's columns, which its index answers as a range
// (issues_project_updated; the number's unique index).
func (f Filter) keyset(ps *params, t string) string {
	k := f.After
	n := ps.add(k.Number)
	switch f.OrderName() {
	case OrderUpdated:
		return "(" + t + ".updated_at, " + t + ".number) < (" + ps.add(k.Updated) + "::timestamptz, " + n + "::int)"
	case OrderDue:
		return "(" + t + ".due_date, " + t + ".number) > (" + ps.add(k.Due.Format(time.DateOnly)) + "::date, " + n + "::int)"
	}
	return t + ".number > " + n + "::int"
}
