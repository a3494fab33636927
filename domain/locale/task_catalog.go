package locale

// Messages of tasks (GET /tasks/{id}, bulk changes, exports, imports), kept beside each
// other in both languages so the catalogs stay in step.
func init() {
	for k, v := range map[string]string{
		"reason.TASK_NOT_FOUND":    "The task was not found.",
		"reason.TASK_FINISHED":     "The task has already finished.",
		"reason.TASK_NO_RESULT":    "The task has no result to download.",
		"reason.TASK_NOT_UNDOABLE": "Only a failed or cancelled import can be undone, once.",
		"reason.NO_CHANGES":        "changes must change at least one thing.",
		"reason.BULK_TARGET":       "Send either issueKeys or filter.",
		"reason.TOO_MANY_ISSUES":   "A bulk change covers at most {max} issues.",
		"reason.UNKNOWN_ISSUE_KEY": "{field} names no issue of this project.",
		"reason.INVALID_MINE":      "mine must be true: the list shows the caller's own tasks.",
		"reason.FIELD_TOO_LONG":    "The form field {field} is too long.",
	} {
		en[k] = v
	}
	for k, v := range map[string]string{
		"reason.TASK_NOT_FOUND":    "Die Aufgabe wurde nicht gefunden.",
		"reason.TASK_FINISHED":     "Die Aufgabe ist bereits beendet.",
		"reason.TASK_NO_RESULT":    "Die Aufgabe hat kein Ergebnis zum Herunterladen.",
		"reason.TASK_NOT_UNDOABLE": "Nur ein fehlgeschlagener oder abgebrochener Import kann rückgängig gemacht werden, einmal.",
		"reason.NO_CHANGES":        "changes muss mindestens eine Änderung enthalten.",
		"reason.BULK_TARGET":       "Senden Sie entweder issueKeys oder filter.",
		"reason.TOO_MANY_ISSUES":   "Eine Massenänderung umfasst höchstens {max} Vorgänge.",
		"reason.UNKNOWN_ISSUE_KEY": "{field} nennt keinen Vorgang dieses Projekts.",
		"reason.INVALID_MINE":      "mine muss true sein: die Liste zeigt die eigenen Aufgaben.",
		"reason.FIELD_TOO_LONG":    "Das Formularfeld {field} ist zu lang.",
	} {
		de[k] = v
	}
}
