package account

import (
	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
)

// handlers are the caller's own account: registration, sign-in and sessions, profile,
// tokens, notifications and their preferences, SSO, and the user search.
type handlers struct{ *core.Env }

// PublicRoutes registers what a signed-out client calls: registration, login and
// refresh (rate limited per client address), the login page's SSO provider list and the
// SSO code exchange under /api/v1 (before requireUser), and the SSO flow's paths on app,
// outside /api/v1, where the web client links and providers send the browser back.
func PublicRoutes(app, v1 fiber.Router, env *core.Env) {
	s := &handlers{env}
	v1.Post("/auth/register", s.RateLimited, s.register)
	v1.Post("/auth/login", s.RateLimited, s.login)
	v1.Post("/auth/refresh", s.refresh)

	v1.Get("/admin/sso/public", s.publicSSOProviders)
	v1.Post("/auth/sso/exchange", s.RateLimited, s.exchangeSSO)
	app.Get("/oauth2/authorization/:registrationId", s.startSSO)
	app.Get("/login/oauth2/authorization/:registrationId", s.startSSO)
	app.Get("/login/oauth2/code/:registrationId", s.ssoCallback)
}

// Routes registers the signed-in caller's own account on v1 (after requireUser): its
// session, profile, password, language, notification preferences, tokens and links to
// SSO providers, its notifications under /notifications, and the user search.
func Routes(v1 fiber.Router, env *core.Env) {
	s := &handlers{env}
	v1.Post("/auth/logout", s.logout)
	v1.Get("/auth/me", s.me)
	v1.Patch("/me", s.updateMe)
	v1.Delete("/me", s.deleteMe)
	v1.Post("/me/password", s.changePassword)
	v1.Post("/me/sign-out-everywhere", s.signOutEverywhere)
	v1.Patch("/me/language", s.setLanguage)
	v1.Get("/me/notification-preferences", s.getPreferences)
	v1.Put("/me/notification-preferences", s.putPreferences)
	v1.Get("/me/tokens", s.listTokens)
	v1.Post("/me/tokens", s.createToken)
	v1.Delete("/me/tokens/:id", s.revokeToken)
	v1.Get("/me/sso", s.listSSOLinks)
	v1.Post("/me/sso/:registrationId/link", s.linkSSO)
	v1.Delete("/me/sso/:registrationId", s.unlinkSSO)

	v1.Get("/notifications", s.listNotifications)
	v1.Get("/notifications/unread-count", s.unreadNotificationCount)
	v1.Post("/notifications/read-all", s.readAllNotifications)
	v1.Patch("/notifications/:id/read", s.readNotification)

	v1.Get("/users/search", s.searchUsers)
}

// AdminRoutes registers the SSO config endpoints on the /admin group (system ADMIN).
func AdminRoutes(admin fiber.Router, env *core.Env) {
	s := &handlers{env}
	admin.Get("/sso", s.listSSOConfigs)
	admin.Post("/sso", s.createSSOConfig)
	admin.Get("/sso/:id", s.getSSOConfig)
	admin.Put("/sso/:id", s.updateSSOConfig)
	admin.Delete("/sso/:id", s.deleteSSOConfig)
}
