package locale

// Messages of the service desk, incidents and the SLA monitor's notifications. Issue
// keys, severities and policy names are filled in as they are.
func init() {
	for lang, msgs := range map[string]map[string]string{
		English: {
			"reason.SLA_CALENDAR_NOT_FOUND":     "The business-hours calendar was not found.",
			"reason.SLA_CALENDAR_IN_USE":        "An SLA policy counts in this calendar; delete or change the policy first.",
			"reason.SLA_CALENDAR_LIMIT":         "The service desk has as many calendars as it may have.",
			"field.TIMEZONE":                    "must be an IANA time zone such as Europe/Berlin",
			"field.NOT_EMPTY":                   "must hold at least one entry",
			"field.TIME_OF_DAY":                 "must be a time of day from 00:00 to 24:00 (HH:MM)",
			"field.WORKING_HOURS_ORDER":         "must be after the start",
			"reason.SERVICE_DESK_NOT_FOUND":     "This project has no service desk.",
			"reason.DESK_EMAIL_TAKEN":           "Another project's service desk already uses this e-mail address.",
			"reason.DESK_EMAIL_RESERVED":        "This is the shared mailbox's own address; no service desk can use it.",
			"reason.DESK_EMAIL_NOT_PENDING":     "The service desk has no e-mail address waiting for verification.",
			"reason.DESK_EMAIL_CODE_INVALID":    "The verification code is wrong.",
			"reason.DESK_EMAIL_CODE_EXPIRED":    "The verification code has expired or was used up; ask for a new one.",
			"reason.DESK_EMAIL_RESEND_TOO_SOON": "A verification e-mail was sent moments ago; wait a minute.",
			"reason.DESK_EMAIL_CHANGED":         "The service desk's e-mail address is not the one to approve.",
			"reason.SLA_POLICY_NOT_FOUND":       "The SLA policy was not found.",
			"reason.SLA_POLICY_EXISTS":          "The service desk already has an SLA policy for this priority.",
			"reason.USER_NOT_MEMBER":            "A user named here is not a member of this project.",
			"reason.INCIDENT_NOT_FOUND":         "The incident was not found.",
			"reason.INCIDENT_RESOLVED":          "The incident is already resolved.",
			"field.TOO_MANY":                    "must hold at most {max} entries",

			"notification.SLA_BREACHED.title":          "SLA breached on {issueKey}",
			"notification.SLA_BREACHED.body":           "{issueKey} “{issueTitle}” was not resolved within {minutes} minutes ({policy}).",
			"notification.SLA_RESPONSE_BREACHED.title": "No first response on {issueKey}",
			"notification.SLA_RESPONSE_BREACHED.body":  "Nobody answered ticket {issueKey} “{issueTitle}” within {minutes} minutes ({policy}).",
			"notification.SLA_ESCALATED.title":         "{issueKey} was escalated",
			"notification.SLA_ESCALATED.body":          "{issueKey} “{issueTitle}” has been open for {minutes} minutes under {policy} and was escalated.",
			"notification.INCIDENT.title":              "Incident {severity} on {issueKey}",
			"notification.INCIDENT.body":               "{actor} declared a {severity} incident on {issueKey} “{issueTitle}”.",

			"mail.ticket.subject":      "[{issueKey}] We received your request: {title}",
			"mail.ticket.body":         "Thank you for your message. We have recorded it as ticket {issueKey} and will get back to you.\n\nTo add to it, reply to this e-mail and keep [{issueKey}] in the subject.",
			"mail.deskAddress.subject": "Confirm the service desk address {address}",
			"mail.deskAddress.body":    "The service desk of project {projectKey} is set to receive e-mail at {address}. No mail is routed to it until a project admin confirms it with this code:\n\n    {code}\n\nEnter it in the service desk settings of {projectKey} (POST /api/v1/projects/{projectKey}/service-desk/email/verify). It works for {hours} hours. If you did not expect this e-mail, ignore it: nothing changes.",
		},
		German: {
			"reason.SLA_CALENDAR_NOT_FOUND":     "Der Geschäftszeiten-Kalender wurde nicht gefunden.",
			"reason.SLA_CALENDAR_IN_USE":        "Eine SLA-Richtlinie rechnet mit diesem Kalender; löschen oder ändern Sie zuerst die Richtlinie.",
			"reason.SLA_CALENDAR_LIMIT":         "Der Service-Desk hat bereits so viele Kalender, wie er haben darf.",
			"field.TIMEZONE":                    "muss eine IANA-Zeitzone wie Europe/Berlin sein",
			"field.NOT_EMPTY":                   "muss mindestens einen Eintrag enthalten",
			"field.TIME_OF_DAY":                 "muss eine Uhrzeit von 00:00 bis 24:00 sein (HH:MM)",
			"field.WORKING_HOURS_ORDER":         "muss nach dem Beginn liegen",
			"reason.SERVICE_DESK_NOT_FOUND":     "Dieses Projekt hat keinen Service-Desk.",
			"reason.DESK_EMAIL_TAKEN":           "Der Service-Desk eines anderen Projekts verwendet diese E-Mail-Adresse bereits.",
			"reason.DESK_EMAIL_RESERVED":        "Dies ist die eigene Adresse des gemeinsamen Postfachs; kein Service-Desk kann sie verwenden.",
			"reason.DESK_EMAIL_NOT_PENDING":     "Der Service-Desk hat keine E-Mail-Adresse, die auf Bestätigung wartet.",
			"reason.DESK_EMAIL_CODE_INVALID":    "Der Bestätigungscode ist falsch.",
			"reason.DESK_EMAIL_CODE_EXPIRED":    "Der Bestätigungscode ist abgelaufen oder verbraucht; fordern Sie einen neuen an.",
			"reason.DESK_EMAIL_RESEND_TOO_SOON": "Eine Bestätigungs-E-Mail wurde gerade erst gesendet; warten Sie eine Minute.",
			"reason.DESK_EMAIL_CHANGED":         "Die E-Mail-Adresse des Service-Desks ist nicht die zu bestätigende.",
			"reason.SLA_POLICY_NOT_FOUND":       "Die SLA-Richtlinie wurde nicht gefunden.",
			"reason.SLA_POLICY_EXISTS":          "Der Service-Desk hat für diese Priorität bereits eine SLA-Richtlinie.",
			"reason.USER_NOT_MEMBER":            "Eine hier genannte Person ist kein Mitglied dieses Projekts.",
			"reason.INCIDENT_NOT_FOUND":         "Der Vorfall wurde nicht gefunden.",
			"reason.INCIDENT_RESOLVED":          "Der Vorfall ist bereits behoben.",
			"field.TOO_MANY":                    "darf höchstens {max} Einträge enthalten",

			"notification.SLA_BREACHED.title":          "SLA verletzt bei {issueKey}",
			"notification.SLA_BREACHED.body":           "{issueKey} „{issueTitle}“ wurde nicht innerhalb von {minutes} Minuten gelöst ({policy}).",
			"notification.SLA_RESPONSE_BREACHED.title": "Keine erste Antwort auf {issueKey}",
			"notification.SLA_RESPONSE_BREACHED.body":  "Niemand hat das Ticket {issueKey} „{issueTitle}“ innerhalb von {minutes} Minuten beantwortet ({policy}).",
			"notification.SLA_ESCALATED.title":         "{issueKey} wurde eskaliert",
			"notification.SLA_ESCALATED.body":          "{issueKey} „{issueTitle}“ ist seit {minutes} Minuten unter {policy} offen und wurde eskaliert.",
			"notification.INCIDENT.title":              "Vorfall {severity} bei {issueKey}",
			"notification.INCIDENT.body":               "{actor} hat einen Vorfall der Stufe {severity} bei {issueKey} „{issueTitle}“ gemeldet.",

			"mail.ticket.subject":      "[{issueKey}] Wir haben Ihre Anfrage erhalten: {title}",
			"mail.ticket.body":         "Vielen Dank für Ihre Nachricht. Wir haben sie als Ticket {issueKey} erfasst und melden uns bei Ihnen.\n\nUm etwas zu ergänzen, antworten Sie auf diese E-Mail und lassen Sie [{issueKey}] im Betreff stehen.",
			"mail.deskAddress.subject": "Bestätigen Sie die Service-Desk-Adresse {address}",
			"mail.deskAddress.body":    "Der Service-Desk des Projekts {projectKey} soll E-Mails an {address} empfangen. Bis ein Projekt-Admin sie mit diesem Code bestätigt, wird keine E-Mail dorthin geleitet:\n\n    {code}\n\nGeben Sie ihn in den Service-Desk-Einstellungen von {projectKey} ein (POST /api/v1/projects/{projectKey}/service-desk/email/verify). Er gilt {hours} Stunden. Wenn Sie diese E-Mail nicht erwartet haben, ignorieren Sie sie: es ändert sich nichts.",
		},
	} {
		cat := catalogs[lang]
		for k, v := range msgs {
			cat[k] = v
		}
	}
}
