package api

import "github.com/gofiber/fiber/v2"

// ssoPublicRoutes registers what a signed-out browser calls: the login page's provider
// list and the code exchange under /api/v1 (before requireUser), and the flow's paths
// outside /api/v1, where the web client links and providers send the browser back.
func (s *Server) ssoPublicRoutes(v1 fiber.Router) {
	v1.Get("/admin/sso/public", s.publicSSOProviders)
	v1.Post("/auth/sso/exchange", s.env.RateLimited, s.exchangeSSO)
	s.App.Get("/oauth2/authorization/:registrationId", s.startSSO)
	s.App.Get("/login/oauth2/authorization/:registrationId", s.startSSO)
	s.App.Get("/login/oauth2/code/:registrationId", s.ssoCallback)
}

// ssoAdminRoutes registers the SSO config endpoints on the /admin group (system ADMIN).
func (s *Server) ssoAdminRoutes(admin fiber.Router) {
	admin.Get("/sso", s.listSSOConfigs)
	admin.Post("/sso", s.createSSOConfig)
	admin.Get("/sso/:id", s.getSSOConfig)
	admin.Put("/sso/:id", s.updateSSOConfig)
	admin.Delete("/sso/:id", s.deleteSSOConfig)
}

// ssoMeRoutes registers the signed-in user's links to providers (after requireUser).
func (s *Server) ssoMeRoutes(v1 fiber.Router) {
	v1.Get("/me/sso", s.listSSOLinks)
	v1.Post("/me/sso/:registrationId/link", s.linkSSO)
	v1.Delete("/me/sso/:registrationId", s.unlinkSSO)
}
