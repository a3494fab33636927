package locale

// Messages of single sign-on.
func init() {
	for k, v := range map[string]string{
		"reason.SSO_CONFIG_NOT_FOUND":     "The SSO configuration was not found.",
		"reason.INVALID_SSO_CODE":         "The sign-in code is invalid, used or expired. Please sign in again.",
		"reason.SSO_ISSUER_REJECTED":      "The issuer URL points to an address the server may not call.",
		"reason.SESSION_REQUIRED":         "Sign in with your password to link a sign-in provider; an access token cannot.",
		"reason.SSO_PROVIDER_NOT_FOUND":   "This sign-in provider does not exist or is disabled.",
		"reason.SSO_PROVIDER_UNAVAILABLE": "The sign-in provider cannot be reached. Please try again later.",
		"reason.SSO_LINK_NOT_FOUND":       "Your account is not linked to this sign-in provider.",
		"reason.LAST_SIGN_IN_METHOD":      "This provider is the only way to sign in to your account, so it stays linked.",
		"field.ISSUER_URL":                "must be an absolute http or https URL without query or fragment",
		"field.EMAIL_DOMAIN":              "must list e-mail domains such as example.com",
		"field.ALLOWED_DOMAINS_COUNT":     "may list at most {max} domains",
	} {
		en[k] = v
	}
	for k, v := range map[string]string{
		"reason.SSO_CONFIG_NOT_FOUND":     "Die SSO-Konfiguration wurde nicht gefunden.",
		"reason.INVALID_SSO_CODE":         "Der Anmeldecode ist ungültig, bereits benutzt oder abgelaufen. Bitte melden Sie sich erneut an.",
		"reason.SSO_ISSUER_REJECTED":      "Die Issuer-URL zeigt auf eine Adresse, die der Server nicht aufrufen darf.",
		"reason.SESSION_REQUIRED":         "Melden Sie sich mit Ihrem Passwort an, um einen Anmeldedienst zu verknüpfen; ein Zugriffstoken kann das nicht.",
		"reason.SSO_PROVIDER_NOT_FOUND":   "Diesen Anmeldedienst gibt es nicht, oder er ist deaktiviert.",
		"reason.SSO_PROVIDER_UNAVAILABLE": "Der Anmeldedienst ist nicht erreichbar. Bitte versuchen Sie es später erneut.",
		"reason.SSO_LINK_NOT_FOUND":       "Ihr Konto ist nicht mit diesem Anmeldedienst verknüpft.",
		"reason.LAST_SIGN_IN_METHOD":      "Dieser Dienst ist der einzige Weg, sich bei Ihrem Konto anzumelden, und bleibt daher verknüpft.",
		"field.ISSUER_URL":                "muss eine absolute http- oder https-URL ohne Query und Fragment sein",
		"field.EMAIL_DOMAIN":              "muss E-Mail-Domains wie example.com enthalten",
		"field.ALLOWED_DOMAINS_COUNT":     "darf höchstens {max} Domains enthalten",
	} {
		de[k] = v
	}
}
