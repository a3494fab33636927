package locale

// Messages of the job operations for support staff (GET/POST /admin/jobs…), kept beside
// each other in both languages so the catalogs stay in step.
func init() {
	for k, v := range map[string]string{
		"reason.JOB_NOT_FOUND":  "The job was not found; River may already have removed it.",
		"reason.INVALID_JOB_ID": "The job id must be a positive whole number.",
	} {
		en[k] = v
	}
	for k, v := range map[string]string{
		"reason.JOB_NOT_FOUND":  "Der Job wurde nicht gefunden; River hat ihn womöglich schon entfernt.",
		"reason.INVALID_JOB_ID": "Die Job-ID muss eine positive ganze Zahl sein.",
	} {
		de[k] = v
	}
}
