package workers

import "github.com/riverqueue/river"

// addNotificationWorkers registers the notification and e-mail workers.
func addNotificationWorkers(ws *river.Workers, cfg Config, d Deps) []*river.PeriodicJob { return nil }
