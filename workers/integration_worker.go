package workers

import "github.com/riverqueue/river"

// addIntegrationWorkers registers the worker that parses incoming provider payloads.
func addIntegrationWorkers(ws *river.Workers, cfg Config, d Deps) []*river.PeriodicJob { return nil }
