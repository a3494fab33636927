package work

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/customfield"
	"github.com/taskweave/taskweave/domain/project"
)

// customFieldResponse is CustomField in api/openapi/93-custom-fields.yaml: options are
// filled for DROPDOWN fields, `[]` for the others.
type customFieldResponse struct {
	ID        uuid.UUID                   `json:"id"`
	Name      string                      `json:"name"`
	Type      string                      `json:"type"`
	Required  bool                        `json:"required"`
	SortOrder int                         `json:"sortOrder"`
	Options   []customFieldOptionResponse `json:"options"`
}

// customFieldOptionResponse is CustomFieldOption in api/openapi/93-custom-fields.yaml.
type customFieldOptionResponse struct {
	ID        uuid.UUID `json:"id"`
	Label     string    `json:"label"`
	SortOrder int       `json:"sortOrder"`
}

func toCustomFieldResponse(d *customfield.Definition) customFieldResponse {
	out := customFieldResponse{ID: d.ID, Name: d.Name, Type: d.Type, Required: d.Required, SortOrder: d.SortOrder,
		Options: make([]customFieldOptionResponse, len(d.Options))}
	for i := range d.Options {
		out.Options[i] = toCustomFieldOptionResponse(&d.Options[i])
	}
	return out
}

func toCustomFieldOptionResponse(o *customfield.Option) customFieldOptionResponse {
	return customFieldOptionResponse{ID: o.ID, Label: o.Label, SortOrder: o.SortOrder}
}

// customFieldRequest is the body of POST and PUT …/custom-fields[/{id}]. On PUT the
// type is ignored (a field's type never changes) and absent members stay unchanged.
type customFieldRequest struct {
	Name      *string `json:"name"`
	Type      *string `json:"type"`
	Required  *bool   `json:"required"`
	SortOrder *int64  `json:"sortOrder"`
}

// customFieldOptionRequest is the body of POST and PUT …/options[/{optionId}].
type customFieldOptionRequest struct {
	Label     *string `json:"label"`
	SortOrder *int64  `json:"sortOrder"`
}

// customFieldOrderRequest is one entry of PUT …/custom-fields/reorder.
type customFieldOrderRequest struct {
	ID        *string `json:"id"`
	SortOrder *int64  `json:"sortOrder"`
}

// sortOrder checks a present sortOrder: it is stored in an integer column.
func sortOrder(f *core.Fields, field string, v *int64) *int {
	if v == nil {
		return nil
	}
	if *v < math.MinInt32 || *v > math.MaxInt32 {
		f.Add(field, "RANGE", "field.RANGE", "min", strconv.Itoa(math.MinInt32), "max", strconv.Itoa(math.MaxInt32))
		return nil
	}
	n := int(*v)
	return &n
}

// trimmedName checks a present name or label (not blank, at most max characters) and
// returns it trimmed.
func trimmedName(f *core.Fields, field string, v *string, max int) *string {
	if v == nil {
		return nil
	}
	f.Text(field, *v, true, max)
	s := strings.TrimSpace(*v)
	return &s
}

func parseNewCustomField(body core.Body) (customfield.NewField, error) {
	var r customFieldRequest
	if err := body.Decode(&r); err != nil {
		return customfield.NewField{}, err
	}
	switch {
	case r.Name == nil:
		return customfield.NewField{}, core.Required("name")
	case r.Type == nil:
		return customfield.NewField{}, core.Required("type")
	case !customfield.Valid(*r.Type):
		return customfield.NewField{}, core.BadRequest("INVALID_ENUM", "field", "type", "values", strings.Join(customfield.Types, ", "))
	}
	var f core.Fields
	in := customfield.NewField{Type: *r.Type, Required: r.Required != nil && *r.Required}
	if name := trimmedName(&f, "name", r.Name, customfield.MaxName); name != nil {
		in.Name = *name
	}
	if n := sortOrder(&f, "sortOrder", r.SortOrder); n != nil {
		in.SortOrder = *n
	}
	return in, f.Err()
}

func parseCustomFieldChange(body core.Body) (customfield.FieldChange, error) {
	var r customFieldRequest
	if err := body.Decode(&r); err != nil {
		return customfield.FieldChange{}, err
	}
	var f core.Fields
	ch := customfield.FieldChange{Required: r.Required}
	ch.Name = trimmedName(&f, "name", r.Name, customfield.MaxName)
	ch.SortOrder = sortOrder(&f, "sortOrder", r.SortOrder)
	return ch, f.Err()
}

// parseCustomFieldOrder decodes the reorder body, a JSON array of {id, sortOrder}.
func parseCustomFieldOrder(body core.Body) ([]customfield.Order, error) {
	trimmed := bytes.TrimSpace(body.JSON)
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return nil, core.BadRequest("BODY_NOT_ARRAY")
	}
	var items []customFieldOrderRequest
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
	out := make([]customfield.Order, 0, len(items))
	for i, it := range items {
		at := "[" + strconv.Itoa(i) + "]."
		switch {
		case it.ID == nil:
			return nil, core.Required(at + "id")
		case it.SortOrder == nil:
			return nil, core.Required(at + "sortOrder")
		}
		id, err := core.ParseID(at+"id", *it.ID)
		if err != nil {
			return nil, err
		}
		if n := sortOrder(&f, at+"sortOrder", it.SortOrder); n != nil {
			out = append(out, customfield.Order{ID: id, SortOrder: *n})
		}
	}
	return out, f.Err()
}

