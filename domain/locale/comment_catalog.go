package locale

// Messages of comments and the activity feed, kept beside each other in both languages
// so the catalogs stay in step.
func init() {
	for k, v := range map[string]string{
		"reason.COMMENT_NOT_FOUND":   "The comment was not found.",
		"reason.NOT_AUTHOR":          "Only the author can edit this comment.",
		"reason.NOT_AUTHOR_OR_ADMIN": "Only the author or a project admin can delete this comment.",
		"field.SANITIZED_EMPTY":      "must still contain something once unsafe HTML is removed",
	} {
		en[k] = v
	}
	for k, v := range map[string]string{
		"reason.COMMENT_NOT_FOUND":   "Der Kommentar wurde nicht gefunden.",
		"reason.NOT_AUTHOR":          "Nur die Verfasserin oder der Verfasser kann diesen Kommentar bearbeiten.",
		"reason.NOT_AUTHOR_OR_ADMIN": "Nur die Verfasserin oder der Verfasser oder eine Projektadministration kann diesen Kommentar löschen.",
		"field.SANITIZED_EMPTY":      "darf nach dem Entfernen von unsicherem HTML nicht leer sein",
	} {
		de[k] = v
	}
}
