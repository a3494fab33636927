package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/valyala/fasthttp"

	"github.com/taskweave/taskweave/store"
)

// MaxResponseBody is how much of a receiver's reply is stored (4 KiB; see
// docs/api-conventions.md#events-and-webhooks).
const MaxResponseBody = 4 << 10

// drainLimit is the longest reply body read, so the connection can be reused; of a reply
// declaring a longer one only the status counts (no body is kept), and the connection
// is closed.
const drainLimit = 64 << 10

// Outcome is what became of one delivery job run.
type Outcome int

// Outcomes, also the values of the deliveries metric's outcome label.
const (
	// Skipped: the record or its webhook is gone, or the webhook is disabled; nothing sent.
	Skipped Outcome = iota
	// Delivered: the receiver answered 2xx.
	Delivered
	// RetryScheduled: the attempt failed and another follows.
	RetryScheduled
	// Failed: the last attempt failed; no more follow.
	Failed
)

// String is the metric label.
func (o Outcome) String() string {
	switch o {
	case Delivered:
		return "delivered"
	case RetryScheduled:
		return "retry_scheduled"
	case Failed:
		return "failed"
	default:
		return "skipped"
	}
}

// Result is one run's outcome; Err is the failed attempt's cause, for River's record.
type Result struct {
	Outcome Outcome
	// Latency is from the record's creation to the 2xx, set on the record's first success.
	Latency time.Duration
	// FirstSuccess is true when this run delivered a record never delivered before.
	FirstSuccess bool
	Err          error
}

// Sender POSTs delivery records. One Sender, with one keep-alive HTTP client, serves
// every delivery of a worker process.
type Sender struct {
	pool    *pgxpool.Pool
	client  *fasthttp.Client
	timeout time.Duration
	// Canonical names of the prefixed headers, built once.
	hEvent, hSignature, hDelivery string
	// sends runs the concurrent sends of SendAll.
	sends *runner
	// loads and records group concurrent sends' statements.
	loads   *group[[16]byte, loaded]
	records *group[record, struct{}]
}

// NewSender builds the Sender on pool, which should be store.DB.Keyed (see loadBatch):
// redirects are never followed (a 3xx is a failed attempt), and unless cfg.AllowPrivate
// the dialer refuses non-public addresses.
func NewSender(pool *pgxpool.Pool, cfg Config) *Sender {
	cfg = cfg.WithDefaults()
	s := &Sender{
		pool:       pool,
		client:     newClient(cfg),
		timeout:    cfg.Timeout,
		hEvent:     http.CanonicalHeaderKey(cfg.HeaderPrefix + "-Event"),
		hSignature: http.CanonicalHeaderKey(cfg.HeaderPrefix + "-Signature"),
		hDelivery:  http.CanonicalHeaderKey(cfg.HeaderPrefix + "-Delivery"),
	}
	s.sends = newRunner(runnerIdle)
	s.loads = &group[[16]byte, loaded]{fn: s.loadBatch}
	s.records = &group[record, struct{}]{fn: s.recordBatch}
	return s
}

// newClient is the delivery client: fasthttp's, the HTTP engine under the API's Fiber,
// which writes a request and reads its reply on the sending goroutine. Go's net/http
// client hands each request to two goroutines of its connection, at more than twice
// the CPU per request (docs/performance.md#sending). Keep-alive with room for
// many receivers' connections, HTTP/1.1, cfg.Timeout per attempt (dialing included), no
// proxy (a proxy would dial on our behalf and bypass the address check), no redirects
// (fasthttp's Do never follows one), the URL's path sent as configured, and unless
// cfg.AllowPrivate the dialer refuses non-public addresses (guardedDialer).
func newClient(cfg Config) *fasthttp.Client {
	dialer := newGuardedDialer(cfg)
	return &fasthttp.Client{
		// Dialing counts against the attempt's deadline (what is left of it is timeout).
		DialTimeout:              dialer.dial,
		NoDefaultUserAgentHeader: true,
		// More than a worker's concurrent sends at the default concurrency (50 jobs of
		// up to 10 deliveries); beyond that a send waits for a connection, within the
		// attempt's timeout, rather than fail.
		MaxConnsPerHost:    1024,
		MaxConnWaitTimeout: cfg.Timeout,
		// fasthttp has no reader on an idle connection, so it does not see a receiver
		// close it. Dropping idle ones after 4 s stays under the shortest common server
		// keep-alive timeouts (Node's and Apache's 5 s); a connection closed anyway is
		// met by fasthttp resending the POST when the receiver closed it before replying.
		MaxIdleConnDuration:    4 * time.Second,
		ReadBufferSize:         16 << 10, // a reply's header may be this long
		MaxResponseBodySize:    drainLimit,
		DisablePathNormalizing: true,
		// A POST is not idempotent: beyond that case (io.EOF before any reply byte), the
		// client never sends it twice. A failed attempt is the job's to retry, with the
		// same delivery id.
		RetryIf: func(*fasthttp.Request) bool { return false },
	}
}

