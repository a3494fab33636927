package locale

// Messages of project integrations, incoming provider events and issue references.
func init() {
	for k, v := range map[string]string{
		"reason.INTEGRATION_EXISTS":    "The project already has an integration with this provider.",
		"reason.INTEGRATION_NOT_FOUND": "The integration was not found.",
		"reason.UNKNOWN_PROVIDER":      "{field} must be one of {values}.",
		"incoming.INVALID_SIGNATURE":   "Missing or invalid X-Hub-Signature-256 signature.",
		"incoming.INVALID_TOKEN":       "Missing or invalid X-Gitlab-Token.",
	} {
		en[k] = v
	}
	for k, v := range map[string]string{
		"reason.INTEGRATION_EXISTS":    "Das Projekt hat bereits eine Integration mit diesem Anbieter.",
		"reason.INTEGRATION_NOT_FOUND": "Die Integration wurde nicht gefunden.",
		"reason.UNKNOWN_PROVIDER":      "{field} muss einer der Werte {values} sein.",
		"incoming.INVALID_SIGNATURE":   "Fehlende oder ungültige Signatur X-Hub-Signature-256.",
		"incoming.INVALID_TOKEN":       "Fehlendes oder ungültiges X-Gitlab-Token.",
	} {
		de[k] = v
	}
}
