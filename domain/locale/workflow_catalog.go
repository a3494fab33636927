package locale

// Messages of the workflow editor, kept beside each other in both languages so the
// catalogs stay in step.
func init() {
	for k, v := range map[string]string{
		"reason.WORKFLOW_NOT_FOUND":      "The project has no workflow.",
		"reason.STATUS_NOT_FOUND":        "The status was not found in this project's workflow.",
		"reason.TRANSITION_NOT_FOUND":    "The transition was not found in this project's workflow.",
		"reason.IN_USE":                  "The status is used by issues; move them to another status first.",
		"reason.INVALID_STATUS_CATEGORY": "category must be one of TODO, IN_PROGRESS, DONE.",
		"reason.UNKNOWN_GUARD_TYPE":      "Unknown guard type {type}; use REQUIRED_FIELD or ROLE_RESTRICTION.",
		"reason.UNKNOWN_GUARD_ROLE":      "Unknown role {role} in a ROLE_RESTRICTION guard; use ADMIN, MEMBER, VIEWER or NONE.",
		"field.STATUS_COLOR":             "must be a color like #6c8fef",
		"field.LAYOUT_COORDINATE":        "must be between {min} and {max}",
	} {
		en[k] = v
	}
	for k, v := range map[string]string{
		"reason.WORKFLOW_NOT_FOUND":      "Das Projekt hat keinen Workflow.",
		"reason.STATUS_NOT_FOUND":        "Der Status wurde im Workflow dieses Projekts nicht gefunden.",
		"reason.TRANSITION_NOT_FOUND":    "Der Übergang wurde im Workflow dieses Projekts nicht gefunden.",
		"reason.IN_USE":                  "Der Status wird von Vorgängen verwendet; verschieben Sie diese zuerst in einen anderen Status.",
		"reason.INVALID_STATUS_CATEGORY": "category muss TODO, IN_PROGRESS oder DONE sein.",
		"reason.UNKNOWN_GUARD_TYPE":      "Unbekannter Guard-Typ {type}; erlaubt sind REQUIRED_FIELD und ROLE_RESTRICTION.",
		"reason.UNKNOWN_GUARD_ROLE":      "Unbekannte Rolle {role} in einem ROLE_RESTRICTION-Guard; erlaubt sind ADMIN, MEMBER, VIEWER und NONE.",
		"field.STATUS_COLOR":             "muss eine Farbe wie #6c8fef sein",
		"field.LAYOUT_COORDINATE":        "muss zwischen {min} und {max} liegen",
	} {
		de[k] = v
	}
}
