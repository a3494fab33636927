package locale

var de = map[string]string{
	"error.BAD_REQUEST":        "Die Anfrage ist ungültig.",
	"error.VALIDATION_ERROR":   "Einige Felder sind ungültig.",
	"error.UNAUTHORIZED":       "Anmeldung erforderlich.",
	"error.FORBIDDEN":          "Dazu sind Sie nicht berechtigt.",
	"error.NOT_FOUND":          "Die Ressource wurde nicht gefunden.",
	"error.CONFLICT":           "Die Anfrage steht im Konflikt mit dem aktuellen Zustand.",
	"error.PAYLOAD_TOO_LARGE":  "Der Anfrageinhalt ist zu groß.",
	"error.RATE_LIMITED":       "Zu viele Anfragen. Bitte in {seconds} Sekunden erneut versuchen.",
	"error.INTERNAL_ERROR":     "Bei uns ist etwas schiefgelaufen.",
	"error.UNAVAILABLE":        "Der Dienst ist vorübergehend nicht verfügbar.",
	"error.METHOD_NOT_ALLOWED": "Diese Methode ist hier nicht erlaubt.",

	"reason.MALFORMED_JSON":            "Der Anfragetext ist kein gültiges JSON.",
	"reason.MISSING_FIELD":             "Das Feld {field} ist erforderlich.",
	"reason.WRONG_TYPE":                "Das Feld {field} hat den falschen Typ.",
	"reason.INVALID_UUID":              "{field} ist keine gültige ID.",
	"reason.INVALID_PAGE":              "page muss 0 oder größer und size 1 oder größer sein.",
	"reason.INVALID_CURSOR":            "Der Cursor stammt nicht von dieser Liste.",
	"reason.UNKNOWN_MEMBER":            "Das Feld {field} gehört nicht zu dieser Anfrage (Prefer: handling=strict).",
	"reason.READ_ONLY_MEMBER":          "Das Feld {field} ist schreibgeschützt: der Server setzt es (Prefer: handling=strict).",
	"reason.INVALID_CREDENTIALS":       "E-Mail-Adresse oder Passwort ist falsch.",
	"reason.INVALID_REFRESH_TOKEN":     "Das Refresh-Token ist ungültig oder abgelaufen.",
	"reason.REGISTRATION_DISABLED":     "Die Registrierung ist deaktiviert.",
	"reason.INVALID_CURRENT_PASSWORD":  "Das aktuelle Passwort ist falsch.",
	"reason.NO_PASSWORD":               "Dieses Konto hat kein Passwort; die Anmeldung erfolgt über einen externen Anbieter.",
	"reason.DUPLICATE_EMAIL":           "Ein Konto mit dieser E-Mail-Adresse existiert bereits.",
	"reason.LAST_ADMIN":                "Der letzte aktive Administrator kann nicht deaktiviert oder gelöscht werden.",
	"reason.USER_DELETED":              "Ein gelöschter Benutzer kann nicht aktiviert werden.",
	"reason.READ_ONLY_TOKEN":           "Dieses Token ist schreibgeschützt.",
	"reason.API_KEY_SCOPE":             "Dieser API-Schlüssel gilt nur in seinem eigenen Projekt.",
	"reason.ADMIN_ONLY":                "Nur Administratoren dürfen das.",
	"reason.UNSUPPORTED_LANGUAGE":      "Unterstützte Sprachen sind en und de.",
	"reason.UNKNOWN_NOTIFICATION_TYPE": "Unbekannter Benachrichtigungstyp {type}.",
	"reason.UNKNOWN_AUDIT_LEVEL":       "Unbekannte Audit-Stufe {level}.",
	"reason.TOKEN_NOT_FOUND":           "Das Token wurde nicht gefunden.",
	"reason.USER_NOT_FOUND":            "Der Benutzer wurde nicht gefunden.",
	"reason.ROUTE_NOT_FOUND":           "Diesen Endpunkt gibt es nicht.",

	"field.BLANK":      "darf nicht leer sein",
	"field.TOO_LONG":   "darf höchstens {max} Zeichen lang sein",
	"field.TOO_SHORT":  "muss mindestens {min} Zeichen lang sein",
	"field.EMAIL":      "muss eine gültige E-Mail-Adresse sein",
	"field.WHITESPACE": "darf nicht nur aus Leerzeichen bestehen",
	"field.PAST":       "muss in der Zukunft liegen",
	"field.ENUM":       "muss einer der Werte {values} sein",
}

func init() {
	for k, v := range map[string]string{
		"reason.NUL_CHARACTER":          "Text darf keine NUL-Zeichen enthalten.",
		"reason.NOT_A_MEMBER":           "Sie sind kein Mitglied dieses Projekts.",
		"reason.TRANSITION_NOT_ALLOWED": "Der Workflow erlaubt diesen Statuswechsel nicht.",
		"reason.STATUS_NOT_IN_WORKFLOW": "Der Status gehört nicht zum Workflow dieses Projekts.",
		"reason.NO_DEFAULT_STATUS":      "Der Workflow hat keinen Status der Kategorie TODO für neue Vorgänge.",
		"reason.GUARD_FIELD":            "Der Übergang erfordert das Feld {field}.",
		"reason.GUARD_ROLE":             "Die Rolle {role} darf diesen Übergang nicht ausführen.",
	} {
		de[k] = v
	}
}
