package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/dashboard"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/store"
)

// Limits of dashboard requests. Positions take any integer column value: the web client
// adds a widget "at the bottom" with gridY 9999, and the dashboard keeps it where it was
// asked to be (docs/api-conventions.md#reports). Sizes stay within 1000 cells, far past
// any screen. A config is opaque client text.
const (
	dashboardPositionMax = math.MaxInt32
	dashboardSizeMax     = 1000
	dashboardConfigMax   = 65536
)

// dashboardResponse is DashboardResponse in api/openapi/75-reports.yaml.
type dashboardResponse struct {
	ID        string           `json:"id"`
	ProjectID string           `json:"projectId"`
	Widgets   []widgetResponse `json:"widgets"`
}

// widgetResponse is a dashboard widget; config is the stored text or null.
type widgetResponse struct {
	ID     string  `json:"id"`
	Type   string  `json:"type"`
	Config *string `json:"config"`
	GridX  int     `json:"gridX"`
	GridY  int     `json:"gridY"`
	GridW  int     `json:"gridW"`
	GridH  int     `json:"gridH"`
}

func toWidgetResponse(w *store.DashboardWidget) widgetResponse {
	return widgetResponse{ID: w.ID.String(), Type: w.Type, Config: w.Config, GridX: w.GridX, GridY: w.GridY,
		GridW: w.GridW, GridH: w.GridH}
}

func toDashboardResponse(d *dashboard.Dashboard) dashboardResponse {
	out := dashboardResponse{ID: d.ID.String(), ProjectID: d.ProjectID.String(), Widgets: make([]widgetResponse, len(d.Widgets))}
	for i := range d.Widgets {
		out.Widgets[i] = toWidgetResponse(&d.Widgets[i])
	}
	return out
}

// widgetRequest is POST …/dashboard/widgets. config must be a string (or null): it is
// stored and returned verbatim, so a client keeps JSON in it as text, as the wire format
// shows it; a JSON object there is a wrong type (400).
type widgetRequest struct {
	Type   *string `json:"type"`
	Config *string `json:"config"`
	GridX  *int    `json:"gridX"`
	GridY  *int    `json:"gridY"`
	GridW  *int    `json:"gridW"`
	GridH  *int    `json:"gridH"`
}

// layoutItemRequest is one entry of PUT …/dashboard/layout.
type layoutItemRequest struct {
	WidgetID *string `json:"widgetId"`
	GridX    *int    `json:"gridX"`
	GridY    *int    `json:"gridY"`
	GridW    *int    `json:"gridW"`
	GridH    *int    `json:"gridH"`
}

// dashboardGrid checks present grid members: positions 0 to 2^31−1, sizes 1 to 1000.
func dashboardGrid(f *core.Fields, prefix string, x, y, w, h *int) {
	check := func(name string, v *int, min, max int) {
		if v != nil && (*v < min || *v > max) {
			f.Add(prefix+name, "RANGE", "field.RANGE", "min", strconv.Itoa(min), "max", strconv.Itoa(max))
		}
	}
	check("gridX", x, 0, dashboardPositionMax)
	check("gridY", y, 0, dashboardPositionMax)
	check("gridW", w, 1, dashboardSizeMax)
	check("gridH", h, 1, dashboardSizeMax)
}

func parseWidget(body core.Body) (dashboard.NewWidget, error) {
	var r widgetRequest
	if err := body.Decode(&r); err != nil {
		return dashboard.NewWidget{}, err
	}
	if r.Type == nil {
		return dashboard.NewWidget{}, core.Required("type")
	}
	if !dashboard.ValidType(*r.Type) {
		return dashboard.NewWidget{}, core.BadRequest("INVALID_ENUM", "field", "type", "values", strings.Join(dashboard.Types, ", "))
	}
	var f core.Fields
	if r.Config != nil {
		f.Text("config", *r.Config, false, dashboardConfigMax)
	}
	dashboardGrid(&f, "", r.GridX, r.GridY, r.GridW, r.GridH)
	return dashboard.NewWidget{Type: *r.Type, Config: r.Config, GridX: r.GridX, GridY: r.GridY, GridW: r.GridW, GridH: r.GridH}, f.Err()
}

// parseLayout decodes the layout: a JSON array of {widgetId, gridX?, gridY?, gridW?,
// gridH?}; an absent grid member leaves that coordinate as it is.
func parseLayout(body core.Body) ([]dashboard.Placement, error) {
	trimmed := bytes.TrimSpace(body.JSON)
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return nil, core.BadRequest("LAYOUT_NOT_ARRAY")
	}
	var items []layoutItemRequest
	if err := json.Unmarshal(trimmed, &items); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, core.BadRequest("WRONG_TYPE", "field", te.Field)
		}
		return nil, core.BadRequest("MALFORMED_JSON")
	}
	if body.Strict {
		if err := core.CheckMembers(trimmed, &items); err != nil {
			return nil, err
		}
	}
	var f core.Fields
	out := make([]dashboard.Placement, 0, len(items))
	for i, it := range items {
		at := "[" + strconv.Itoa(i) + "]."
		if it.WidgetID == nil {
			return nil, core.Required(at + "widgetId")
		}
		id, err := core.ParseID(at+"widgetId", *it.WidgetID)
		if err != nil {
			return nil, err
		}
		dashboardGrid(&f, at, it.GridX, it.GridY, it.GridW, it.GridH)
		out = append(out, dashboard.Placement{WidgetID: id, GridX: it.GridX, GridY: it.GridY, GridW: it.GridW, GridH: it.GridH})
	}
	return out, f.Err()
}

// dashboardGet returns the project's dashboard, creating it on the first read.
func (s *handlers) dashboardGet(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Viewer)
	if err != nil {
		return err
	}
	d, err := dashboard.Get(c.UserContext(), s.DB.Bun, a.Project.ID)
	if err != nil {
		return err
	}
	return c.JSON(toDashboardResponse(d))
}

func (s *handlers) dashboardPutLayout(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Admin)
	if err != nil {
		return err
	}
	items, err := parseLayout(core.BodyOf(c))
	if err != nil {
		return err
	}
	d, err := dashboard.SetLayout(c.UserContext(), s.DB.Bun, a.Project.ID, items)
	if err != nil {
		return err
	}
	return c.JSON(toDashboardResponse(d))
}

func (s *handlers) dashboardAddWidget(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Admin)
	if err != nil {
		return err
	}
	in, err := parseWidget(core.BodyOf(c))
	if err != nil {
		return err
	}
	w, err := dashboard.AddWidget(c.UserContext(), s.DB.Bun, a.Project.ID, in)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(toWidgetResponse(w))
}

func (s *handlers) dashboardDeleteWidget(c *fiber.Ctx) error {
	a, id, err := s.ProjectItem(c, project.Admin, "widgetId")
	if err != nil {
		return err
	}
	if err := dashboard.DeleteWidget(c.UserContext(), s.DB.Bun, a.Project.ID, id); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
