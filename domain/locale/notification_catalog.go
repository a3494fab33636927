package locale

// Texts of in-app notifications and notification e-mails, rendered in the recipient's
// language when a notification is created. Issue keys, project keys and status names
// are filled in as they are: identifiers and user data are never translated.
func init() {
	for k, v := range map[string]string{
		"reason.NOTIFICATION_NOT_FOUND": "The notification was not found.",

		"notification.actor.system": "Taskweave",

		"notification.ISSUE_ASSIGNED.title":  "{issueKey} was assigned to you",
		"notification.ISSUE_ASSIGNED.body":   "{actor} assigned {issueKey} “{issueTitle}” to you.",
		"notification.STATUS_CHANGED.title":  "{issueKey} moved to {newStatus}",
		"notification.STATUS_CHANGED.body":   "{actor} moved {issueKey} “{issueTitle}” from {oldStatus} to {newStatus}.",
		"notification.COMMENT_MENTION.title": "{actor} mentioned you on {issueKey}",
		"notification.COMMENT_MENTION.body":  "{issueKey} “{issueTitle}”: {excerpt}",
		"notification.COMMENT_ADDED.title":   "{actor} commented on {issueKey}",
		"notification.COMMENT_ADDED.body":    "{issueKey} “{issueTitle}”: {excerpt}",

		"mail.greeting": "Hello {name},",
		"mail.open":     "Open in Taskweave: {url}",
		"mail.footer":   "You get this e-mail because e-mail notifications of this kind are switched on in your Taskweave account. You can switch them off per kind in your notification settings.",

		"digest.subject":     "Your Taskweave digest: {count} unread notifications",
		"digest.intro":       "Your {count} unread notifications from {start} to {end} (UTC):",
		"digest.more":        "… and {count} more.",
		"mail.digest.footer": "You get this digest because you chose e-mail digests in your Taskweave notification settings. You can switch them off there to get every e-mail at once, or switch e-mails off per kind.",
	} {
		en[k] = v
	}
	for k, v := range map[string]string{
		"reason.NOTIFICATION_NOT_FOUND": "Die Benachrichtigung wurde nicht gefunden.",

		"notification.actor.system": "Taskweave",

		"notification.ISSUE_ASSIGNED.title":  "{issueKey} wurde Ihnen zugewiesen",
		"notification.ISSUE_ASSIGNED.body":   "{actor} hat Ihnen {issueKey} „{issueTitle}“ zugewiesen.",
		"notification.STATUS_CHANGED.title":  "{issueKey} ist jetzt in {newStatus}",
		"notification.STATUS_CHANGED.body":   "{actor} hat {issueKey} „{issueTitle}“ von {oldStatus} nach {newStatus} verschoben.",
		"notification.COMMENT_MENTION.title": "{actor} hat Sie in {issueKey} erwähnt",
		"notification.COMMENT_MENTION.body":  "{issueKey} „{issueTitle}“: {excerpt}",
		"notification.COMMENT_ADDED.title":   "{actor} hat {issueKey} kommentiert",
		"notification.COMMENT_ADDED.body":    "{issueKey} „{issueTitle}“: {excerpt}",

		"mail.greeting": "Hallo {name},",
		"mail.open":     "In Taskweave öffnen: {url}",
		"mail.footer":   "Sie erhalten diese E-Mail, weil E-Mail-Benachrichtigungen dieser Art in Ihrem Taskweave-Konto eingeschaltet sind. Sie können sie in Ihren Benachrichtigungseinstellungen je Art abschalten.",

		"digest.subject":     "Ihre Taskweave-Zusammenfassung: {count} ungelesene Benachrichtigungen",
		"digest.intro":       "Ihre {count} ungelesenen Benachrichtigungen von {start} bis {end} (UTC):",
		"digest.more":        "… und {count} weitere.",
		"mail.digest.footer": "Sie erhalten diese Zusammenfassung, weil Sie in Ihren Taskweave-Benachrichtigungseinstellungen E-Mail-Zusammenfassungen gewählt haben. Dort können Sie sie abschalten, um jede E-Mail sofort zu erhalten, oder E-Mails je Art abschalten.",
	} {
		de[k] = v
	}
}
