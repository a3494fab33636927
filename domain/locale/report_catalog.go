package locale

// Messages of reports and dashboards. SPRINT_NOT_FOUND and SPRINT_NOT_IN_PROJECT are
// shared with sprints and issues and live in issue_catalog.go; a key another catalog file
// already set is left as that file wrote it.
func init() {
	for lang, msgs := range map[string]map[string]string{
		English: {
			"reason.WIDGET_NOT_FOUND": "The widget was not found on this project's dashboard.",
			"reason.LAYOUT_NOT_ARRAY": "The layout is a JSON array of widget positions.",
		},
		German: {
			"reason.WIDGET_NOT_FOUND": "Das Widget wurde auf dem Dashboard dieses Projekts nicht gefunden.",
			"reason.LAYOUT_NOT_ARRAY": "Das Layout ist ein JSON-Array von Widget-Positionen.",
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
