package audit

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/store"
)

// Setting is one level's toggle as the admin sees it.
type Setting struct {
	Level   Level
	Enabled bool
}

// defaultEnabled is a level's toggle when its audit_config row is missing: the seed of
// migration 0001 (only SECURITY on).
func defaultEnabled(l Level) bool { return l == LevelSecurity }

// Settings returns every level's toggle in Levels order (SECURITY, WRITE, ALL). A level
// without a row reports its seed value.
func Settings(ctx context.Context, db bun.IDB) ([]Setting, error) {
	var rows []store.AuditConfig
	if err := db.NewSelect().Model(&rows).Scan(ctx); err != nil {
		return nil, fmt.Errorf("read audit config: %w", err)
	}
	stored := make(map[string]bool, len(rows))
	for _, r := range rows {
		stored[r.Level] = r.Enabled
	}
	out := make([]Setting, 0, len(Levels))
	for _, l := range Levels {
		on, ok := stored[string(l)]
		if !ok {
			on = defaultEnabled(l)
		}
		out = append(out, Setting{Level: l, Enabled: on})
	}
	return out, nil
}

// configChange is the details JSON of an AUDIT_CONFIG_CHANGED entry.
type configChange struct {
	Level    Level `json:"level"`
	Enabled  bool  `json:"enabled"`
	Previous bool  `json:"previous"`
}

// SetEnabled stores one level's toggle and records the change as AUDIT_CONFIG_CHANGED
// on behalf of by (its Action and Details are set here), in one transaction. Setting a
// toggle to its current value changes nothing and records nothing.
//
// The entry is recorded when its own level (WRITE) is on before or after the change: an
// admin switching WRITE off leaves a trace of that, written while WRITE was still on,
// and switching it on is the first thing recorded. SECURITY entries are recorded
// whatever the SECURITY toggle says (see Recorder.Job), so storing SECURITY=false has no
// effect on recording; it is kept so the admin reads back what was set.
func SetEnabled(ctx context.Context, db bun.IDB, rec *Recorder, level Level, on bool, by Actor) error {
	return store.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		// The row lock serializes concurrent changes of one level, so each records the
		// previous value it really replaced.
		var previous bool
		err := tx.NewSelect().Table("audit_config").Column("enabled").Where("level = ?", string(level)).For("UPDATE").Scan(ctx, &previous)
		switch {
		case store.IsNotFound(err):
			previous = defaultEnabled(level)
		case err != nil:
			return fmt.Errorf("read audit config %s: %w", level, err)
		}
		if previous == on {
			return nil
		}
		details, err := json.Marshal(configChange{Level: level, Enabled: on, Previous: previous})
		if err != nil {
			return fmt.Errorf("audit config change details: %w", err)
		}
		e := by.Entry(AuditConfigChange, "", "", string(details))
		recordFirst := level == LevelOf(AuditConfigChange) && !on
		if recordFirst {
			if err := rec.Record(ctx, tx, e); err != nil {
				return err
			}
		}
		if _, err := tx.NewRaw(`INSERT INTO audit_config (level, enabled) VALUES (?, ?)
			ON CONFLICT (level) DO UPDATE SET enabled = excluded.enabled`, string(level), on).Exec(ctx); err != nil {
			return fmt.Errorf("store audit config %s: %w", level, err)
		}
		if recordFirst {
			return nil
		}
		return rec.Record(ctx, tx, e)
	})
}
