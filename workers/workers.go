// Package workers holds the River workers and periodic jobs of the worker process, and
// builds the working River client that runs them.
package workers

import (
	"cmp"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/taskweave/taskweave/domain/attachment"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/webhook"
	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/store"
)

// Config is the worker process's part of the configuration.
type Config struct {
	// Concurrency is River's MaxWorkers per queue.
	Concurrency int
	// JobTimeout bounds one run of a kind without a Timeout of its own (default 30 s);
	// RescueStuckJobsAfter is derived from it so a job of a killed worker is picked up
	// again within about a minute, not River's default hour.
	JobTimeout time.Duration
	// RescueAfter is how long a job may stay running before River hands it to another
	// worker (its process presumably died). Zero means JobTimeout plus rescueMargin; it
	// may not be shorter than JobTimeout (River's rule). A kind with a longer Timeout of
	// its own (the mailbox poll) is left alone by River's rescuer until that timeout has
	// passed too, so no live job runs twice.
	RescueAfter     time.Duration
	RateLimitWindow time.Duration
	// Webhook is the outgoing delivery configuration (retries, signing headers, retention).
	Webhook webhook.Config
	// Mail is the outgoing e-mail configuration; an empty Addr sends none.
	Mail MailConfig
	// BaseURL is the public address links in e-mails point to (TW_BASE_URL).
	BaseURL string
	// ServiceDesk is the SLA breach monitor's and the e-mail ingestion's configuration.
	ServiceDesk ServiceDeskConfig
	// AutomationRetention is how long automation executions are kept
	// (TW_AUTOMATION_RETENTION); zero is automation.DefaultRetention.
	AutomationRetention time.Duration
	// AutomationChainBudget is how many actions the rule runs of one chain may run
	// (TW_AUTOMATION_CHAIN_BUDGET); zero is automation.DefaultChainBudget.
	AutomationChainBudget int
	// AutomationProjectRate is how many actions the rules of one project may run per
	// minute (TW_AUTOMATION_PROJECT_RATE); zero is no limit.
	AutomationProjectRate int
	// JobRetention is how long River keeps finished jobs before its cleaner deletes them.
	JobRetention JobRetention
	// Digest is the e-mail digest job's schedule and clock.
	Digest DigestConfig
	// AutomationScheduleScan is how often the leader enqueues the scan that starts the
	// due runs of scheduled rules; zero is DefaultScheduleScan (tests shorten it).
	AutomationScheduleScan time.Duration
	// ID names the River client (River's default: host name and start time); tests
	// running several clients in one process tell them apart by it.
	ID string
	// AuditRetention is how long audit rows are kept (TW_AUDIT_RETENTION): months whose
	// end is older are dropped whole. Zero keeps every row.
	AuditRetention time.Duration
}

// DigestConfig is the periodic e-mail digest job's configuration.
type DigestConfig struct {
	// Interval is how often due digests are looked for; zero is DefaultDigestInterval.
	Interval time.Duration
	// Now is the digest's clock; nil is time.Now (tests move it).
	Now func() time.Time
}

// JobRetention is how long finished jobs are kept, by final state
// (TW_JOB_COMPLETED_RETENTION, TW_JOB_CANCELLED_RETENTION, TW_JOB_DISCARDED_RETENTION).
// Zero is River's default: a day for completed and cancelled jobs, a week for
// discarded ones. River's cleaner looks every 30 seconds and deletes expired jobs in
// batches of 10,000 rows (1,000 once a batch times out), each its own short statement.
type JobRetention struct {
	Completed, Cancelled, Discarded time.Duration
}

// MailConfig is the SMTP relay e-mails go through (TW_SMTP_ADDR, TW_SMTP_FROM).
type MailConfig struct {
	Addr string
	From string
}

// Deps are what the workers call.
type Deps struct {
	Log      *slog.Logger
	DB       *store.DB
	Registry *prometheus.Registry
	// Bus is the process's event bus (domain/pipeline), built on the same insert-only
	// River client as the API's: jobs that change state or queue further jobs emit
	// and insert through it, on their own transaction.
	Bus *event.Bus
	// Attachments are the attachment storages; with both the disk and the bucket the
	// process also moves files from one to the other (StorageMigrateWorker).
	Attachments *attachment.Stores
}

