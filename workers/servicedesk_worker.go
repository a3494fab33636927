package workers

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/taskweave/taskweave/domain/servicedesk"
	"github.com/taskweave/taskweave/jobs"
)

// ServiceDeskConfig is the service desk's part of the worker configuration.
type ServiceDeskConfig struct {
	// SLAInterval is the breach monitor's period (TW_SLA_INTERVAL); zero is 60 s.
	SLAInterval time.Duration
	// Now is the breach monitor's clock; nil is time.Now (tests move it).
	Now func() time.Time
}

// DefaultSLAInterval is the breach monitor's period when TW_SLA_INTERVAL is unset.
const DefaultSLAInterval = time.Minute

// addServiceDeskWorkers registers the SLA breach monitor and returns its periodic job.
//
// River enqueues periodic jobs only on the elected leader among the worker processes
// sharing the database, so N workers scan once per period, not N times. Leadership can
// move (a leader dies, a new one is elected and enqueues on its own schedule), so that
// alone would not keep a breach from being reported twice: sla_reports' unique key does,
// whoever scans and however often.
func addServiceDeskWorkers(ws *river.Workers, cfg Config, d Deps) []*river.PeriodicJob {
	m := servicedesk.NewMetrics(d.Registry)
	river.AddWorker(ws, &SLAScanWorker{Monitor: servicedesk.NewMonitor(d.DB, d.Bus, m, cfg.ServiceDesk.Now), Log: d.Log})
	interval := cfg.ServiceDesk.SLAInterval
	if interval <= 0 {
		interval = DefaultSLAInterval
	}
	return []*river.PeriodicJob{
		river.NewPeriodicJob(river.PeriodicInterval(interval), func() (river.JobArgs, *river.InsertOpts) {
			return jobs.SLAScan{}, nil
		}, &river.PeriodicJobOpts{ID: "sla_scan", RunOnStart: true}),
	}
}

// SLAScanWorker runs one breach monitor scan.
type SLAScanWorker struct {
	river.WorkerDefaults[jobs.SLAScan]
	Monitor *servicedesk.Monitor
	Log     *slog.Logger
}

// Work implements river.Worker. A failed scan is not retried (MaxAttempts 1): the next
// period scans again and reports whatever this one did not.
func (w *SLAScanWorker) Work(ctx context.Context, _ *river.Job[jobs.SLAScan]) error {
	res, err := w.Monitor.Scan(ctx)
	if err != nil {
		return err
	}
	if res != (servicedesk.ScanResult{}) && w.Log != nil {
		w.Log.InfoContext(ctx, "sla scan reported", "resolution_breaches", res.Resolution, "response_breaches", res.Response,
			"escalations", res.Escalations, "assigned", res.Assigned)
	}
	return nil
}