func parseCustomFieldOption(body core.Body, create bool) (customfield.OptionChange, error) {
	var r customFieldOptionRequest
	if err := body.Decode(&r); err != nil {
		return customfield.OptionChange{}, err
	}
	if create && r.Label == nil {
		return customfield.OptionChange{}, core.Required("label")
	}
	var f core.Fields
	ch := customfield.OptionChange{Label: trimmedName(&f, "label", r.Label, customfield.MaxLabel),
		SortOrder: sortOrder(&f, "sortOrder", r.SortOrder)}
	return ch, f.Err()
}

func (s *handlers) listCustomFields(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Viewer)
	if err != nil {
		return err
	}
	defs, err := customfield.List(c.UserContext(), s.DB.Bun, a.Project.ID)
	if err != nil {
		return err
	}
	out := make([]customFieldResponse, len(defs))
	for i := range defs {
		out[i] = toCustomFieldResponse(&defs[i])
	}
	return c.JSON(out)
}

func (s *handlers) createCustomField(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Member)
	if err != nil {
		return err
	}
	in, err := parseNewCustomField(core.BodyOf(c))
	if err != nil {
		return err
	}
	d, err := customfield.Create(c.UserContext(), s.DB.Bun, a.Project.ID, in)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(toCustomFieldResponse(d))
}

func (s *handlers) updateCustomField(c *fiber.Ctx) error {
	a, id, err := s.ProjectItem(c, project.Member, "id")
	if err != nil {
		return err
	}
	ch, err := parseCustomFieldChange(core.BodyOf(c))
	if err != nil {
		return err
	}
	d, err := customfield.Update(c.UserContext(), s.DB.Bun, a.Project.ID, id, ch)
	if err != nil {
		return err
	}
	return c.JSON(toCustomFieldResponse(d))
}

func (s *handlers) reorderCustomFields(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Member)
	if err != nil {
		return err
	}
	orders, err := parseCustomFieldOrder(core.BodyOf(c))
	if err != nil {
		return err
	}
	if err := customfield.Reorder(c.UserContext(), s.DB.Bun, a.Project.ID, orders); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *handlers) deleteCustomField(c *fiber.Ctx) error {
	a, id, err := s.ProjectItem(c, project.Member, "id")
	if err != nil {
		return err
	}
	if err := customfield.Delete(c.UserContext(), s.DB.Bun, a.Project.ID, id); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *handlers) createCustomFieldOption(c *fiber.Ctx) error {
	a, id, err := s.ProjectItem(c, project.Member, "id")
	if err != nil {
		return err
	}
	ch, err := parseCustomFieldOption(core.BodyOf(c), true)
	if err != nil {
		return err
	}
	sort := 0
	if ch.SortOrder != nil {
		sort = *ch.SortOrder
	}
	o, err := customfield.CreateOption(c.UserContext(), s.DB.Bun, a.Project.ID, id, *ch.Label, sort)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(toCustomFieldOptionResponse(o))
}

func (s *handlers) updateCustomFieldOption(c *fiber.Ctx) error {
	a, id, err := s.ProjectItem(c, project.Member, "id")
	if err != nil {
		return err
	}
	optionID, err := core.PathUUID(c, "optionId")
	if err != nil {
		return err
	}
	ch, err := parseCustomFieldOption(core.BodyOf(c), false)
	if err != nil {
		return err
	}
	o, err := customfield.UpdateOption(c.UserContext(), s.DB.Bun, a.Project.ID, id, optionID, ch)
	if err != nil {
		return err
	}
	return c.JSON(toCustomFieldOptionResponse(o))
}

func (s *handlers) deleteCustomFieldOption(c *fiber.Ctx) error {
	a, id, err := s.ProjectItem(c, project.Member, "id")
	if err != nil {
		return err
	}
	optionID, err := core.PathUUID(c, "optionId")
	if err != nil {
		return err
	}
	if err := customfield.DeleteOption(c.UserContext(), s.DB.Bun, a.Project.ID, id, optionID); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// customFieldValueRequest is one member of an issue's customFieldValues. value is a
// string; JSON numbers and booleans are taken as their text, null (or absent) removes
// the value.
type customFieldValueRequest struct {
	FieldID *string         `json:"fieldId"`
	Value   json.RawMessage `json:"value"`
}

// parseCustomFieldValues reads customFieldValues into domain inputs; whether each value
// fits its field is the domain's to say, since only it knows the field.
func parseCustomFieldValues(rs []customFieldValueRequest) ([]customfield.Input, error) {
	if rs == nil {
		return nil, nil
	}
	out := make([]customfield.Input, len(rs))
	for i, r := range rs {
		at := "customFieldValues[" + strconv.Itoa(i) + "]."
		if r.FieldID == nil {
			return nil, core.Required(at + "fieldId")
		}
		id, err := core.ParseID(at+"fieldId", *r.FieldID)
		if err != nil {
			return nil, err
		}
		out[i].FieldID = id
		raw := bytes.TrimSpace(r.Value)
		switch {
		case len(raw) == 0 || string(raw) == "null":
		case raw[0] == '"':
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, core.BadRequest("WRONG_TYPE", "field", at+"value")
			}
			out[i].Value = &s
		case raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9') || string(raw) == "true" || string(raw) == "false":
			s := string(raw)
			out[i].Value = &s
		default:
			return nil, core.BadRequest("WRONG_TYPE", "field", at+"value")
		}
	}
	return out, nil
}
