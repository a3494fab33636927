package locale

// Messages of sprints, the board and the backlog, kept beside each other in both
// languages so the catalogs stay in step. SPRINT_NOT_FOUND, SPRINT_NOT_IN_PROJECT and
// SPRINT_STATE live in the issue catalog, which uses them first.
func init() {
	for k, v := range map[string]string{
		"reason.SPRINT_ALREADY_ACTIVE": "Another sprint is already active.",
		"reason.ISSUE_NOT_IN_SPRINT":   "The issue is not in this sprint.",
		"field.SPRINT_DATE_ORDER":      "must not be before the start date",
	} {
		en[k] = v
	}
	for k, v := range map[string]string{
		"reason.SPRINT_ALREADY_ACTIVE": "Es ist bereits ein anderer Sprint aktiv.",
		"reason.ISSUE_NOT_IN_SPRINT":   "Der Vorgang ist nicht in diesem Sprint.",
		"field.SPRINT_DATE_ORDER":      "darf nicht vor dem Startdatum liegen",
	} {
		de[k] = v
	}
}
