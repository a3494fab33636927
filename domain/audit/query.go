package audit

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/taskweave/taskweave/store"
)

// Filter narrows an audit list or export; zero members do not filter. From is
// inclusive and To exclusive, so consecutive windows [a, b), [b, c) never share a row.
type Filter struct {
	From      *time.Time
	To        *time.Time
	UserID    *uuid.UUID
	ProjectID *uuid.UUID
	Action    string
	// Level is a stored level: ALL selects the rows of level ALL (views), it is not a
	// wildcard.
	Level Level
	// since and before bound List's windows of months (within), unset in every Filter
	// the API builds.
	since, before *time.Time
}

// eventColumns are the audit_events columns in the order scanEvent reads them.
const eventColumns = `id, "timestamp", user_id, user_email, project_id, org_id, action, level,
	resource_type, resource_id, details, ip_address, user_agent`

// pageColumns are eventColumns of the page's rows, aliased e (pageQuery).
const pageColumns = `e.id, e."timestamp", e.user_id, e.user_email, e.project_id, e.org_id, e.action, e.level,
	e.resource_type, e.resource_id, e.details, e.ip_address, e.user_agent`

// eventOrder is the list and export order: newest first, the id breaking ties so pages
// never overlap or skip a row.
const eventOrder = `ORDER BY "timestamp" DESC, id DESC`

// where renders the filter as a WHERE clause with $n placeholders and its arguments.
// Every condition has an index (see migrations 0001 and 0006). The months the filter
// can match are added as constants too (f.months), so that the plan holds only their
// partitions.
func (f Filter) where() (string, []any) {
	conds := f.months()
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, strings.Replace(cond, "?", "$"+strconv.Itoa(len(args)), 1))
	}
	if f.From != nil {
		add(`"timestamp" >= ?`, *f.From)
	}
	if f.To != nil {
		add(`"timestamp" < ?`, *f.To)
	}
	if f.UserID != nil {
		add("user_id = ?", *f.UserID)
	}
	if f.ProjectID != nil {
		add("project_id = ?", *f.ProjectID)
	}
	if f.Action != "" {
		add("action = ?", f.Action)
	}
	if f.Level != "" {
		add("level = ?", string(f.Level))
	}
	if len(conds) == 0 {
		return "", nil
	}
	return "WHERE " + strings.Join(conds, " AND "), args
}

// within keeps only the events from since on (nil: from the first) and before before
// (nil: to the last); it is not a filter of the API but one of List's windows of
// months (listAt).
func (f Filter) within(since, before *time.Time) Filter {
	f.since, f.before = since, before
	return f
}

// months are the bounds of the months f can match, as constants: "timestamp" from the
// start of From's month (or of the window, f.since), before the end of To's (or the
// window's end, f.before, a month's start). They
// repeat the filter's own bounds, so they change no result; as constants they let the
// planner leave out every other month's partition when it plans the statement, the
// generic plan of a prepared statement too. With From and To as parameters alone, a
// generic plan holds every partition and prunes them only when it runs, after
// Postgres 15 has locked each one and opened its indexes: a statement's fixed cost
// then grows with the months of history (docs/performance.md#audit-partitions). The
// text changes once a month at most, so each shape is still prepared once.
func (f Filter) months() []string {
	var c []string
	lo := f.since
	if f.From != nil && (lo == nil || f.From.After(*lo)) {
		lo = f.From
	}
	if lo != nil {
		if m := monthStart(*lo); m.Year() >= 1 {
			c = append(c, `"timestamp" >= '`+m.Format(time.RFC3339)+`'`)
		}
	}
	var hi *time.Time
	if f.To != nil {
		if m := monthStart(*f.To).AddDate(0, 1, 0); m.Year() <= 9999 {
			hi = &m
		}
	}
	if f.before != nil && (hi == nil || f.before.Before(*hi)) {
		hi = f.before
	}
	if hi != nil {
		c = append(c, `"timestamp" < '`+hi.Format(time.RFC3339)+`'`)
	}
	return c
}

// countQuery counts the events of f, at most limit of them (store.PageCountLimit): a
// subquery with a LIMIT, so a count over a project's million rows stops early. The
// subquery walks the list order, so the count reads the same index entries as the
// page, newest first, from the filter's index. Unordered, the planner may scan a month's
// partition in the hope of finding the rows early; a project whose rows are not spread
// evenly over the month then costs the whole partition (200 ms p50 at 250,000 issues,
// docs/performance.md#the-scale-bench). It also returns the oldest and newest instant
// of the rows it counted (null when none), which tell listAt the months a page within
// them lies in.
func (f Filter) countQuery(limit int) (string, []any) {
	where, args := f.where()
	return `SELECT count(*), min("timestamp"), max("timestamp") FROM (SELECT "timestamp" FROM audit_events ` + where + " " + eventOrder +
		" LIMIT " + strconv.Itoa(limit) + ") AS matches", args
}

