package jobs

import (
	"database/sql"
	"fmt"
	"log/slog"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
)

// NewInserter builds the insert-only River client every process inserts its jobs with:
// riverdatabasesql over db, so jobs go in on bun's own *sql.Tx and commit with the rows
// that caused them. It has no queues and no workers, so it never fetches; its
// FetchCooldown only limits how often its inserts wake the workers. The API, the
// worker process (whose jobs emit events too) and the bench all build it here, so
// every inserting client behaves the same.
func NewInserter(db *sql.DB, log *slog.Logger) (*river.Client[*sql.Tx], error) {
	cfg := &river.Config{FetchCooldown: InsertNotifyCooldown}
	if log != nil {
		cfg.Logger = log
	}
	client, err := river.NewClient(riverdatabasesql.New(db), cfg)
	if err != nil {
		return nil, fmt.Errorf("river insert client: %w", err)
	}
	return client, nil
}
