package api

import "github.com/gofiber/fiber/v2"

// customFieldRoutes registers the custom field endpoints on the authenticated /api/v1
// router: reads need any project role, writes MEMBER or ADMIN. The literal reorder path
// is registered before {id}, so it is never read as an id.
func (s *Server) customFieldRoutes(r fiber.Router) {
	r.Get("/projects/:key/custom-fields", s.listCustomFields)
	r.Post("/projects/:key/custom-fields", s.createCustomField)
	r.Put("/projects/:key/custom-fields/reorder", s.reorderCustomFields)
	r.Put("/projects/:key/custom-fields/:id", s.updateCustomField)
	r.Delete("/projects/:key/custom-fields/:id", s.deleteCustomField)
	r.Post("/projects/:key/custom-fields/:id/options", s.createCustomFieldOption)
	r.Put("/projects/:key/custom-fields/:id/options/:optionId", s.updateCustomFieldOption)
	r.Delete("/projects/:key/custom-fields/:id/options/:optionId", s.deleteCustomFieldOption)
}
