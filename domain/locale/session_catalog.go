package locale

// Messages of login sessions and their access tokens. A key another catalog file already
// set is left as that file wrote it.
func init() {
	for lang, msgs := range map[string]map[string]string{
		English: {
			"reason.TOKEN_EXPIRED": "The access token has expired; refresh it and try again.",
		},
		German: {
			"reason.TOKEN_EXPIRED": "Das Zugriffstoken ist abgelaufen; erneuern Sie es und versuchen Sie es noch einmal.",
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
