package locale

// Messages of the stored-link rule (domain/weblink). A key another catalog file already
// set is left as that file wrote it.
func init() {
	for lang, msgs := range map[string]map[string]string{
		English: {"field.HTTP_URL": "must be an absolute http or https URL"},
		German:  {"field.HTTP_URL": "muss eine absolute http- oder https-URL sein"},
	} {
		cat := catalogs[lang]
		for k, v := range msgs {
			if _, ok := cat[k]; !ok {
				cat[k] = v
			}
		}
	}
}