// Sign is the signature header's value: sha256= and the lowercase hex HMAC-SHA256 of
// the raw body keyed with the secret.
func Sign(body []byte, secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	var sum [sha256.Size]byte
	return "sha256=" + hex.EncodeToString(m.Sum(sum[:0]))
}

// loadSQL reads a batch of records and their webhooks in one statement. The records are
// fetched first, by primary key (the MATERIALIZED CTE fixes that order): joined the
// other way round, Postgres starts from the webhook and reads its whole delivery index
// to intersect it with the batch.
const loadSQL = `WITH d AS MATERIALIZED (
	SELECT id, webhook_id, payload, event_type, created_at, delivered_at, last_error FROM webhook_deliveries WHERE id = ANY($1::uuid[])
)
SELECT d.id, d.payload, d.event_type, d.created_at, d.delivered_at IS NOT NULL, d.delivered_at IS NOT NULL AND d.last_error IS NULL,
	w.url, w.secret, w.enabled
	FROM d JOIN webhooks AS w ON w.id = d.webhook_id`

// recordSQL stores one attempt for each delivery of a batch: the count, the reply (also on
// failure), delivered_at on success, and when the next attempt runs (NULL when none
// follows). The ANY predicate lets the planner fetch the batch's rows by primary key
// rather than join the unnest with the whole table.
const recordSQL = `UPDATE webhook_deliveries AS d SET attempt_count = d.attempt_count + 1, response_status = v.status,
	response_body = v.body, last_error = v.err, delivered_at = CASE WHEN v.ok THEN now() ELSE d.delivered_at END,
	next_retry_at = v.next
	FROM unnest($1::uuid[], $2::int[], $3::text[], $4::text[], $5::boolean[], $6::timestamptz[]) AS v(id, status, body, err, ok, next)
	WHERE d.id = v.id AND d.id = ANY($1::uuid[])`

// loaded is what send reads of a delivery before posting it.
type loaded struct {
	payload, eventType, url, secret string
	createdAt                       time.Time
	delivered, enabled              bool
	// lastOK: the latest attempt succeeded (a success clears last_error).
	lastOK bool
}

// record is the outcome of one attempt, written by send after the POST.
type record struct {
	id        [16]byte
	status    *int32
	body      *string
	lastError *string
	ok        bool
	nextRetry *time.Time
}

// loadBatch reads deliveries with their webhooks in one statement; a missing one (record
// or webhook deleted) answers store.ErrNotFound.
//
// Both batch statements are prepared and keep their cached plan, which is why the
// Sender runs on store.DB.Keyed: in an ordinary session the generic plan made while the
// delivery table was still small scans it whole, and keeps doing so once it has grown
// (until autovacuum's ANALYZE); planning each run with its values instead would pay
// the planner on every batch (docs/performance.md#webhook-work-is-grouped).
func (s *Sender) loadBatch(ctx context.Context, ids [][16]byte) ([]loaded, []error, error) {
	rows, err := s.pool.Query(ctx, loadSQL, ids)
	if err != nil {
		return nil, nil, fmt.Errorf("load %d deliveries: %w", len(ids), err)
	}
	found := make(map[[16]byte]loaded, len(ids))
	for rows.Next() {
		var (
			id [16]byte
			l  loaded
		)
		if err := rows.Scan(&id, &l.payload, &l.eventType, &l.createdAt, &l.delivered, &l.lastOK, &l.url, &l.secret, &l.enabled); err != nil {
			rows.Close()
			return nil, nil, fmt.Errorf("load deliveries: %w", err)
		}
		found[id] = l
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("load deliveries: %w", err)
	}
	outs, errs := make([]loaded, len(ids)), make([]error, len(ids))
	for i, id := range ids {
		l, ok := found[id]
		if !ok {
			errs[i] = store.ErrNotFound
		}
		outs[i] = l
	}
	return outs, errs, nil
}

