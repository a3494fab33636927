// Package dashboard owns a project's dashboard: one per project, created on its first
// read, holding widgets placed on a grid.
package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/store"
)

// ErrWidgetNotFound is a widget that does not exist or sits on another project's
// dashboard; both look the same to the caller: not found (docs/api-conventions.md#roles).
var ErrWidgetNotFound = errors.New("dashboard: widget not found")

// Widget types (api/openapi/75-reports.yaml).
const (
	TypeBurndown       = "BURNDOWN"
	TypeVelocity       = "VELOCITY"
	TypeCycleTime      = "CYCLE_TIME"
	TypeIssueCount     = "ISSUE_COUNT"
	TypeIssuesByStatus = "ISSUES_BY_STATUS"
	TypeIssueList      = "ISSUE_LIST"
)

// Types are the widget types in documentation order.
var Types = []string{TypeBurndown, TypeVelocity, TypeCycleTime, TypeIssueCount, TypeIssuesByStatus, TypeIssueList}

// ValidType reports whether t is a widget type.
func ValidType(t string) bool { return slices.Contains(Types, t) }

// Grid defaults of a new widget (api/openapi/75-reports.yaml).
const (
	DefaultX = 0
	DefaultY = 0
	DefaultW = 4
	DefaultH = 4
)

// Dashboard is a project's dashboard with its widgets in creation order.
type Dashboard struct {
	ID        uuid.UUID
	ProjectID uuid.UUID
	Widgets   []store.DashboardWidget
}

// NewWidget is a validated widget to add; nil grid members take the defaults.
type NewWidget struct {
	Type   string
	Config *string
	GridX  *int
	GridY  *int
	GridW  *int
	GridH  *int
}

// Placement moves one widget; nil members leave that coordinate unchanged.
type Placement struct {
	WidgetID uuid.UUID `json:"id"`
	GridX    *int      `json:"x"`
	GridY    *int      `json:"y"`
	GridW    *int      `json:"w"`
	GridH    *int      `json:"h"`
}

// Get returns the project's dashboard, creating it when absent.
func Get(ctx context.Context, db bun.IDB, projectID uuid.UUID) (*Dashboard, error) {
	id, err := ensure(ctx, db, projectID)
	if err != nil {
		return nil, err
	}
	return load(ctx, db, id, projectID)
}

// ensure returns the id of the project's dashboard, creating the row when absent. The
// insert does nothing when a concurrent first read created it meanwhile, and the second
// select then sees that committed row: every caller gets the one dashboard.
func ensure(ctx context.Context, db bun.IDB, projectID uuid.UUID) (uuid.UUID, error) {
	var id uuid.UUID
	find := func() error {
		return db.NewSelect().Model((*store.Dashboard)(nil)).Column("id").Where("project_id = ?", projectID).Scan(ctx, &id)
	}
	err := store.Translate(find())
	if err == nil {
		return id, nil
	}
	if !store.IsNotFound(err) {
		return uuid.Nil, fmt.Errorf("find dashboard: %w", err)
	}
	if _, err := db.NewInsert().Model(&store.Dashboard{ProjectID: projectID}).
		On("CONFLICT (project_id) DO NOTHING").Exec(ctx); err != nil {
		return uuid.Nil, fmt.Errorf("create dashboard: %w", err)
	}
	if err := find(); err != nil {
		return uuid.Nil, fmt.Errorf("find created dashboard: %w", err)
	}
	return id, nil
}

func load(ctx context.Context, db bun.IDB, id, projectID uuid.UUID) (*Dashboard, error) {
	d := &Dashboard{ID: id, ProjectID: projectID, Widgets: []store.DashboardWidget{}}
	if err := db.NewSelect().Model(&d.Widgets).Where("dashboard_id = ?", id).OrderExpr("created_at, id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load widgets: %w", err)
	}
	return d, nil
}

// AddWidget places a new widget on the project's dashboard (created when absent).
func AddWidget(ctx context.Context, db bun.IDB, projectID uuid.UUID, in NewWidget) (*store.DashboardWidget, error) {
	w := &store.DashboardWidget{Type: in.Type, Config: in.Config,
		GridX: or(in.GridX, DefaultX), GridY: or(in.GridY, DefaultY), GridW: or(in.GridW, DefaultW), GridH: or(in.GridH, DefaultH)}
	err := store.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		id, err := ensure(ctx, tx, projectID)
		if err != nil {
			return err
		}
		w.DashboardID = id
		if _, err := tx.NewInsert().Model(w).Returning("id, created_at").Exec(ctx); err != nil {
			return fmt.Errorf("insert widget: %w", store.Translate(err))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// DeleteWidget removes a widget of the project's dashboard.
func DeleteWidget(ctx context.Context, db bun.IDB, projectID, widgetID uuid.UUID) error {
	res, err := db.NewDelete().Model((*store.DashboardWidget)(nil)).
		Where("id = ?", widgetID).
		Where("dashboard_id IN (SELECT id FROM dashboards WHERE project_id = ?)", projectID).
		Exec(ctx)
	if err != nil {
		return fmt.Errorf("delete widget %s: %w", widgetID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrWidgetNotFound
	}
	return nil
}

// SetLayout moves the listed widgets and returns the dashboard. Widgets left out keep
// their place; a widget named twice takes its last entry. One widget that is not on this
// project's dashboard fails the whole call with ErrWidgetNotFound and moves nothing.
func SetLayout(ctx context.Context, db bun.IDB, projectID uuid.UUID, items []Placement) (*Dashboard, error) {
	items = lastWins(items)
	var d *Dashboard
	err := store.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		id, err := ensure(ctx, tx, projectID)
		if err != nil {
			return err
		}
		if len(items) > 0 {
			if err := move(ctx, tx, id, items); err != nil {
				return err
			}
		}
		d, err = load(ctx, tx, id, projectID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// move updates every placement in one statement; the placements travel as one JSON
// document so absent coordinates arrive as NULL and keep the stored value.
func move(ctx context.Context, tx bun.Tx, dashboardID uuid.UUID, items []Placement) error {
	doc, err := json.Marshal(items)
	if err != nil {
		return fmt.Errorf("encode layout: %w", err)
	}
	var moved []uuid.UUID
	err = tx.NewRaw(`UPDATE dashboard_widgets AS w
		SET grid_x = coalesce(v.x, w.grid_x), grid_y = coalesce(v.y, w.grid_y),
			grid_w = coalesce(v.w, w.grid_w), grid_h = coalesce(v.h, w.grid_h)
		FROM jsonb_to_recordset(?::jsonb) AS v(id uuid, x integer, y integer, w integer, h integer)
		WHERE w.id = v.id AND w.dashboard_id = ?
		RETURNING w.id`, string(doc), dashboardID).Scan(ctx, &moved)
	if err != nil {
		return fmt.Errorf("move widgets: %w", store.Translate(err))
	}
	if len(moved) != len(items) {
		// The transaction rolls back: nothing moves.
		return ErrWidgetNotFound
	}
	return nil
}

// lastWins drops earlier entries for a widget named again later, keeping order.
func lastWins(items []Placement) []Placement {
	last := make(map[uuid.UUID]int, len(items))
	for i, it := range items {
		last[it.WidgetID] = i
	}
	out := make([]Placement, 0, len(last))
	for i, it := range items {
		if last[it.WidgetID] == i {
			out = append(out, it)
		}
	}
	return out
}

func or(v *int, def int) int {
	if v == nil {
		return def
	}
	return *v
}
