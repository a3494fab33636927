package locale

// Messages of the service desk, incidents and the SLA monitor's notifications. Issue
// keys, severities and policy names are filled in as they are.
func init() {
	for lang, msgs := range map[string]map[string]string{
		English: {
			"reason.SERVICE_DESK_NOT_FOUND": "This project has no service desk.",
			"reason.DESK_EMAIL_TAKEN":       "Another project's service desk already uses this e-mail address.",
			"reason.SLA_POLICY_NOT_FOUND":   "The SLA policy was not found.",
			"reason.SLA_POLICY_EXISTS":      "The service desk already has an SLA policy for this priority.",
			"reason.USER_NOT_MEMBER":        "A user named here is not a member of this project.",
			"reason.INCIDENT_NOT_FOUND":     "The incident was not found.",
			"reason.INCIDENT_RESOLVED":      "The incident is already resolved.",
			"field.TOO_MANY":                "must hold at most {max} entries",

			"notification.SLA_BREACHED.title":          "SLA breached on {issueKey}",
			"notification.SLA_BREACHED.body":           "{issueKey} “{issueTitle}” was not resolved within {minutes} minutes ({policy}).",
			"notification.SLA_RESPONSE_BREACHED.title": "No first response on {issueKey}",
			"notification.SLA_RESPONSE_BREACHED.body":  "Nobody answered ticket {issueKey} “{issueTitle}” within {minutes} minutes ({policy}).",
			"notification.SLA_ESCALATED.title":         "{issueKey} was escalated",
			"notification.SLA_ESCALATED.body":          "{issueKey} “{issueTitle}” has been open for {minutes} minutes under {policy} and was escalated.",
			"notification.INCIDENT.title":              "Incident {severity} on {issueKey}",
			"notification.INCIDENT.body":               "{actor} declared a {severity} incident on {issueKey} “{issueTitle}”.",

			"mail.ticket.subject": "[{issueKey}] We received your request: {title}",
			"mail.ticket.body":    "Thank you for your message. We have recorded it as ticket {issueKey} and will get back to you.\n\nTo add to it, reply to this e-mail and keep [{issueKey}] in the subject.",
		},
		German: {
			"reason.SERVICE_DESK_NOT_FOUND": "Dieses Projekt hat keinen Service-Desk.",
			"reason.DESK_EMAIL_TAKEN":       "Der Service-Desk eines anderen Projekts verwendet diese E-Mail-Adresse bereits.",
			"reason.SLA_POLICY_NOT_FOUND":   "Die SLA-Richtlinie wurde nicht gefunden.",
			"reason.SLA_POLICY_EXISTS":      "Der Service-Desk hat für diese Priorität bereits eine SLA-Richtlinie.",
			"reason.USER_NOT_MEMBER":        "Eine hier genannte Person ist kein Mitglied dieses Projekts.",
			"reason.INCIDENT_NOT_FOUND":     "Der Vorfall wurde nicht gefunden.",
			"reason.INCIDENT_RESOLVED":      "Der Vorfall ist bereits behoben.",
			"field.TOO_MANY":                "darf höchstens {max} Einträge enthalten",

			"notification.SLA_BREACHED.title":          "SLA verletzt bei {issueKey}",
			"notification.SLA_BREACHED.body":           "{issueKey} „{issueTitle}“ wurde nicht innerhalb von {minutes} Minuten gelöst ({policy}).",
			"notification.SLA_RESPONSE_BREACHED.title": "Keine erste Antwort auf {issueKey}",
			"notification.SLA_RESPONSE_BREACHED.body":  "Niemand hat das Ticket {issueKey} „{issueTitle}“ innerhalb von {minutes} Minuten beantwortet ({policy}).",
			"notification.SLA_ESCALATED.title":         "{issueKey} wurde eskaliert",
			"notification.SLA_ESCALATED.body":          "{issueKey} „{issueTitle}“ ist seit {minutes} Minuten unter {policy} offen und wurde eskaliert.",
			"notification.INCIDENT.title":              "Vorfall {severity} bei {issueKey}",
			"notification.INCIDENT.body":               "{actor} hat einen Vorfall der Stufe {severity} bei {issueKey} „{issueTitle}“ gemeldet.",

			"mail.ticket.subject": "[{issueKey}] Wir haben Ihre Anfrage erhalten: {title}",
			"mail.ticket.body":    "Vielen Dank für Ihre Nachricht. Wir haben sie als Ticket {issueKey} erfasst und melden uns bei Ihnen.\n\nUm etwas zu ergänzen, antworten Sie auf diese E-Mail und lassen Sie [{issueKey}] im Betreff stehen.",
		},
	} {
		cat := catalogs[lang]
		for k, v := range msgs {
			cat[k] = v
		}
	}
}
