package locale

// Messages of attachments and of the request body limits, kept beside each other in both
// languages so the catalogs stay in step.
func init() {
	for k, v := range map[string]string{
		"reason.ATTACHMENT_NOT_FOUND":    "The attachment was not found.",
		"reason.ATTACHMENT_FILE_MISSING": "The attachment's file is missing from the storage.",
		"reason.NOT_UPLOADER":            "Only the uploader or a project admin may delete this attachment.",
		"reason.STORAGE_UNAVAILABLE":     "The file storage is temporarily unavailable. Try again later.",
		"reason.FILE_TOO_LARGE":          "The file is larger than the limit of {limit} bytes.",
		"reason.BODY_TOO_LARGE":          "The request body is larger than the limit of {limit} bytes.",
		"reason.NOT_MULTIPART":           "Send the file as multipart/form-data.",
		"reason.MALFORMED_MULTIPART":     "The multipart/form-data body is malformed or incomplete.",
		"reason.MISSING_FILE_PART":       "Send the file in a part named \"file\".",
		"reason.TOO_MANY_FILES":          "Send exactly one file per upload.",
		"reason.RANGE_NOT_SATISFIABLE":   "The requested range starts past the end of the file.",
		"field.MEDIA_TYPE":               "must be a valid media type",
	} {
		en[k] = v
	}
	for k, v := range map[string]string{
		"reason.ATTACHMENT_NOT_FOUND":    "Der Anhang wurde nicht gefunden.",
		"reason.ATTACHMENT_FILE_MISSING": "Die Datei des Anhangs fehlt im Speicher.",
		"reason.NOT_UPLOADER":            "Nur wer den Anhang hochgeladen hat oder das Projekt administriert, darf ihn löschen.",
		"reason.STORAGE_UNAVAILABLE":     "Der Dateispeicher ist vorübergehend nicht verfügbar. Bitte später erneut versuchen.",
		"reason.FILE_TOO_LARGE":          "Die Datei ist größer als das Limit von {limit} Bytes.",
		"reason.BODY_TOO_LARGE":          "Der Anfrageinhalt ist größer als das Limit von {limit} Bytes.",
		"reason.NOT_MULTIPART":           "Die Datei muss als multipart/form-data gesendet werden.",
		"reason.MALFORMED_MULTIPART":     "Der multipart/form-data-Inhalt ist fehlerhaft oder unvollständig.",
		"reason.MISSING_FILE_PART":       "Die Datei muss in einem Teil namens \"file\" gesendet werden.",
		"reason.RANGE_NOT_SATISFIABLE":   "Der angefragte Bereich beginnt hinter dem Ende der Datei.",
		"reason.TOO_MANY_FILES":          "Pro Upload genau eine Datei senden.",
		"field.MEDIA_TYPE":               "muss ein gültiger Medientyp sein",
	} {
		de[k] = v
	}
}
