package locale

// Messages of automation rules: validation of a rule's members and the AUTOMATION
// notification a rule's SEND_NOTIFICATION creates ({rule} is the rule's name,
// {message} the action's text, both user data and never translated).
func init() {
	for k, v := range map[string]string{
		"reason.RULE_NOT_FOUND":          "The automation rule was not found.",
		"reason.RULE_CREATOR_INELIGIBLE": "The rule's creator may no longer have it act (deactivated, deleted, removed from the project or below MEMBER); take the rule over to enable it.",

		"field.AUTOMATION_DEPTH":        "nests condition groups deeper than {max} levels",
		"field.AUTOMATION_TOO_MANY":     "must hold at most {max} entries",
		"field.AUTOMATION_PAYLOAD":      "must be a JSON object of strings, or JSON text of one",
		"field.AUTOMATION_PAYLOAD_KEY":  "is not a filter of {trigger}; its filters are: {keys}",
		"field.AUTOMATION_STRING":       "must be a string, a number or a boolean",
		"field.AUTOMATION_UUID":         "must be an id (36 characters with hyphens)",
		"field.AUTOMATION_NOT_NUMERIC":  "GT and LT compare numbers; {type} is not numeric (use STORY_POINTS)",
		"field.AUTOMATION_NUMBER":       "must be a number",
		"field.AUTOMATION_REQUIRED":     "is required",
		"field.AUTOMATION_MIN":          "must be at least {min}",
		"field.AUTOMATION_STATUS":       "is not a status of the project's workflow",
		"field.AUTOMATION_MEMBER":       "is not a member of the project",
		"field.AUTOMATION_USER":         "is not an active user",
		"field.AUTOMATION_SELF_TRIGGER": "makes the rule trigger itself without end: {why}",
		"field.AUTOMATION_URL":          "is refused: {why}",

		"notification.AUTOMATION.title": "{rule} on {issueKey}",
		"notification.AUTOMATION.body":  "{message} ({issueKey} “{issueTitle}”)",
	} {
		en[k] = v
	}
	for k, v := range map[string]string{
		"reason.RULE_NOT_FOUND":          "Die Automatisierungsregel wurde nicht gefunden.",
		"reason.RULE_CREATOR_INELIGIBLE": "Der Ersteller der Regel darf sie nicht mehr handeln lassen (deaktiviert, gelöscht, aus dem Projekt entfernt oder unter MEMBER); übernehmen Sie die Regel, um sie zu aktivieren.",

		"field.AUTOMATION_DEPTH":        "verschachtelt Bedingungsgruppen tiefer als {max} Ebenen",
		"field.AUTOMATION_TOO_MANY":     "darf höchstens {max} Einträge enthalten",
		"field.AUTOMATION_PAYLOAD":      "muss ein JSON-Objekt aus Zeichenketten oder dessen JSON-Text sein",
		"field.AUTOMATION_PAYLOAD_KEY":  "ist kein Filter von {trigger}; seine Filter sind: {keys}",
		"field.AUTOMATION_STRING":       "muss eine Zeichenkette, eine Zahl oder ein Wahrheitswert sein",
		"field.AUTOMATION_UUID":         "muss eine ID sein (36 Zeichen mit Bindestrichen)",
		"field.AUTOMATION_NOT_NUMERIC":  "GT und LT vergleichen Zahlen; {type} ist nicht numerisch (STORY_POINTS verwenden)",
		"field.AUTOMATION_NUMBER":       "muss eine Zahl sein",
		"field.AUTOMATION_REQUIRED":     "ist erforderlich",
		"field.AUTOMATION_MIN":          "muss mindestens {min} sein",
		"field.AUTOMATION_STATUS":       "ist kein Status des Workflows des Projekts",
		"field.AUTOMATION_MEMBER":       "ist kein Mitglied des Projekts",
		"field.AUTOMATION_USER":         "ist kein aktiver Benutzer",
		"field.AUTOMATION_SELF_TRIGGER": "lässt die Regel sich endlos selbst auslösen: {why}",
		"field.AUTOMATION_URL":          "wird abgelehnt: {why}",

		"notification.AUTOMATION.title": "{rule} für {issueKey}",
		"notification.AUTOMATION.body":  "{message} ({issueKey} „{issueTitle}“)",
	} {
		de[k] = v
	}
}
