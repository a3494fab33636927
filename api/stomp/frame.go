// Package stomp is Taskweave's STOMP 1.2 endpoint over WebSocket: a small frame codec
// (no Go STOMP library could be used), the per-connection session and the hub that fans
// live messages out to local subscribers.
package stomp

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Frame is one STOMP frame. Headers keep their order; a repeated header's first value
// wins (STOMP 1.2), which Get follows.
type Frame struct {
	Command string
	Headers []Header
	Body    []byte
}

// Header is one header line.
type Header struct {
	Name, Value string
}

// Get returns the first value of the header name.
func (f *Frame) Get(name string) (string, bool) {
	for _, h := range f.Headers {
		if h.Name == name {
			return h.Value, true
		}
	}
	return "", false
}

// Value returns the first value of the header name, "" when absent.
func (f *Frame) Value(name string) string {
	v, _ := f.Get(name)
	return v
}

// Add appends a header.
func (f *Frame) Add(name, value string) { f.Headers = append(f.Headers, Header{name, value}) }

// rawHeaders tells whether a command's headers travel unescaped: STOMP 1.2 keeps CONNECT
// and CONNECTED unescaped for STOMP 1.0 clients.
func rawHeaders(command string) bool {
	return command == "CONNECT" || command == "CONNECTED" || command == "STOMP"
}

// AppendTo serializes f onto dst. A body gets a content-length header unless f has one.
func (f *Frame) AppendTo(dst []byte) []byte {
	raw := rawHeaders(f.Command)
	dst = append(dst, f.Command...)
	dst = append(dst, '\n')
	for _, h := range f.Headers {
		dst = appendEscaped(dst, h.Name, raw)
		dst = append(dst, ':')
		dst = appendEscaped(dst, h.Value, raw)
		dst = append(dst, '\n')
	}
	if len(f.Body) > 0 {
		if _, ok := f.Get("content-length"); !ok {
			dst = append(dst, "content-length:"...)
			dst = strconv.AppendInt(dst, int64(len(f.Body)), 10)
			dst = append(dst, '\n')
		}
	}
	dst = append(dst, '\n')
	dst = append(dst, f.Body...)
	return append(dst, 0)
}

// Bytes serializes f.
func (f *Frame) Bytes() []byte { return f.AppendTo(nil) }

func appendEscaped(dst []byte, s string, raw bool) []byte {
	if raw || !strings.ContainsAny(s, "\r\n:\\") {
		return append(dst, s...)
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\n':
			dst = append(dst, '\\', 'n')
		case ':':
			dst = append(dst, '\\', 'c')
		case '\\':
			dst = append(dst, '\\', '\\')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// Limits bound what a client may send; a violation is a protocol error (ERROR, close).
type Limits struct {
	// MaxFrame is the largest frame in bytes, command, headers and body together.
	MaxFrame int
	// MaxHeaders is the largest number of header lines in one frame.
	MaxHeaders int
}

// DefaultLimits fit every frame a board client sends many times over.
var DefaultLimits = Limits{MaxFrame: 64 << 10, MaxHeaders: 32}

// ErrProtocol is the class of client errors the decoder finds; the message after it is
// safe to put in an ERROR frame.
var ErrProtocol = errors.New("stomp protocol error")

func protocolError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrProtocol, fmt.Sprintf(format, args...))
}

// Decoder turns a byte stream (WebSocket messages, which may split or join frames) into
// frames. Heart-beats (bare EOLs between frames) are skipped.
type Decoder struct {
	limits Limits
	buf    []byte
}

// NewDecoder returns a decoder enforcing limits (zero fields take DefaultLimits).
func NewDecoder(limits Limits) *Decoder {
	if limits.MaxFrame <= 0 {
		limits.MaxFrame = DefaultLimits.MaxFrame
	}
	if limits.MaxHeaders <= 0 {
		limits.MaxHeaders = DefaultLimits.MaxHeaders
	}
	return &Decoder{limits: limits}
}

// Feed adds p and returns every frame completed by it. After an error the decoder is
// unusable: the connection is to be closed.
func (d *Decoder) Feed(p []byte) ([]Frame, error) {
	d.buf = append(d.buf, p...)
	var frames []Frame
	pos := 0
	for {
		pos = skipEOLs(d.buf, pos)
		if pos == len(d.buf) {
			break
		}
		f, n, err := d.parse(d.buf[pos:])
		if err != nil {
			return frames, err
		}
		if n == 0 {
			if len(d.buf)-pos > d.limits.MaxFrame {
				return frames, protocolError("frame larger than %d bytes", d.limits.MaxFrame)
			}
			break
		}
		frames = append(frames, f)
		pos += n
	}
	// Keep only the unfinished rest, in a fresh slice once it has all been consumed so
	// one large frame does not pin its buffer for the connection's life.
	rest := len(d.buf) - pos
	switch {
	case rest == 0:
		d.buf = d.buf[:0]
		if cap(d.buf) > 4096 {
			d.buf = nil
		}
	case pos > 0:
		d.buf = append(d.buf[:0], d.buf[pos:]...)
	}
	return frames, nil
}