// pageQuery selects one page of f's events in list order. LIMIT and OFFSET are written
// as literals (they are ints): the planner then sees the real row goal and walks the
// ordered index instead of sorting every match, which a generic plan with a parameter
// LIMIT may not do.
//
// The page's keys ("timestamp", id) are found first, by the filter's index alone (an
// index-only scan where one index answers the whole filter: every filter's index ends
// with them), and only the page's rows are
// then read, each by one probe of its month's time index (a LATERAL with LIMIT 1, so
// the planner cannot flatten it into a join; the probe's month is pruned at run time).
// Selecting whole rows straight from the filter, the planner may walk a month's time
// index testing each row's project on the heap, in the hope that the project's rows
// are spread over the month: a project whose rows come in bursts then costs the whole
// month (86,000 rows read for page 0 of a big project at 250,000 issues, 144 ms
// against 3.4 ms, docs/performance.md#the-scale-bench); the keys alone are cheaper by
// the filter's index whatever the project's share of a month.
//
// after (a cursor walk) keeps the events after that one in list order, by a row
// comparison the ordered index answers, instead of an offset.
func (f Filter) pageQuery(after *store.After, offset, limit int) (string, []any) {
	where, args := f.where()
	if after != nil {
		if where == "" {
			where = "WHERE "
		} else {
			where += " AND "
		}
		args = append(args, after.Time, after.ID)
		where += `("timestamp", id) < ($` + strconv.Itoa(len(args)-1) + `, $` + strconv.Itoa(len(args)) + `)`
	}
	// The probe holds the months' bounds too: the keys are within them, and the probe's
	// plan then holds only their partitions.
	probe := ""
	for _, c := range f.months() {
		probe += " AND e." + c
	}
	return "SELECT " + pageColumns + `
FROM (SELECT "timestamp", id FROM audit_events ` + where + " " + eventOrder +
		" LIMIT " + strconv.Itoa(limit) + " OFFSET " + strconv.Itoa(offset) + `) AS k
CROSS JOIN LATERAL (SELECT * FROM audit_events AS e WHERE e."timestamp" = k."timestamp" AND e.id = k.id` + probe + ` LIMIT 1) AS e
ORDER BY k."timestamp" DESC, k.id DESC`, args
}

// exportQuery selects every event of f in list order.
func (f Filter) exportQuery() (string, []any) {
	where, args := f.where()
	return "SELECT " + eventColumns + " FROM audit_events " + where + " " + eventOrder, args
}

// List returns one page of matching events, newest first, and the number of matching
// events counted up to store.PageCountLimit(offset); exact is false when the count
// stopped there (more rows match). By page number without From, the count is taken in
// windows of months, newest first, and the page read in the months that hold it
// (listAt).
func List(ctx context.Context, pool *pgxpool.Pool, f Filter, after *store.After, offset, limit int) (events []store.AuditEvent, total int, exact bool, err error) {
	return listAt(ctx, pool, f, after, offset, limit, time.Now())
}

// listWindows are the windows of months listAt counts in, newest first, as months
// before now's: the month before now's and every later one (the partitions ahead and
// the default one too), then the five months before those, then every earlier month.
// Each is one count statement that plans only its months' partitions but the last.
var listWindows = []int{1, 6}

// listCount is what a count statement found in one window: n rows, the oldest and
// newest at first and last (zero when n is 0), and how many rows the newer windows hold
// (ahead).
type listCount struct {
	n, ahead    int64
	first, last time.Time
}

// listAt is List at the instant now. Without From and by page number (page 0 of a
// project's log is the commonest read), it counts in windows of months (listWindows),
// newest first, each window's count bounded by what the bound still needs, and stops
// once the bound is reached: the newest events come first in list order, so the
// windows' counts add up to the count over every month. The page's rows then lie
// between the oldest and the newest counted row of the windows that hold the page's
// positions: the page statement reads those months alone (from the first day of the
// oldest's month to the end of the newest's), with the offset less the rows of the
// newer windows. Every statement plans and opens only its months' partitions, so a
// project whose newest rows are months old costs a statement more, not every month's
// partitions in two statements (docs/performance.md#audit-partitions). Otherwise (a
// cursor walk, From set, a page longer than the bound's lead) the count and the page
// read every month f can match.
func listAt(ctx context.Context, pool *pgxpool.Pool, f Filter, after *store.After, offset, limit int, now time.Time) (events []store.AuditEvent, total int, exact bool, err error) {
	countLimit := store.PageCountLimit(offset)
	var n int64
	if f.From == nil && f.since == nil && f.before == nil && after == nil && limit <= store.PageCountAhead {
		if f, offset, n, err = windowPage(ctx, pool, f, offset, limit, now); err != nil {
			return nil, 0, false, err
		}
	} else {
		c, err := countIn(ctx, pool, f, countLimit)
		if err != nil {
			return nil, 0, false, err
		}
		n = c.n
	}
	total, exact = int(n), n < int64(countLimit)
	if total == 0 || offset >= total {
		return []store.AuditEvent{}, total, exact, nil
	}
	return listPage(ctx, pool, f, after, offset, limit, total, exact)
}

