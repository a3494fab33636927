// Package storetest gives tests real Postgres databases: a template migrated once per
// migration set, and cheap clones of it (CREATE DATABASE ... TEMPLATE), so test
// packages run in parallel without seeing each other's rows.
package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/taskweave/taskweave/migrations"
	"github.com/taskweave/taskweave/store"
)

// AdminURL is the server-level connection used to create databases:
// TW_TEST_DATABASE_URL, else the local default.
func AdminURL() string {
	if u := os.Getenv("TW_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

var (
	templateOnce sync.Once
	templateName string
	templateErr  error
)

// NewDB returns a fresh migrated database that is dropped when the test ends.
func NewDB(tb testing.TB) *store.DB {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url, err := CloneURL(ctx)
	if err != nil {
		tb.Fatalf("storetest: %v", err)
	}
	db, err := store.Open(ctx, url, 20)
	if err != nil {
		tb.Fatalf("storetest: open clone: %v", err)
	}
	tb.Cleanup(func() {
		db.Close()
		drop(url)
	})
	return db
}

// CloneURL creates a clone of the template and returns its URL; the caller drops it
// with Drop. TestMain-level users (one database per package) use this directly.
func CloneURL(ctx context.Context) (string, error) {
	templateOnce.Do(func() { templateName, templateErr = ensureTemplate(ctx) })
	if templateErr != nil {
		return "", templateErr
	}
	name := "tw_test_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16]
	conn, err := pgx.Connect(ctx, AdminURL())
	if err != nil {
		return "", fmt.Errorf("connect admin: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", name, templateName)); err != nil {
		return "", fmt.Errorf("clone template: %w", err)
	}
	return withDatabase(AdminURL(), name), nil
}

// Drop removes a database created by CloneURL.
func Drop(url string) { drop(url) }

func drop(url string) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, AdminURL())
	if err != nil {
		return
	}
	defer conn.Close(ctx)
	_, _ = conn.Exec(ctx, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", cfg.Database))
}

// ensureTemplate builds the template for the current migration set once per machine;
// concurrent test binaries wait on an advisory lock instead of racing.
func ensureTemplate(ctx context.Context) (string, error) {
	all, err := migrations.All()
	if err != nil {
		return "", err
	}
	river, err := migrations.RiverVersion()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	// River's migrations are part of the set: a River upgrade that adds one needs a new
	// template, or clones would lack it and never be "current" (/readyz).
	fmt.Fprintf(h, "river:%d;", river)
	for _, m := range all {
		io.WriteString(h, m.Name)
		io.WriteString(h, m.SQL)
	}
	name := "tw_tpl_" + hex.EncodeToString(h.Sum(nil))[:16]

	conn, err := pgx.Connect(ctx, AdminURL())
	if err != nil {
		return "", fmt.Errorf("connect admin (%s): %w", AdminURL(), err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock(hashtextextended('taskweave.test-template', 0))"); err != nil {
		return "", err
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(hashtextextended('taskweave.test-template', 0))")

	var ready bool
	err = conn.QueryRow(ctx, "SELECT datistemplate FROM pg_database WHERE datname = $1", name).Scan(&ready)
	if err == nil && ready {
		return name, nil
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", name)); err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s", name)); err != nil {
		return "", fmt.Errorf("create template: %w", err)
	}
	pool, err := pgxpool.New(ctx, withDatabase(AdminURL(), name))
	if err != nil {
		return "", err
	}
	err = migrations.Apply(ctx, pool, slog.New(slog.NewTextHandler(io.Discard, nil)))
	pool.Close()
	if err != nil {
		return "", fmt.Errorf("migrate template: %w", err)
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s WITH IS_TEMPLATE true ALLOW_CONNECTIONS false", name)); err != nil {
		return "", err
	}
	return name, nil
}

func withDatabase(url, db string) string {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return url
	}
	// Rebuild only the path: keep user, host, port and query as given.
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok {
		return url
	}
	hostPart, query, _ := strings.Cut(rest, "?")
	if i := strings.Index(hostPart, "/"); i >= 0 {
		hostPart = hostPart[:i]
	}
	_ = cfg
	out := scheme + "://" + hostPart + "/" + db
	if query != "" {
		out += "?" + query
	}
	return out
}

var (
	pkgURL  string
	pkgOnce sync.Once
	pkgDB   *store.DB
	pkgErr  error
)

// Main runs a test package against one clone shared by its tests (the cheap tier);
// call it from TestMain. Tests that need an empty database use NewDB instead.
func Main(m interface{ Run() int }) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	url, err := CloneURL(ctx)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "storetest:", err)
		return 1
	}
	pkgURL = url
	code := m.Run()
	if pkgDB != nil {
		pkgDB.Close()
	}
	drop(url)
	return code
}

// PackageDB is the package's shared database (see Main).
func PackageDB(tb testing.TB) *store.DB {
	tb.Helper()
	if pkgURL == "" {
		tb.Fatal("storetest: PackageDB needs storetest.Main in TestMain")
	}
	pkgOnce.Do(func() { pkgDB, pkgErr = store.Open(context.Background(), pkgURL, 40) })
	if pkgErr != nil {
		tb.Fatalf("storetest: open package db: %v", pkgErr)
	}
	return pkgDB
}