// skipEOLs skips heart-beats: LF or CR LF. A lone trailing CR waits for its LF.
func skipEOLs(b []byte, pos int) int {
	for pos < len(b) {
		switch {
		case b[pos] == '\n':
			pos++
		case b[pos] == '\r' && pos+1 < len(b) && b[pos+1] == '\n':
			pos += 2
		default:
			return pos
		}
	}
	return pos
}

// parse reads one frame from the start of b; n is 0 when b holds only part of it.
func (d *Decoder) parse(b []byte) (f Frame, n int, err error) {
	line, pos, ok := readLine(b, 0)
	if !ok {
		return Frame{}, 0, nil
	}
	if !validCommand(line) {
		return Frame{}, 0, protocolError("malformed command")
	}
	f.Command = string(line)
	raw := rawHeaders(f.Command)
	for {
		line, pos, ok = readLine(b, pos)
		if !ok {
			return Frame{}, 0, nil
		}
		if pos > d.limits.MaxFrame {
			return Frame{}, 0, protocolError("frame larger than %d bytes", d.limits.MaxFrame)
		}
		if len(line) == 0 {
			break
		}
		if len(f.Headers) == d.limits.MaxHeaders {
			return Frame{}, 0, protocolError("more than %d headers", d.limits.MaxHeaders)
		}
		if bytes.IndexByte(line, '\r') >= 0 {
			// STOMP 1.2 escapes CR in headers; a bare one is no line ending either.
			return Frame{}, 0, protocolError("carriage return inside a header")
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return Frame{}, 0, protocolError("malformed header")
		}
		name, err := unescape(line[:colon], raw)
		if err != nil {
			return Frame{}, 0, err
		}
		value, err := unescape(line[colon+1:], raw)
		if err != nil {
			return Frame{}, 0, err
		}
		f.Headers = append(f.Headers, Header{name, value})
	}
	var end int
	if cl, ok := f.Get("content-length"); ok {
		length, err := strconv.Atoi(cl)
		if err != nil || length < 0 {
			return Frame{}, 0, protocolError("invalid content-length")
		}
		if pos+length+1 > d.limits.MaxFrame {
			return Frame{}, 0, protocolError("frame larger than %d bytes", d.limits.MaxFrame)
		}
		end = pos + length
		if end >= len(b) {
			return Frame{}, 0, nil
		}
		if b[end] != 0 {
			return Frame{}, 0, protocolError("body longer than content-length")
		}
	} else {
		nul := bytes.IndexByte(b[pos:], 0)
		if nul < 0 {
			return Frame{}, 0, nil
		}
		end = pos + nul
		if end+1 > d.limits.MaxFrame {
			return Frame{}, 0, protocolError("frame larger than %d bytes", d.limits.MaxFrame)
		}
	}
	if end > pos {
		f.Body = bytes.Clone(b[pos:end])
	}
	return f, end + 1, nil
}

// readLine returns the line starting at pos without its EOL and the position after it.
func readLine(b []byte, pos int) (line []byte, next int, ok bool) {
	i := bytes.IndexByte(b[pos:], '\n')
	if i < 0 {
		return nil, 0, false
	}
	line = b[pos : pos+i]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	return line, pos + i + 1, true
}

func validCommand(b []byte) bool {
	if len(b) == 0 || len(b) > 16 {
		return false
	}
	for _, c := range b {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}

// unescape decodes STOMP 1.2 header escapes; an undefined escape is an error.
func unescape(b []byte, raw bool) (string, error) {
	if raw || bytes.IndexByte(b, '\\') < 0 {
		return string(b), nil
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			out = append(out, b[i])
			continue
		}
		i++
		if i == len(b) {
			return "", protocolError("unfinished escape in header")
		}
		switch b[i] {
		case 'r':
			out = append(out, '\r')
		case 'n':
			out = append(out, '\n')
		case 'c':
			out = append(out, ':')
		case '\\':
			out = append(out, '\\')
		default:
			return "", protocolError("undefined escape \\%c in header", b[i])
		}
	}
	return string(out), nil
}