// recordBatch writes attempt outcomes in one UPDATE per round. A delivery may appear
// twice (a redelivery racing a retry); each round takes one outcome per delivery so
// every attempt is counted.
func (s *Sender) recordBatch(ctx context.Context, recs []record) ([]struct{}, []error, error) {
	pending := recs
	for len(pending) > 0 {
		seen := make(map[[16]byte]bool, len(pending))
		var round, later []record
		for _, r := range pending {
			if seen[r.id] {
				later = append(later, r)
				continue
			}
			seen[r.id] = true
			round = append(round, r)
		}
		var (
			ids        = make([][16]byte, len(round))
			statuses   = make([]*int32, len(round))
			bodies     = make([]*string, len(round))
			lastErrors = make([]*string, len(round))
			oks        = make([]bool, len(round))
			retries    = make([]*time.Time, len(round))
		)
		for i, r := range round {
			ids[i], statuses[i], bodies[i], lastErrors[i], oks[i], retries[i] = r.id, r.status, r.body, r.lastError, r.ok, r.nextRetry
		}
		if _, err := s.pool.Exec(ctx, recordSQL, ids, statuses, bodies, lastErrors, oks, retries); err != nil {
			return nil, nil, fmt.Errorf("record %d deliveries: %w", len(round), err)
		}
		pending = later
	}
	return make([]struct{}, len(recs)), nil, nil
}

// SendAll makes one attempt at each delivery of ids, concurrently, and returns each one's
// Result, or its error when the database failed it. retry says the caller's job sent
// these deliveries before: a delivery whose last attempt succeeded is then Skipped, so a
// retried or rescued job sends only what is not delivered yet.
func (s *Sender) SendAll(ctx context.Context, ids []uuid.UUID, retryDelay time.Duration, final, retry bool) ([]Result, []error) {
	results, errs := make([]Result, len(ids)), make([]error, len(ids))
	if len(ids) == 1 {
		results[0], errs[0] = s.send(ctx, ids[0], retryDelay, final, retry)
		return results, errs
	}
	var wg sync.WaitGroup
	wg.Add(len(ids))
	for i, id := range ids {
		s.sends.do(func() {
			defer wg.Done()
			results[i], errs[i] = s.send(ctx, id, retryDelay, final, retry)
		})
	}
	wg.Wait()
	return results, errs
}

// runnerIdle is how long a runner goroutine waits for more work before it exits.
const runnerIdle = 10 * time.Second

// runner runs functions on goroutines kept between calls. A fresh goroutine starts with
// a small stack, and a send would grow it through the HTTP client and pgx every time;
// a kept goroutine's stack has grown already (docs/performance.md#sending). A function goes to an
// idle goroutine if one is waiting, or else to a new one, so do never blocks and never
// queues behind another send; a goroutine idle for idle exits.
type runner struct {
	work chan func()
	idle time.Duration
}

func newRunner(idle time.Duration) *runner { return &runner{work: make(chan func()), idle: idle} }

func (r *runner) do(f func()) {
	select {
	case r.work <- f:
	default:
		go r.loop(f)
	}
}

func (r *runner) loop(f func()) {
	idle := time.NewTimer(r.idle)
	defer idle.Stop()
	for {
		f()
		idle.Reset(r.idle)
		select {
		case f = <-r.work:
		case <-idle.C:
			return
		}
	}
}

