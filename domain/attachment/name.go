package attachment

import (
	"path"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Limits of an attachment's record: filename ≤ 255, content type ≤ 127
// (docs/api-conventions.md#limits).
const (
	MaxFilename    = 255
	MaxContentType = 127
	// DefaultContentType is stored when the upload names none.
	DefaultContentType = "application/octet-stream"
)

// storedNamePattern is the only form a stored name has: a lower-case UUID and an optional
// short extension. Storage refuses every other name, so a record that was tampered with
// (`../../etc/passwd`, a path with separators) can never reach outside the root.
var storedNamePattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(\.[a-z0-9]{1,16})?$`)

// extensionPattern is what a kept extension looks like; anything else is dropped.
var extensionPattern = regexp.MustCompile(`^\.[a-z0-9]{1,16}$`)

// ValidStoredName reports whether name has the generated form.
func ValidStoredName(name string) bool { return storedNamePattern.MatchString(name) }

// NewStoredName is a fresh stored name for a file called filename: a random UUID plus
// the lower-cased last extension when it is a short alphanumeric one (`report.PDF` →
// `….pdf`, `a.tar.gz` → `….gz`, `evil.p/hp` or `x.` → none).
func NewStoredName(filename string) string {
	name := uuid.NewString()
	if ext := strings.ToLower(path.Ext(filename)); extensionPattern.MatchString(ext) {
		name += ext
	}
	return name
}

// CleanFilename turns the name a client sent into the name kept on the record: the base
// name only (a path with `/` or `\` loses its directories, as old browsers send
// `C:\Users\…\a.pdf`), surrounding white space trimmed, invalid UTF-8 and control
// characters (Postgres text takes no NUL; headers take no line breaks) replaced, and the
// bidirectional embedding, override and isolate characters removed (isBidiControl). It
// may return "" or a name over MaxFilename; the caller refuses those.
func CleanFilename(raw string) string {
	raw = strings.ToValidUTF8(raw, "\uFFFD")
	if i := strings.LastIndexAny(raw, `/\`); i >= 0 {
		raw = raw[i+1:]
	}
	raw = strings.Map(func(r rune) rune {
		switch {
		case isBidiControl(r):
			return -1
		case unicode.IsControl(r):
			return '_'
		}
		return r
	}, raw)
	raw = strings.TrimSpace(raw)
	if raw == "." || raw == ".." {
		return ""
	}
	return raw
}

// isBidiControl reports the explicit bidirectional formatting characters U+202A–U+202E
// (LRE, RLE, PDF, LRO, RLO) and U+2066–U+2069 (LRI, RLI, FSI, PDI): in a file name they
// make a reader see another name than the real one ("invoice\u202Efdp.exe" shows as
// "invoiceexe.pdf").
func isBidiControl(r rune) bool {
	return (r >= '\u202A' && r <= '\u202E') || (r >= '\u2066' && r <= '\u2069')
}

// FilenameTooLong reports whether a cleaned filename is over MaxFilename characters.
func FilenameTooLong(name string) bool { return utf8.RuneCountInString(name) > MaxFilename }
