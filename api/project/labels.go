package project

import (
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/samber/lo"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/label"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/store"
)

// labelResponse is ProjectLabel in api/openapi/20-projects.yaml.
type labelResponse struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Color string `json:"color"`
}

func toLabelResponse(l *store.Label) labelResponse {
	return labelResponse{ID: l.ID.String(), Name: l.Name, Color: l.Color}
}

type labelRequest struct {
	Name  *string `json:"name"`
	Color *string `json:"color"`
}

// parseLabel decodes a label body. On create both members are required; on update an
// absent member stays unchanged. Names are trimmed.
func parseLabel(body core.Body, create bool) (label.Change, error) {
	var r labelRequest
	if err := body.Decode(&r); err != nil {
		return label.Change{}, err
	}
	if create {
		switch {
		case r.Name == nil:
			return label.Change{}, core.Required("name")
		case r.Color == nil:
			return label.Change{}, core.Required("color")
		}
	}
	var f core.Fields
	if r.Name != nil {
		f.Text("name", *r.Name, true, label.MaxNameLength)
		name := strings.TrimSpace(*r.Name)
		r.Name = &name
	}
	if r.Color != nil && !label.ColorPattern.MatchString(*r.Color) {
		f.Add("color", "PATTERN", "field.COLOR")
	}
	return label.Change{Name: r.Name, Color: r.Color}, f.Err()
}

func (s *handlers) listLabels(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Viewer)
	if err != nil {
		return err
	}
	ls, err := label.List(c.UserContext(), s.DB.Bun, a.Project.ID)
	if err != nil {
		return err
	}
	return c.JSON(lo.Map(ls, func(l store.Label, _ int) labelResponse { return toLabelResponse(&l) }))
}

func (s *handlers) createLabel(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Member)
	if err != nil {
		return err
	}
	in, err := parseLabel(core.BodyOf(c), true)
	if err != nil {
		return err
	}
	l, err := label.Create(c.UserContext(), s.DB.Bun, a.Project.ID, *in.Name, *in.Color)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(toLabelResponse(l))
}

func (s *handlers) updateLabel(c *fiber.Ctx) error {
	a, id, err := s.ProjectItem(c, project.Member, "id")
	if err != nil {
		return err
	}
	in, err := parseLabel(core.BodyOf(c), false)
	if err != nil {
		return err
	}
	l, err := label.Update(c.UserContext(), s.DB.Bun, a.Project.ID, id, in)
	if err != nil {
		return err
	}
	return c.JSON(toLabelResponse(l))
}

func (s *handlers) deleteLabel(c *fiber.Ctx) error {
	a, id, err := s.ProjectItem(c, project.Member, "id")
	if err != nil {
		return err
	}
	if err := label.Delete(c.UserContext(), s.DB.Bun, a.Project.ID, id); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
