package locale

// Messages of single sign-on.
func init() {
	for k, v := range map[string]string{
		"reason.SSO_CONFIG_NOT_FOUND": "The SSO configuration was not found.",
		"reason.INVALID_SSO_CODE":     "The sign-in code is invalid, used or expired. Please sign in again.",
		"field.ISSUER_URL":            "must be an absolute http or https URL without query or fragment",
	} {
		en[k] = v
	}
	for k, v := range map[string]string{
		"reason.SSO_CONFIG_NOT_FOUND": "Die SSO-Konfiguration wurde nicht gefunden.",
		"reason.INVALID_SSO_CODE":     "Der Anmeldecode ist ungültig, bereits benutzt oder abgelaufen. Bitte melden Sie sich erneut an.",
		"field.ISSUER_URL":            "muss eine absolute http- oder https-URL ohne Query und Fragment sein",
	} {
		de[k] = v
	}
}
