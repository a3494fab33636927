package api

import (
	_ "embed"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/swaggest/swgui/v5emb"
)

// OpenAPI is the embedded OpenAPI 3 document; every route is described in it.
//
//go:embed openapi.yaml
var OpenAPI []byte

// docsRoutes serve the document and Swagger UI, both from the binary.
func (s *Server) docsRoutes(app *fiber.App) {
	app.Get("/openapi.yaml", func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, "application/yaml")
		return c.Send(OpenAPI)
	})
	ui := adaptor.HTTPHandler(v5emb.New("Taskweave API", "/openapi.yaml", "/swagger-ui/"))
	app.Get("/swagger-ui.html", func(c *fiber.Ctx) error { return c.Redirect("/swagger-ui/", fiber.StatusFound) })
	// Routing ignores a trailing slash, so this route also sees "/swagger-ui/": that one
	// is the UI itself.
	app.Get("/swagger-ui", func(c *fiber.Ctx) error {
		if c.Path() == "/swagger-ui/" {
			return c.Next()
		}
		return c.Redirect("/swagger-ui/", fiber.StatusFound)
	})
	app.Get("/swagger-ui/*", ui)
}
