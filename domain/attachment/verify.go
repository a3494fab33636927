package attachment

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Missing is an attachment row whose file the storage does not have.
type Missing struct {
	ID         uuid.UUID
	IssueKey   string
	Filename   string
	StoredName string
	Storage    Location
}

// Verify checks that the storages hold the file of every attachment row, each in the
// storage its row names, as after a restore (`taskweave backup verify`,
// docs/operations.md#backups): each row is read in one streaming pass and its file
// opened. It calls missing for each row without its file and returns how many rows it
// checked and how many lacked one; a storage failure other than a missing file stops
// it, and so does a row in a storage this process has none for.
func Verify(ctx context.Context, db bun.IDB, stores *Stores, missing func(Missing)) (checked, lacking int, err error) {
	rows, err := db.QueryContext(ctx, `SELECT a.id, i.key, a.filename, a.stored_name, a.storage
		FROM attachments AS a JOIN issues AS i ON i.id = a.issue_id ORDER BY a.created_at, a.id`)
	if err != nil {
		return 0, 0, fmt.Errorf("read attachments: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var m Missing
		if err := rows.Scan(&m.ID, &m.IssueKey, &m.Filename, &m.StoredName, &m.Storage); err != nil {
			return checked, lacking, fmt.Errorf("read attachments: %w", err)
		}
		checked++
		files, err := stores.At(m.Storage)
		if err != nil {
			return checked, lacking, fmt.Errorf("attachment %s: %w", m.ID, err)
		}
		r, _, err := files.Open(ctx, m.StoredName)
		switch {
		case errors.Is(err, ErrFileNotFound):
			lacking++
			missing(m)
		case err != nil:
			return checked, lacking, fmt.Errorf("open %s: %w", m.StoredName, err)
		default:
			_ = r.Close()
		}
	}
	if err := rows.Err(); err != nil {
		return checked, lacking, fmt.Errorf("read attachments: %w", err)
	}
	return checked, lacking, nil
}
