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

		"field.AUTOMATION_SCHEDULED_ONLY":     "is a member of SCHEDULED rules only",
		"field.AUTOMATION_SCHEDULED_PROJECT":  "SCHEDULED rules belong to a project (a SYSTEM rule has no issues to filter)",
		"field.AUTOMATION_SCHEDULED_FILTER":   "SCHEDULED rules choose their issues with filter, not triggerPayload",
		"field.AUTOMATION_TIMEZONE":           "is not an IANA time zone name (such as Europe/Berlin)",
		"field.AUTOMATION_SCHEDULE":           "must be a 5-field cron expression (minute hour day-of-month month day-of-week) or @hourly, @daily, @weekly, @monthly, @yearly",
		"field.AUTOMATION_SCHEDULE_TOO_OFTEN": "runs more often than every {min} minutes",
		"field.AUTOMATION_FILTER_OBJECT":      "must be an object of the issue list's query parameters",
		"field.AUTOMATION_FILTER_KEY":         "is not a parameter of the issue list; its parameters are: {keys}",
		"field.AUTOMATION_FILTER_VALUE":       "is not a value the issue list accepts for this parameter",

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

		"field.AUTOMATION_SCHEDULED_ONLY":     "gehört nur zu SCHEDULED-Regeln",
		"field.AUTOMATION_SCHEDULED_PROJECT":  "SCHEDULED-Regeln gehören zu einem Projekt (eine SYSTEM-Regel hat keine Vorgänge zum Filtern)",
		"field.AUTOMATION_SCHEDULED_FILTER":   "SCHEDULED-Regeln wählen ihre Vorgänge mit filter, nicht mit triggerPayload",
		"field.AUTOMATION_TIMEZONE":           "ist kein IANA-Zeitzonenname (wie Europe/Berlin)",
		"field.AUTOMATION_SCHEDULE":           "muss ein Cron-Ausdruck mit 5 Feldern (Minute Stunde Tag Monat Wochentag) oder @hourly, @daily, @weekly, @monthly, @yearly sein",
		"field.AUTOMATION_SCHEDULE_TOO_OFTEN": "läuft öfter als alle {min} Minuten",
		"field.AUTOMATION_FILTER_OBJECT":      "muss ein Objekt aus Abfrageparametern der Vorgangsliste sein",
		"field.AUTOMATION_FILTER_KEY":         "ist kein Parameter der Vorgangsliste; ihre Parameter sind: {keys}",
		"field.AUTOMATION_FILTER_VALUE":       "ist kein Wert, den die Vorgangsliste für diesen Parameter annimmt",

		"notification.AUTOMATION.title": "{rule} für {issueKey}",
		"notification.AUTOMATION.body":  "{message} ({issueKey} „{issueTitle}“)",
	} {
		de[k] = v
	}
}
