package core

// The length limits, in characters, of the request members the API checks itself
// rather than a domain package; the OpenAPI document states each as the member's
// maxLength (minLength).
const (
	// MaxName bounds a display name and the name of a project, organization, personal
	// access token or API key.
	MaxName = 255
	// MaxEmail bounds an e-mail address.
	MaxEmail = 255
	// MinPassword and MaxPassword bound a password.
	MinPassword = 8
	MaxPassword = 128
)
