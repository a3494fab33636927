package locale

// Messages of the real-time endpoint. A key another catalog file already set is left as
// that file wrote it.
func init() {
	for lang, msgs := range map[string]map[string]string{
		English: {
			"error.UPGRADE_REQUIRED":    "This endpoint speaks WebSocket only.",
			"reason.WEBSOCKET_REQUIRED": "Open a WebSocket (STOMP 1.2) connection to this endpoint.",
		},
		German: {
			"error.UPGRADE_REQUIRED":    "Dieser Endpunkt spricht nur WebSocket.",
			"reason.WEBSOCKET_REQUIRED": "Öffnen Sie eine WebSocket-Verbindung (STOMP 1.2) zu diesem Endpunkt.",
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
