package locale

// Messages of the conventions clients rely on across every endpoint: safe retries
// (Idempotency-Key), conditional requests, the reasons every area shares. A key another catalog file already set is
// left as that file wrote it.
func init() {
	for lang, msgs := range map[string]map[string]string{
		English: {
			"error.UNPROCESSABLE_ENTITY":         "The request cannot be processed.",
			"error.PRECONDITION_FAILED":          "The resource changed since you read it. Read it again and repeat the change.",
			"reason.PROJECT_NOT_FOUND":           "The project does not exist, or you cannot see it.",
			"reason.INVALID_IDEMPOTENCY_KEY":     "The Idempotency-Key must be 1 to {max} visible ASCII characters.",
			"reason.IDEMPOTENCY_IN_PROGRESS":     "A request with this Idempotency-Key is still running. Retry it in a moment.",
			"reason.IDEMPOTENCY_KEY_REUSED":      "This Idempotency-Key was already used for another request.",
			"reason.IDEMPOTENCY_ANSWER_NOT_KEPT": "The request with this Idempotency-Key was done, but its answer was too large to keep.",
		},
		German: {
			"error.UNPROCESSABLE_ENTITY":         "Die Anfrage kann nicht verarbeitet werden.",
			"error.PRECONDITION_FAILED":          "Die Ressource wurde seit dem Lesen geändert. Bitte neu laden und die Änderung wiederholen.",
			"reason.PROJECT_NOT_FOUND":           "Das Projekt existiert nicht, oder Sie können es nicht sehen.",
			"reason.INVALID_IDEMPOTENCY_KEY":     "Der Idempotency-Key muss aus 1 bis {max} sichtbaren ASCII-Zeichen bestehen.",
			"reason.IDEMPOTENCY_IN_PROGRESS":     "Eine Anfrage mit diesem Idempotency-Key läuft noch. Bitte gleich erneut versuchen.",
			"reason.IDEMPOTENCY_KEY_REUSED":      "Dieser Idempotency-Key wurde bereits für eine andere Anfrage verwendet.",
			"reason.IDEMPOTENCY_ANSWER_NOT_KEPT": "Die Anfrage mit diesem Idempotency-Key wurde ausgeführt, ihre Antwort war aber zu groß zum Aufbewahren.",
		},
	} {
		cat := catalogs[lang]
		for k, v := range msgs {
			if _, ok := cat[k]; !ok {
				cat[k] = v
			}
		}
	}
}
