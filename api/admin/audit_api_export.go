package admin

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/audit"
)

// auditExportTimeout bounds one export from the query to the last byte. An export is
// written after the handler returns, so the 10 s request deadline cannot apply; large
// logs legitimately take longer, but a reader that stalls must not hold a pool
// connection (and a snapshot that holds back vacuum) for ever.
const auditExportTimeout = 10 * time.Minute

// auditExportBuffer is how much of the export is gathered before it goes to the
// client as one chunk.
const auditExportBuffer = 32 << 10

// auditCSVHeader is the CSV header row of docs/api-conventions.md#audit, in this exact
// order.
var auditCSVHeader = []string{"id", "timestamp", "userEmail", "action", "level", "resourceType", "resourceId", "ipAddress"}

// exportAuditEvents streams every event matching the list filters as a JSON array or
// CSV. Rows go from the database cursor to the client as they come, through a pipe
// whose writer blocks while the client is slow, so memory stays constant whatever the
// log's size.
func (s *handlers) exportAuditEvents(c *fiber.Ctx) error {
	// A constant, not c.Query's buffer: the export outlives the handler.
	format := "json"
	switch c.Query("format") {
	case "", "json":
	case "csv":
		format = "csv"
	default:
		return core.BadRequest("UNKNOWN_EXPORT_FORMAT")
	}
	f, err := parseAuditFilter(c, true)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.UserContext()), auditExportTimeout)
	// The first row is read here: a failing query is still an ordinary error reply.
	cur, err := audit.OpenCursor(ctx, s.DB.Pool, f)
	if err != nil {
		cancel()
		return err
	}
	pr, pw := io.Pipe()
	go streamAuditExport(ctx, cancel, cur, format, pw, s.Log)
	if format == "csv" {
		c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
		c.Set(fiber.HeaderContentDisposition, "attachment; filename=audit.csv")
	} else {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	}
	return c.SendStream(pr)
}

// streamAuditExport writes the export into pw and always ends the walk: at the last
// row, when the client goes away (the server closes the pipe's reader) or when ctx
// ends. A client that stops reading blocks the pipe write, not the database read, and
// no ctx cancellation reaches a blocked pipe write; closing the pipe when ctx ends does,
// so a stalled client holds the connection and snapshot at most until the export's
// deadline.
func streamAuditExport(ctx context.Context, cancel context.CancelFunc, cur *audit.Cursor, format string, pw *io.PipeWriter, log *slog.Logger) {
	stop := context.AfterFunc(ctx, func() { _ = pw.CloseWithError(fmt.Errorf("audit export: %w", context.Cause(ctx))) })
	bw := bufio.NewWriterSize(pw, auditExportBuffer)
	var err error
	if format == "csv" {
		err = writeAuditCSV(bw, cur)
	} else {
		err = writeAuditJSON(bw, cur)
	}
	if err == nil {
		err = bw.Flush()
	}
	// stop first, or the cancel below would close the pipe with an error after a
	// complete export. stop reports false when the deadline already closed the pipe.
	if !stop() {
		log.Warn("audit export stopped at its deadline", "timeout", auditExportTimeout)
	}
	// Cancel before closing: after a failed write the query may still be sending rows,
	// and cancelling drops them instead of draining the rest of the log.
	cancel()
	if cerr := cur.Close(ctx); cerr != nil && err == nil {
		err = cerr
	}
	// A nil error ends the body normally. Any other error makes the server drop the
	// connection without the final chunk, so a client never mistakes a cut export for a
	// complete one.
	_ = pw.CloseWithError(err)
	if err != nil && !errors.Is(err, io.ErrClosedPipe) {
		log.Error("audit export failed", "err", err)
	}
}

// writeAuditJSON writes the events as one JSON array of AuditEvent.
func writeAuditJSON(w *bufio.Writer, cur *audit.Cursor) error {
	if err := w.WriteByte('['); err != nil {
		return err
	}
	for first := true; cur.Next(); first = false {
		if !first {
			if err := w.WriteByte(','); err != nil {
				return err
			}
		}
		raw, err := json.Marshal(toAuditEventResponse(cur.Event()))
		if err != nil {
			return err
		}
		if _, err := w.Write(raw); err != nil {
			return err
		}
	}
	if err := cur.Err(); err != nil {
		return err
	}
	return w.WriteByte(']')
}

// writeAuditCSV writes the header row and one row per event, quoted as RFC 4180 says
// (encoding/csv). Lines end in LF: with CRLF endings encoding/csv would drop a lone
// carriage return inside a cell, and the export must keep cells exact.
func writeAuditCSV(w io.Writer, cur *audit.Cursor) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(auditCSVHeader); err != nil {
		return err
	}
	record := make([]string, len(auditCSVHeader))
	for cur.Next() {
		e := cur.Event()
		record[0] = e.ID.String()
		record[1] = core.Instant(e.Timestamp)
		record[2] = csvCell(e.UserEmail)
		record[3] = csvCell(e.Action)
		record[4] = csvCell(e.Level)
		record[5] = csvOptionalCell(e.ResourceType)
		record[6] = csvOptionalCell(e.ResourceID)
		record[7] = csvOptionalCell(e.IPAddress)
		if err := cw.Write(record); err != nil {
			return err
		}
	}
	if err := cur.Err(); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// csvCell applies the CSV rule of docs/api-conventions.md#audit: a cell a spreadsheet
// would read as a formula (it starts with =, +, -, @, a tab or a carriage return) gets a
// leading single quote; every other cell, including one with an at-sign further in, is
// unchanged.
func csvCell(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
}

func csvOptionalCell(s *string) string {
	if s == nil {
		return ""
	}
	return csvCell(*s)
}
