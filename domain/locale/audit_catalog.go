package locale

// Messages of the audit API. A key another catalog file already set is left as that
// file wrote it.
func init() {
	for lang, msgs := range map[string]map[string]string{
		English: {
			"reason.INVALID_INSTANT":       "{field} must be an instant such as 2026-01-31T12:00:00Z.",
			"reason.INVALID_TIME_RANGE":    "from must not be after to.",
			"reason.UNKNOWN_EXPORT_FORMAT": "format must be json or csv.",
			"reason.INVALID_QUERY":         "The query parameter {field} has an invalid value.",
		},
		German: {
			"reason.INVALID_INSTANT":       "{field} muss ein Zeitpunkt wie 2026-01-31T12:00:00Z sein.",
			"reason.INVALID_TIME_RANGE":    "from darf nicht nach to liegen.",
			"reason.UNKNOWN_EXPORT_FORMAT": "format muss json oder csv sein.",
			"reason.INVALID_QUERY":         "Der Abfrageparameter {field} hat einen ungültigen Wert.",
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