// send makes one attempt at delivery id: it loads the record and its webhook, POSTs the
// signed payload and records the outcome. retryDelay is when the next attempt will run
// (for nextRetryAt); final means no attempt follows a failure; retry skips a delivery
// whose last attempt succeeded. A deleted record or webhook is Skipped; a disabled
// webhook is Skipped with the record closed. The load and the record of concurrent sends
// are grouped into shared statements (see group).
func (s *Sender) send(ctx context.Context, id uuid.UUID, retryDelay time.Duration, final, retry bool) (Result, error) {
	l, err := s.loads.do(store.UUID(id))
	if store.IsNotFound(err) {
		return Result{Outcome: Skipped}, nil // record or webhook deleted: nothing to send
	}
	if err != nil {
		return Result{}, fmt.Errorf("load delivery %s: %w", id, err)
	}
	if retry && l.lastOK {
		return Result{Outcome: Skipped}, nil // delivered by an earlier run of the job
	}
	if !l.enabled {
		key := pgtype.UUID{Bytes: id, Valid: true}
		_, err := s.pool.Exec(ctx, "UPDATE webhook_deliveries SET next_retry_at = NULL, last_error = 'webhook disabled' WHERE id = $1", key)
		if err != nil {
			return Result{}, fmt.Errorf("skip delivery %s: %w", id, err)
		}
		return Result{Outcome: Skipped}, nil
	}

	status, respBody, sendErr := s.post(ctx, id, l.url, l.secret, l.eventType, l.payload)
	res := Result{Outcome: Delivered}
	rec := record{id: store.UUID(id), body: respBody, ok: sendErr == nil}
	if status != nil {
		st := int32(*status)
		rec.status = &st
	}
	if sendErr != nil {
		res.Err, res.Outcome = sendErr, Failed
		msg := clip(sendErr.Error(), 1024)
		rec.lastError = &msg
		if !final {
			t := time.Now().Add(retryDelay)
			rec.nextRetry, res.Outcome = &t, RetryScheduled
		}
	}
	if _, err := s.records.do(rec); err != nil {
		return Result{}, fmt.Errorf("record delivery %s: %w", id, err)
	}
	if sendErr == nil && !l.delivered {
		res.FirstSuccess, res.Latency = true, time.Since(l.createdAt)
	}
	return res, nil
}

// post sends the body and returns the reply's status and (clipped) body, nil when no
// reply came; err is non-nil for every failed attempt, including a non-2xx reply.
func (s *Sender) post(ctx context.Context, id uuid.UUID, url, secret, eventType, payload string) (*int, *string, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("webhook post: %w", err)
	}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(url)
	req.Header.SetMethod(fasthttp.MethodPost)
	req.Header.SetContentType("application/json")
	req.Header.SetUserAgent("Taskweave-Webhook/1")
	req.Header.Set(s.hEvent, eventType)
	if secret != "" { // a webhook always has one; a rule's web request may not
		req.Header.Set(s.hSignature, Sign([]byte(payload), secret))
	}
	req.Header.Set(s.hDelivery, id.String())
	req.SetBodyString(payload)
	deadline := time.Now().Add(s.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	err := s.client.DoDeadline(req, resp, deadline)
	// A reply longer than drainLimit still answered: its status counts, and fasthttp has
	// closed the connection (what it read of the body, if anything, is kept).
	if err != nil && !(errors.Is(err, fasthttp.ErrBodyTooLarge) && resp.StatusCode() != 0) {
		return nil, nil, fmt.Errorf("webhook post: %w", err)
	}
	raw := resp.Body()
	body := clip(string(raw[:min(len(raw), MaxResponseBody)]), MaxResponseBody)
	status := resp.StatusCode()
	if status < 200 || status > 299 {
		return &status, &body, fmt.Errorf("webhook receiver answered %d", status)
	}
	return &status, &body, nil
}

// Post makes one attempt of a web request other than a delivery record (an automation
// rule's SEND_WEBHOOK) with the delivery client, headers and address rule; without a
// secret it carries no signature. It returns the reply's status and (clipped) body when
// there was one, and an error unless the status is 2xx.
func (s *Sender) Post(ctx context.Context, id uuid.UUID, url, secret, eventType, payload string) (*int, *string, error) {
	return s.post(ctx, id, url, secret, eventType, payload)
}

// clip makes s storable in a text column and at most max bytes: invalid UTF-8 and NUL
// become U+FFFD, and the cut falls on a rune boundary.
func clip(s string, max int) string {
	if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
	}
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