// countIn runs f's count statement bounded at limit.
func countIn(ctx context.Context, pool *pgxpool.Pool, f Filter, limit int) (listCount, error) {
	q, args := f.countQuery(limit)
	var c listCount
	var first, last *time.Time
	if err := pool.QueryRow(ctx, q, args...).Scan(&c.n, &first, &last); err != nil {
		return c, fmt.Errorf("count audit events: %w", err)
	}
	if first != nil && last != nil {
		c.first, c.last = *first, *last
	}
	return c, nil
}

// windowPage counts f's events in listAt's windows of months, newest first, until the
// count reaches store.PageCountLimit(offset), and returns n, the events counted, and the
// filter and offset of the page at offset: f within the months of the windows holding
// the page, the offset less the events of newer windows. When the page lies past n the
// filter is f and the offset the one given.
func windowPage(ctx context.Context, pool *pgxpool.Pool, f Filter, offset, limit int, now time.Time) (Filter, int, int64, error) {
	countLimit := int64(store.PageCountLimit(offset))
	var n int64
	var counts []listCount
	var before *time.Time
	for k := 0; k <= len(listWindows) && n < countLimit; k++ {
		var since *time.Time
		if k < len(listWindows) {
			s := monthStart(now).AddDate(0, -listWindows[k], 0)
			since = &s
		}
		if since == nil || f.To == nil || f.To.After(*since) {
			c, err := countIn(ctx, pool, f.within(since, before), int(countLimit-n))
			if err != nil {
				return f, offset, 0, err
			}
			c.ahead = n
			n += c.n
			counts = append(counts, c)
		}
		before = since
	}
	// The windows holding the page's positions, offset to its last (within n).
	end := min(int64(offset+limit), n)
	var newest, oldest *listCount
	for i := range counts {
		c := &counts[i]
		if c.n == 0 || c.ahead+c.n <= int64(offset) || c.ahead >= end {
			continue
		}
		if newest == nil {
			newest = c
		}
		oldest = c
	}
	if newest == nil {
		return f, offset, n, nil
	}
	lo, hi := monthStart(oldest.first), monthStart(newest.last).AddDate(0, 1, 0)
	return f.within(&lo, &hi), offset - int(newest.ahead), n, nil
}

// listPage reads listAt's page of f, which count found total events of.
func listPage(ctx context.Context, pool *pgxpool.Pool, f Filter, after *store.After, offset, limit, total int, exact bool) ([]store.AuditEvent, int, bool, error) {
	q, args := f.pageQuery(after, offset, limit)
	rows, err := pool.Query(ctx, q, args...)
	if err != nil {
		return nil, 0, false, fmt.Errorf("list audit events: %w", err)
	}
	defer rows.Close()
	out := make([]store.AuditEvent, 0, min(limit, total))
	for rows.Next() {
		var e store.AuditEvent
		if err := scanEvent(rows, &e); err != nil {
			return nil, 0, false, err
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, false, fmt.Errorf("list audit events: %w", err)
	}
	return out, total, exact, nil
}

// scanEvent reads one row of eventColumns. Ids are scanned as binary pgtype.UUIDs:
// through uuid.UUID's sql.Scanner pgx would format and parse every id as text.
func scanEvent(rows pgx.Rows, e *store.AuditEvent) error {
	var id, user, project, org pgtype.UUID
	if err := rows.Scan(&id, &e.Timestamp, &user, &e.UserEmail, &project, &org, &e.Action, &e.Level,
		&e.ResourceType, &e.ResourceID, &e.Details, &e.IPAddress, &e.UserAgent); err != nil {
		return fmt.Errorf("scan audit event: %w", err)
	}
	e.ID = uuid.UUID(id.Bytes)
	e.UserID, e.ProjectID, e.OrgID = store.UUIDPtr(user), store.UUIDPtr(project), store.UUIDPtr(org)
	return nil
}
