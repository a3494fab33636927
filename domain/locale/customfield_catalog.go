package locale

// Messages of custom fields. {field} is the field's name as its project defined it (or
// the id the request sent twice); CUSTOM_FIELD_INVALID has one message per type, saying
// what a value of that type looks like.
func init() {
	for lang, msgs := range map[string]map[string]string{
		English: {
			"reason.CUSTOM_FIELD_NOT_FOUND":    "The custom field was not found.",
			"reason.OPTION_NOT_FOUND":          "The option was not found.",
			"reason.DUPLICATE_LABEL":           "This label is already used in the field.",
			"reason.CUSTOM_FIELD_NOT_DROPDOWN": "Only DROPDOWN fields have options.",
			"reason.DUPLICATE_FIELD":           "A field is named more than once.",
			"reason.BODY_NOT_ARRAY":            "The body is a JSON array.",
			"reason.CUSTOM_FIELD_INVALID":      "The value of the custom field {field} is invalid.",
			"reason.CUSTOM_FIELD_REQUIRED":     "The custom field {field} is required.",
			"customField.invalid.TEXT":         "The custom field {field} takes text of at most 10000 characters.",
			"customField.invalid.NUMBER":       "The custom field {field} takes a decimal number such as 12 or -3.5.",
			"customField.invalid.DATE":         "The custom field {field} takes a date as YYYY-MM-DD.",
			"customField.invalid.DROPDOWN":     "The custom field {field} takes the id of one of its options.",
			"customField.invalid.CHECKBOX":     "The custom field {field} takes \"true\" or \"false\".",
			"customField.invalid.FIELD":        "The custom field {field} is named more than once.",
		},
		German: {
			"reason.CUSTOM_FIELD_NOT_FOUND":    "Das benutzerdefinierte Feld wurde nicht gefunden.",
			"reason.OPTION_NOT_FOUND":          "Die Option wurde nicht gefunden.",
			"reason.DUPLICATE_LABEL":           "Diese Beschriftung wird im Feld bereits verwendet.",
			"reason.CUSTOM_FIELD_NOT_DROPDOWN": "Nur DROPDOWN-Felder haben Optionen.",
			"reason.DUPLICATE_FIELD":           "Ein Feld wird mehrfach genannt.",
			"reason.BODY_NOT_ARRAY":            "Der Inhalt ist ein JSON-Array.",
			"reason.CUSTOM_FIELD_INVALID":      "Der Wert des benutzerdefinierten Felds {field} ist ungültig.",
			"reason.CUSTOM_FIELD_REQUIRED":     "Das benutzerdefinierte Feld {field} ist erforderlich.",
			"customField.invalid.TEXT":         "Das benutzerdefinierte Feld {field} nimmt Text mit höchstens 10000 Zeichen.",
			"customField.invalid.NUMBER":       "Das benutzerdefinierte Feld {field} nimmt eine Dezimalzahl wie 12 oder -3.5.",
			"customField.invalid.DATE":         "Das benutzerdefinierte Feld {field} nimmt ein Datum als JJJJ-MM-TT.",
			"customField.invalid.DROPDOWN":     "Das benutzerdefinierte Feld {field} nimmt die ID einer seiner Optionen.",
			"customField.invalid.CHECKBOX":     "Das benutzerdefinierte Feld {field} nimmt „true“ oder „false“.",
			"customField.invalid.FIELD":        "Das benutzerdefinierte Feld {field} wird mehrfach genannt.",
		},
	} {
		cat := catalogs[lang]
		for k, v := range msgs {
			cat[k] = v
		}
	}
}
