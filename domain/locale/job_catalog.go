package locale

// Messages of the job operations for support staff (GET/POST /admin/jobs…, River UI at
// /admin/river/), kept beside each other in both languages so the catalogs stay in step.
func init() {
	for k, v := range map[string]string{
		"reason.JOB_NOT_FOUND":      "The job was not found; River may already have removed it.",
		"reason.INVALID_JOB_ID":     "The job id must be a positive whole number.",
		"reason.INVALID_JOB_IDS":    "ids must list 1 to {max} job ids, each a positive whole number.",
		"reason.JOB_RUNNING":        "The job is running; it can be deleted once its worker returns.",
		"reason.QUEUE_NOT_FOUND":    "The queue was not found; River lists a queue once a worker has served it.",
		"reason.CROSS_SITE_REQUEST": "Requests from another site are refused.",
	} {
		en[k] = v
	}
	for k, v := range map[string]string{
		"reason.JOB_NOT_FOUND":      "Der Job wurde nicht gefunden; River hat ihn womöglich schon entfernt.",
		"reason.INVALID_JOB_ID":     "Die Job-ID muss eine positive ganze Zahl sein.",
		"reason.INVALID_JOB_IDS":    "ids muss 1 bis {max} Job-IDs nennen, jede eine positive ganze Zahl.",
		"reason.JOB_RUNNING":        "Der Job läuft; er kann gelöscht werden, sobald sein Worker fertig ist.",
		"reason.QUEUE_NOT_FOUND":    "Die Queue wurde nicht gefunden; River kennt eine Queue, sobald ein Worker sie bedient hat.",
		"reason.CROSS_SITE_REQUEST": "Anfragen von einer anderen Website werden abgelehnt.",
	} {
		de[k] = v
	}
}
