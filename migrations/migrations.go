// Package migrations holds Taskweave's numbered SQL migrations, embedded in the binary,
// and applies them together with River's own.
package migrations

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

//go:embed *.sql
var files embed.FS

// lockKey is the advisory lock every migrating process takes first, so two replicas
// starting together apply each migration exactly once.
const lockKey int64 = 0x7461736b77657631 // "taskwev1"

// Migration is one numbered SQL file.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// All returns the embedded migrations in version order.
func All() ([]Migration, error) {
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, e := range entries {
		name := e.Name()
		num, _, ok := strings.Cut(name, "_")
		if !ok || !strings.HasSuffix(name, ".sql") {
			continue
		}
		v, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("migration %s: bad number: %w", name, err)
		}
		body, err := files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: name, SQL: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i := 1; i < len(out); i++ {
		if out[i].Version == out[i-1].Version {
			return nil, fmt.Errorf("migrations %s and %s share a number", out[i-1].Name, out[i].Name)
		}
	}
	return out, nil
}

// Options change how Apply treats a database.
type Options struct {
	// AcceptCommentEdits records the new text of applied migrations whose comments or
	// layout alone changed, instead of refusing to run (TW_MIGRATE_ACCEPT_COMMENT_EDITS).
	AcceptCommentEdits bool
	// AuditConversion tunes the copy that finishes migration 0045 (ConvertAuditLog).
	AuditConversion AuditConversion
}

// Apply brings the database up to date: River's tables first, then ours, under one
// advisory lock held on a dedicated connection. It refuses a database whose applied
// migrations differ from the embedded ones (ErrEdited).
func Apply(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) error {
	return ApplyWith(ctx, pool, log, Options{})
}

// ApplyWith is Apply with options.
func ApplyWith(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger, opts Options) error {
	return applyUpTo(ctx, pool, log, opts, 0)
}

// applyUpTo is ApplyWith stopping after migration version upTo (every one when 0); tests
// use it to build a database as an older release left it.
func applyUpTo(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger, opts Options, upTo int) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: acquire connection: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", lockKey); err != nil {
		return fmt.Errorf("migrate: take advisory lock: %w", err)
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", lockKey)
	}()

	migrator, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: log})
	if err != nil {
		return fmt.Errorf("migrate: river migrator: %w", err)
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate: river: %w", err)
	}

	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	if _, err := conn.Exec(ctx, checksumColumns); err != nil {
		return fmt.Errorf("migrate: add checksums to schema_migrations: %w", err)
	}
	all, err := All()
	if err != nil {
		return err
	}
	applied, err := readApplied(ctx, conn.Conn())
	if err != nil {
		return err
	}
	if err := verifyApplied(ctx, conn.Conn(), all, applied, opts.AcceptCommentEdits, log); err != nil {
		return err
	}
	for _, m := range all {
		if _, ok := applied[m.Version]; ok {
			continue
		}
		if upTo > 0 && m.Version > upTo {
			break
		}
		err := pgx.BeginFunc(ctx, conn.Conn(), func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name, checksum, code_checksum) VALUES ($1, $2, $3, $4)",
				m.Version, m.Name, m.Checksum(), m.CodeChecksum())
			return err
		})
		if err != nil {
			return fmt.Errorf("migrate: apply %s: %w", m.Name, err)
		}
		log.Info("migration applied", "name", m.Name)
	}
	// The one step a SQL migration cannot take: 0045's copy of the audit log in batches,
	// each its own transaction, and the swap of the tables.
	return ConvertAuditLog(ctx, conn.Conn(), log, opts.AuditConversion)
}

// RiverVersion is the newest migration version of the River release this binary is
// built with: a database is current only once River's own migrations reach it.
func RiverVersion() (int, error) {
	migrator, err := rivermigrate.New(riverpgxv5.New(nil), nil)
	if err != nil {
		return 0, err
	}
	all := migrator.AllVersions()
	return all[len(all)-1].Version, nil
}

// Current reports whether every embedded migration and River's latest are applied;
// /readyz answers 503 until they are. An applied migration whose statements differ
// from the embedded one is ErrEdited.
func Current(ctx context.Context, pool *pgxpool.Pool) (bool, error) {
	all, err := All()
	if err != nil {
		return false, err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Release()
	applied, err := readApplied(ctx, conn.Conn())
	if err != nil {
		return false, err
	}
	for _, m := range all {
		if _, ok := applied[m.Version]; !ok {
			return false, nil
		}
	}
	if code, _, _ := edits(all, applied); len(code) > 0 {
		return false, fmt.Errorf("%w: %s", ErrEdited, names(code))
	}
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return false, err
	}
	existing, err := migrator.ExistingVersions(ctx)
	if err != nil {
		return false, nil
	}
	want := migrator.AllVersions()
	return len(existing) > 0 && existing[len(existing)-1].Version >= want[len(want)-1].Version, nil
}

// Ready is the /readyz check: the database answers and every migration is applied.
func Ready(ctx context.Context, pool *pgxpool.Pool) error {
	if err := pool.Ping(ctx); err != nil {
		return fmt.Errorf("database unreachable: %w", err)
	}
	ok, err := Current(ctx, pool)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("migrations are not current")
	}
	return nil
}