// NewClient builds the working River client (riverpgxv5) with every worker registered.
func NewClient(cfg Config, d Deps) (*river.Client[pgx.Tx], error) {
	if d.Bus == nil {
		return nil, fmt.Errorf("workers: no event bus (build one with pipeline.New)")
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 50
	}
	if cfg.JobTimeout <= 0 {
		cfg.JobTimeout = DefaultJobTimeout
	}
	ws := river.NewWorkers()
	river.AddWorker(ws, &RateLimitCleanupWorker{DB: d.DB.Bun})
	river.AddWorker(ws, &IdempotencyExpiryWorker{DB: d.DB.Bun})
	river.AddWorker(ws, &ListChangeTrimWorker{DB: d.DB})
	scheduled := addAuditWorkers(ws, cfg, d)
	scheduled = append(scheduled, addWebhookWorkers(ws, cfg, d)...)
	scheduled = append(scheduled, addIntegrationWorkers(ws, cfg, d)...)
	scheduled = append(scheduled, addNotificationWorkers(ws, cfg, d)...)
	scheduled = append(scheduled, addServiceDeskWorkers(ws, cfg, d)...)
	scheduled = append(scheduled, addAutomationWorkers(ws, cfg, d)...)
	scheduled = append(scheduled, addTaskWorkers(ws, cfg, d)...)

	moves := addStorageWorkers(ws, d)
	queues := map[string]river.QueueConfig{}
	for _, q := range jobs.Queues {
		queues[q] = river.QueueConfig{MaxWorkers: cfg.Concurrency}
	}
	if moves {
		queues[jobs.QueueStorage] = river.QueueConfig{MaxWorkers: 1}
	} else {
		delete(queues, jobs.QueueStorage)
	}
	window := cfg.RateLimitWindow
	if window <= 0 {
		window = time.Minute
	}
	rescueAfter, err := cfg.rescueAfter()
	if err != nil {
		return nil, err
	}
	return river.NewClient(riverpgxv5.New(d.DB.Pool), &river.Config{
		ID:                   cfg.ID,
		Logger:               d.Log,
		Middleware:           []rivertype.Middleware{NewJobMetrics(d.Registry), NewUnavailable(d.Log)},
		Queues:               queues,
		Workers:              ws,
		JobTimeout:           cfg.JobTimeout,
		RescueStuckJobsAfter: rescueAfter,
		// Zero leaves River's default.
		CompletedJobRetentionPeriod: cfg.JobRetention.Completed,
		CancelledJobRetentionPeriod: cfg.JobRetention.Cancelled,
		DiscardedJobRetentionPeriod: cfg.JobRetention.Discarded,
		// The least time between two fetches of one queue. A notified insert is fetched at
		// once when the last fetch is that long past; under load, the jobs committed in
		// the meantime come in one fetch. Shorter spends the workers' time on fetches of a
		// few jobs each, longer (River's default is 100 ms) adds to every delivery's
		// latency; docs/performance.md#webhook-work-is-grouped has the measurements.
		FetchCooldown: 50 * time.Millisecond,
		// Every worker process registers every worker, so this changes nothing in a
		// steady state. During a rolling upgrade it keeps an old worker from fetching a
		// kind that only the new release knows (River would spend an attempt on it and
		// finally discard it); the job waits for a worker that knows it.
		FetchOnlyKnownKinds: true,
		PeriodicJobs: append(scheduled, periodic("rate_limit_cleanup", 10*time.Minute, false, RateLimitCleanupArgs{Window: window}),
			periodic("idempotency_expiry", time.Hour, true, IdempotencyExpiryArgs{}),
			periodic("list_change_trim", time.Hour, false, ListChangeTrimArgs{})),
	})
}

// DefaultJobTimeout bounds a run of a kind without a Timeout of its own: every such
// job is a few statements, or one SMTP conversation with its own limit.
const DefaultJobTimeout = 30 * time.Second

// rescueMargin is how far past the job timeout a running job counts as stuck. River's
// rescuer looks every 30 s, so a killed worker's jobs run again 40 to 70 s after they
// started (docs/operations.md#scaling).
const rescueMargin = 10 * time.Second

// rescueAfter resolves RescueAfter. River's own default is an hour, far too long for a
// webhook whose worker was killed.
func (cfg Config) rescueAfter() (time.Duration, error) {
	timeout := cmp.Or(cfg.JobTimeout, DefaultJobTimeout)
	if cfg.RescueAfter == 0 {
		return timeout + rescueMargin, nil
	}
	if cfg.RescueAfter < timeout {
		return 0, fmt.Errorf("TW_JOB_RESCUE_AFTER (%s) must not be shorter than TW_JOB_TIMEOUT (%s)", cfg.RescueAfter, timeout)
	}
	return cfg.RescueAfter, nil
}

// webhookTimeoutMargin is what the delivery worker's Timeout adds to the HTTP timeout.
const webhookTimeoutMargin = 5 * time.Second
