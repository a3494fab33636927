package locale

// Messages of issues and versions. A key another catalog file already set (a shared
// reason such as DUPLICATE_NAME) is left as that file wrote it.
func init() {
	for lang, msgs := range map[string]map[string]string{
		English: {
			"reason.ISSUE_NOT_FOUND":       "The issue was not found.",
			"reason.INVALID_ISSUE_REF":     "An issue is named by its key (ABC-12) or its id.",
			"reason.ASSIGNEE_NOT_MEMBER":   "The assignee is not a member of this project.",
			"reason.PARENT_NOT_FOUND":      "The parent issue was not found in this project.",
			"reason.SUBTASK_NEEDS_PARENT":  "A subtask needs a parent issue.",
			"reason.SPRINT_NOT_FOUND":      "The sprint was not found.",
			"reason.SPRINT_NOT_IN_PROJECT": "The sprint belongs to another project.",
			"reason.SPRINT_STATE":          "The sprint's state does not allow this.",
			"reason.VERSION_NOT_FOUND":     "The version was not found.",
			"reason.DUPLICATE_NAME":        "This name is already used in the project.",
			"reason.INVALID_ENUM":          "{field} must be one of {values}.",
			"reason.INVALID_QUERY":         "The query parameter {field} has an invalid value.",
			"reason.TOO_MANY_FILTERS":      "At most {max} {field} filters can be combined in one list.",
			"reason.SEARCH_TOO_LONG":       "A search text holds at most {max} characters and {terms} words.",
			"field.RANGE":                  "must be between {min} and {max}",
			"field.DATE":                   "must be a date in the form YYYY-MM-DD",
		},
		German: {
			"reason.ISSUE_NOT_FOUND":       "Der Vorgang wurde nicht gefunden.",
			"reason.INVALID_ISSUE_REF":     "Ein Vorgang wird über seinen Schlüssel (ABC-12) oder seine ID angegeben.",
			"reason.ASSIGNEE_NOT_MEMBER":   "Die zugewiesene Person ist kein Mitglied dieses Projekts.",
			"reason.PARENT_NOT_FOUND":      "Der übergeordnete Vorgang wurde in diesem Projekt nicht gefunden.",
			"reason.SUBTASK_NEEDS_PARENT":  "Eine Unteraufgabe braucht einen übergeordneten Vorgang.",
			"reason.SPRINT_NOT_FOUND":      "Der Sprint wurde nicht gefunden.",
			"reason.SPRINT_NOT_IN_PROJECT": "Der Sprint gehört zu einem anderen Projekt.",
			"reason.SPRINT_STATE":          "Der Zustand des Sprints lässt das nicht zu.",
			"reason.VERSION_NOT_FOUND":     "Die Version wurde nicht gefunden.",
			"reason.DUPLICATE_NAME":        "Dieser Name wird im Projekt bereits verwendet.",
			"reason.INVALID_ENUM":          "{field} muss einer der Werte {values} sein.",
			"reason.INVALID_QUERY":         "Der Abfrageparameter {field} hat einen ungültigen Wert.",
			"reason.TOO_MANY_FILTERS":      "Höchstens {max} {field}-Filter lassen sich in einer Liste kombinieren.",
			"reason.SEARCH_TOO_LONG":       "Ein Suchtext hat höchstens {max} Zeichen und {terms} Wörter.",
			"field.RANGE":                  "muss zwischen {min} und {max} liegen",
			"field.DATE":                   "muss ein Datum der Form JJJJ-MM-TT sein",
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
