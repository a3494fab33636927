package locale

// Messages of projects, members, API keys, organizations, labels and user search.
func init() {
	for k, v := range map[string]string{
		"reason.DUPLICATE_KEY":          "A project with this key already exists.",
		"reason.ALREADY_MEMBER":         "The user is already a member.",
		"reason.MEMBER_NOT_FOUND":       "The user is not a member.",
		"reason.OWN_ROLE":               "You cannot change your own role.",
		"reason.PROJECT_OWNER":          "The project owner stays an administrator and cannot be removed.",
		"reason.API_KEY_NOT_FOUND":      "The API key was not found.",
		"reason.ORGANIZATION_NOT_FOUND": "The organization was not found.",
		"reason.DUPLICATE_SLUG":         "An organization with this slug already exists.",
		"reason.NOT_AN_ORG_MEMBER":      "You are not a member of this organization.",
		"reason.ORG_ADMIN_ONLY":         "Only owners and administrators of the organization may do this.",
		"reason.OWNER_RULE":             "Only an owner or a system administrator may grant the owner role, and only a system administrator may change or remove an owner.",
		"reason.LAST_OWNER":             "The organization must keep at least one owner.",
		"reason.LABEL_NOT_FOUND":        "The label was not found.",
		"reason.DUPLICATE_NAME":         "This name is already taken.",
		"reason.USER_SEARCH_FORBIDDEN":  "Only administrators of a project or an organization may search users.",
		"reason.INVALID_ROLE":           "{field} must be one of {values}.",
		"field.PROJECT_KEY":             "must be 2 to 10 characters of A-Z and 0-9",
		"field.SLUG":                    "may contain only a-z, 0-9 and -",
		"field.COLOR":                   "must be a colour like #1a2b3c",
		"field.NUL":                     "must not contain NUL characters",
	} {
		en[k] = v
	}
	for k, v := range map[string]string{
		"reason.DUPLICATE_KEY":          "Ein Projekt mit diesem Schlüssel existiert bereits.",
		"reason.ALREADY_MEMBER":         "Der Benutzer ist bereits Mitglied.",
		"reason.MEMBER_NOT_FOUND":       "Der Benutzer ist kein Mitglied.",
		"reason.OWN_ROLE":               "Sie können Ihre eigene Rolle nicht ändern.",
		"reason.PROJECT_OWNER":          "Der Projektinhaber bleibt Administrator und kann nicht entfernt werden.",
		"reason.API_KEY_NOT_FOUND":      "Der API-Schlüssel wurde nicht gefunden.",
		"reason.ORGANIZATION_NOT_FOUND": "Die Organisation wurde nicht gefunden.",
		"reason.DUPLICATE_SLUG":         "Eine Organisation mit diesem Kürzel existiert bereits.",
		"reason.NOT_AN_ORG_MEMBER":      "Sie sind kein Mitglied dieser Organisation.",
		"reason.ORG_ADMIN_ONLY":         "Nur Inhaber und Administratoren der Organisation dürfen das.",
		"reason.OWNER_RULE":             "Nur ein Inhaber oder ein Systemadministrator darf die Inhaberrolle vergeben, und nur ein Systemadministrator darf einen Inhaber ändern oder entfernen.",
		"reason.LAST_OWNER":             "Die Organisation muss mindestens einen Inhaber behalten.",
		"reason.LABEL_NOT_FOUND":        "Das Label wurde nicht gefunden.",
		"reason.DUPLICATE_NAME":         "Dieser Name ist bereits vergeben.",
		"reason.USER_SEARCH_FORBIDDEN":  "Nur Administratoren eines Projekts oder einer Organisation dürfen Benutzer suchen.",
		"reason.INVALID_ROLE":           "{field} muss einer der Werte {values} sein.",
		"field.PROJECT_KEY":             "muss aus 2 bis 10 Zeichen A-Z und 0-9 bestehen",
		"field.SLUG":                    "darf nur a-z, 0-9 und - enthalten",
		"field.COLOR":                   "muss eine Farbe wie #1a2b3c sein",
		"field.NUL":                     "darf keine NUL-Zeichen enthalten",
	} {
		de[k] = v
	}
}
