package api

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"sync"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/swaggest/swgui/v5emb"
	"go.yaml.in/yaml/v3"
)

// The OpenAPI document is kept as one fragment per resource group (openapi/NN-name.yaml)
// so each lands with its endpoints; they are merged into one document at first use.
//
//go:embed openapi/*.yaml
var openapiFragments embed.FS

var openAPIDoc = sync.OnceValues(func() ([]byte, error) { return mergeOpenAPI(openapiFragments) })

// OpenAPIDocument is the merged OpenAPI 3 document served at /openapi.yaml.
func OpenAPIDocument() ([]byte, error) { return openAPIDoc() }

// mergeOpenAPI deep-merges the fragments in name order; the same scalar defined twice
// is an error, so two fragments cannot silently overwrite each other.
func mergeOpenAPI(fsys fs.FS) ([]byte, error) {
	names, err := fs.Glob(fsys, "openapi/*.yaml")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	merged := map[string]any{}
	for _, n := range names {
		raw, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		var frag map[string]any
		if err := yaml.Unmarshal(raw, &frag); err != nil {
			return nil, fmt.Errorf("openapi fragment %s: %w", n, err)
		}
		if err := mergeInto(merged, frag, n); err != nil {
			return nil, err
		}
	}
	return yaml.Marshal(merged)
}

func mergeInto(dst, src map[string]any, where string) error {
	for k, v := range src {
		existing, ok := dst[k]
		if !ok {
			dst[k] = v
			continue
		}
		dm, dok := existing.(map[string]any)
		sm, sok := v.(map[string]any)
		if !dok || !sok {
			return fmt.Errorf("openapi fragment %s: %q defined twice", where, k)
		}
		if err := mergeInto(dm, sm, where+"/"+k); err != nil {
			return err
		}
	}
	return nil
}

// docsRoutes serve the document and Swagger UI, both from the binary.
func (s *Server) docsRoutes(app *fiber.App) {
	app.Get("/openapi.yaml", func(c *fiber.Ctx) error {
		doc, err := OpenAPIDocument()
		if err != nil {
			return err
		}
		c.Set(fiber.HeaderContentType, "application/yaml")
		return c.Send(doc)
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
