package task

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// Expire deletes the tasks finished more than retention ago (zero: Retention), with
// what they recorded, and returns how many went.
func Expire(ctx context.Context, db bun.IDB, retention time.Duration) (int, error) {
	if retention <= 0 {
		retention = Retention
	}
	res, err := db.NewDelete().Table("tasks").
		Where("finished_at < now() - make_interval(secs => ?)", retention.Seconds()).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("expire tasks: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
