package migrations

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/jackc/pgx/v5"
)

// ErrEdited is a migration that differs from the one the database applied: the
// database and the code would silently disagree about the schema, so `migrate` stops
// and /readyz answers 503 (docs/operations.md#migration-checksums).
var ErrEdited = errors.New("migrations: an applied migration was edited")

// Checksum is the SHA-256 of the migration's text exactly as embedded; schema_migrations
// records it when the migration is applied.
func (m Migration) Checksum() string { return digest(m.SQL) }

// CodeChecksum is the SHA-256 of the migration's statements alone: comments removed
// and runs of whitespace made one space, outside quoted text. Two texts with the same
// code checksum apply the same statements, so an edit of comments alone can be
// accepted (Options.AcceptCommentEdits) without accepting any other.
func (m Migration) CodeChecksum() string { return digest(code(m.SQL)) }

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// code strips SQL comments (-- to the end of the line, nested /* */ blocks) and
// collapses whitespace, leaving string literals, quoted identifiers and dollar-quoted
// bodies (function bodies included) exactly as written.
func code(sql string) string {
	var b strings.Builder
	space := false
	emit := func(s string) {
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteString(s)
	}
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == '-' && strings.HasPrefix(sql[i:], "--"):
			end := strings.IndexByte(sql[i:], '\n')
			if end < 0 {
				end = len(sql) - i
			}
			i += end
			space = true
		case c == '/' && strings.HasPrefix(sql[i:], "/*"):
			depth, j := 0, i
			for j < len(sql) {
				if strings.HasPrefix(sql[j:], "/*") {
					depth, j = depth+1, j+2
				} else if strings.HasPrefix(sql[j:], "*/") {
					depth, j = depth-1, j+2
					if depth == 0 {
						break
					}
				} else {
					j++
				}
			}
			i = j
			space = true
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(sql) {
				if sql[j] == c {
					if j+1 < len(sql) && sql[j+1] == c { // a doubled quote inside
						j += 2
						continue
					}
					break
				}
				j++
			}
			j = min(j+1, len(sql))
			emit(sql[i:j])
			i = j
		case c == '$' && dollarTag(sql[i:]) != "":
			tag := dollarTag(sql[i:])
			end := strings.Index(sql[i+len(tag):], tag)
			j := len(sql)
			if end >= 0 {
				j = i + len(tag) + end + len(tag)
			}
			emit(sql[i:j])
			i = j
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			space = true
			i++
		default:
			j := i + 1
			for j < len(sql) && !strings.ContainsRune(" \t\n\r\f'\"$-/", rune(sql[j])) {
				j++
			}
			emit(sql[i:j])
			i = j
		}
	}
	return b.String()
}

// dollarTag is the opening $tag$ (or $$) at the start of s, "" when s starts none.
func dollarTag(s string) string {
	for j := 1; j < len(s); j++ {
		c := s[j]
		if c == '$' {
			return s[:j+1]
		}
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || j > 1 && c >= '0' && c <= '9') {
			return ""
		}
	}
	return ""
}

// appliedMigration is a schema_migrations row; the checksums are empty for a row
// written before they were recorded.
type appliedMigration struct {
	Version      int
	Name         string
	Checksum     string
	CodeChecksum string
}

// checksumColumns adds the checksum columns to a schema_migrations made before them.
const checksumColumns = `ALTER TABLE schema_migrations
	ADD COLUMN IF NOT EXISTS checksum text,
	ADD COLUMN IF NOT EXISTS code_checksum text`

// readApplied reads schema_migrations by version (empty when the table does not exist).
func readApplied(ctx context.Context, conn *pgx.Conn) (map[int]appliedMigration, error) {
	var exists, hasChecksums bool
	err := conn.QueryRow(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL,
		EXISTS (SELECT FROM information_schema.columns WHERE table_name = 'schema_migrations' AND column_name = 'code_checksum'
			AND table_schema = current_schema())`).Scan(&exists, &hasChecksums)
	if err != nil {
		return nil, fmt.Errorf("migrate: look for schema_migrations: %w", err)
	}
	out := map[int]appliedMigration{}
	if !exists {
		return out, nil
	}
	q := "SELECT version, name, '', '' FROM schema_migrations"
	if hasChecksums {
		q = "SELECT version, name, coalesce(checksum, ''), coalesce(code_checksum, '') FROM schema_migrations"
	}
	rows, err := conn.Query(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("migrate: read schema_migrations: %w", err)
	}
	list, err := pgx.CollectRows(rows, pgx.RowToStructByPos[appliedMigration])
	if err != nil {
		return nil, fmt.Errorf("migrate: read schema_migrations: %w", err)
	}
	for _, a := range list {
		out[a.Version] = a
	}
	return out, nil
}

// edits compares the applied migrations with the embedded ones. code lists those whose
// statements differ; comments those whose comments or layout alone differ; unrecorded
// those applied before checksums were recorded (nothing to compare with).
func edits(all []Migration, applied map[int]appliedMigration) (code, comments, unrecorded []Migration) {
	for _, m := range all {
		a, ok := applied[m.Version]
		switch {
		case !ok:
		case a.Checksum == "":
			unrecorded = append(unrecorded, m)
		case a.CodeChecksum != m.CodeChecksum():
			code = append(code, m)
		case a.Checksum != m.Checksum():
			comments = append(comments, m)
		}
	}
	return code, comments, unrecorded
}

func names(ms []Migration) string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Name
	}
	return strings.Join(out, ", ")
}

// verifyApplied refuses applied migrations whose statements changed, and those whose
// comments changed unless acceptComments; it records the checksums of accepted comment
// edits and of rows written before checksums existed.
func verifyApplied(ctx context.Context, conn *pgx.Conn, all []Migration, applied map[int]appliedMigration, acceptComments bool, log *slog.Logger) error {
	codeEdits, commentEdits, unrecorded := edits(all, applied)
	if len(codeEdits) > 0 {
		return fmt.Errorf("%w: %s applied to this database differ from this binary's; restore the applied text and put the change in a new migration", ErrEdited, names(codeEdits))
	}
	if len(commentEdits) > 0 && !acceptComments {
		return fmt.Errorf("%w: the comments or layout of %s changed after they were applied (their statements did not); set TW_MIGRATE_ACCEPT_COMMENT_EDITS=true to record the new text", ErrEdited, names(commentEdits))
	}
	for _, m := range append(commentEdits, unrecorded...) {
		if _, err := conn.Exec(ctx, "UPDATE schema_migrations SET checksum = $2, code_checksum = $3 WHERE version = $1",
			m.Version, m.Checksum(), m.CodeChecksum()); err != nil {
			return fmt.Errorf("migrate: record checksum of %s: %w", m.Name, err)
		}
	}
	if len(commentEdits) > 0 {
		log.Warn("migration comments edited after they were applied; new text recorded", "migrations", names(commentEdits))
	}
	if len(unrecorded) > 0 {
		log.Info("migration checksums recorded", "count", len(unrecorded))
	}
	return nil
}
