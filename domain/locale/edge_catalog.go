package locale

// Messages of requests refused before routing (api/edge_errors.go). A key another
// catalog file already set is left as that file wrote it.
func init() {
	for lang, msgs := range map[string]map[string]string{
		English: {
			"error.URI_TOO_LONG":       "The request URI is too long.",
			"error.HEADERS_TOO_LARGE":  "The request headers are too large.",
			"error.REQUEST_TIMEOUT":    "The request was not received in time.",
			"reason.MALFORMED_REQUEST": "The request is not valid HTTP.",
			"reason.SHUTTING_DOWN":     "The server stopped before the request finished; nothing was kept. Send it again.",
		},
		German: {
			"error.URI_TOO_LONG":       "Die Anfrage-URI ist zu lang.",
			"error.HEADERS_TOO_LARGE":  "Die Kopfzeilen der Anfrage sind zu groß.",
			"error.REQUEST_TIMEOUT":    "Die Anfrage kam nicht rechtzeitig an.",
			"reason.MALFORMED_REQUEST": "Die Anfrage ist kein gültiges HTTP.",
			"reason.SHUTTING_DOWN":     "Der Server wurde beendet, bevor die Anfrage fertig war; nichts wurde gespeichert. Bitte erneut senden.",
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
