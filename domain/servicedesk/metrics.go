package servicedesk

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/taskweave/taskweave/domain/metric"
)

// Metrics are the desk's Prometheus series. The API counts WEB tickets, the worker
// everything else; `taskweave all` runs both on one registry, so NewMetrics reuses
// series another caller registered there. Every label value starts at 0, so a
// dashboard panel shows 0 rather than no data before the first event.
type Metrics struct {
	Tickets      *prometheus.CounterVec
	Breaches     *prometheus.CounterVec
	Escalations  prometheus.Counter
	ScanSeconds  prometheus.Histogram
	Scans        *prometheus.CounterVec
	Polls        *prometheus.CounterVec
	Messages     *prometheus.CounterVec
	MailFailures *prometheus.CounterVec
}

// Label values of the desk's metrics.
const (
	OutcomeOK    = "ok"
	OutcomeError = "error"

	MessageTicket    = "ticket"
	MessageComment   = "comment"
	MessageDuplicate = "duplicate"
	MessageSkipped   = "skipped"

	FailureNoText         = "no_text"
	FailureTooLarge       = "too_large"
	FailureUnknownAddress = "unknown_address"
	// FailureAmbiguousAddress: more than one desk's verified address matches; the
	// e-mail goes to neither (docs/operations.md#service-desk).
	FailureAmbiguousAddress = "ambiguous_address"
	FailureMalformed        = "malformed"

	BreachResolution = "resolution"
	BreachResponse   = "response"
)

// NewMetrics registers (or finds) the desk's series on reg; nil reg gives unregistered
// series, for tests and tools.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Tickets: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taskweave_servicedesk_tickets_total", Help: "Service-desk tickets created, by channel (WEB, EMAIL).",
		}, []string{"channel"}),
		Breaches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taskweave_sla_breaches_total", Help: "SLA breaches reported by the breach monitor, by kind (resolution, response).",
		}, []string{"kind"}),
		Escalations: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "taskweave_sla_escalations_total", Help: "SLA escalations reported by the breach monitor.",
		}),
		ScanSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "taskweave_sla_scan_duration_seconds", Help: "Duration of one breach monitor scan.",
			Buckets: []float64{.005, .01, .025, .05, .1, .2, .5, 1, 2.5, 5, 10, 30},
		}),
		Scans: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taskweave_sla_scans_total", Help: "Breach monitor scans, by outcome (ok, error).",
		}, []string{"outcome"}),
		Polls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taskweave_mail_ingest_polls_total", Help: "Polls of the IMAP mailbox, by outcome (ok, error).",
		}, []string{"outcome"}),
		Messages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taskweave_mail_ingest_messages_total",
			Help: "Incoming e-mails handled, by outcome (ticket, comment, duplicate, skipped).",
		}, []string{"outcome"}),
		MailFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taskweave_mail_ingest_failures_total",
			Help: "Incoming e-mails skipped as unusable, by reason (no_text, too_large, unknown_address, ambiguous_address, malformed).",
		}, []string{"reason"}),
	}
	if reg != nil {
		m.Tickets = metric.Register(reg, m.Tickets)
		m.Breaches = metric.Register(reg, m.Breaches)
		m.Escalations = metric.Register(reg, m.Escalations)
		m.ScanSeconds = metric.Register(reg, m.ScanSeconds)
		m.Scans = metric.Register(reg, m.Scans)
		m.Polls = metric.Register(reg, m.Polls)
		m.Messages = metric.Register(reg, m.Messages)
		m.MailFailures = metric.Register(reg, m.MailFailures)
	}
	for _, c := range []string{ChannelWeb, ChannelEmail} {
		m.Tickets.WithLabelValues(c)
	}
	for _, k := range []string{BreachResolution, BreachResponse} {
		m.Breaches.WithLabelValues(k)
	}
	for _, o := range []string{OutcomeOK, OutcomeError} {
		m.Scans.WithLabelValues(o)
		m.Polls.WithLabelValues(o)
	}
	for _, o := range []string{MessageTicket, MessageComment, MessageDuplicate, MessageSkipped} {
		m.Messages.WithLabelValues(o)
	}
	for _, r := range []string{FailureNoText, FailureTooLarge, FailureUnknownAddress, FailureAmbiguousAddress, FailureMalformed} {
		m.MailFailures.WithLabelValues(r)
	}
	return m
}

// observeScan records one scan's duration and outcome.
func (m *Metrics) observeScan(start time.Time, err error) {
	m.ScanSeconds.Observe(time.Since(start).Seconds())
	if err != nil {
		m.Scans.WithLabelValues(OutcomeError).Inc()
		return
	}
	m.Scans.WithLabelValues(OutcomeOK).Inc()
}
