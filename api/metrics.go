package api

import (
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
)

type httpMetrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newHTTPMetrics(reg *prometheus.Registry) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taskweave_http_requests_total", Help: "HTTP requests by method, route template and status.",
		}, []string{"method", "route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "taskweave_http_request_duration_seconds", Help: "HTTP request latency by method and route template.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"method", "route"}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.latency)
	}
	return m
}

func (m *httpMetrics) observe(c *fiber.Ctx, d time.Duration) {
	// Fiber reuses its buffers after the request: label values must be copies.
	route := "unmatched"
	if r := c.Route(); r != nil && r.Path != "/" && r.Path != "" && r.Path != "/api/v1" {
		route = strings.Clone(r.Path)
	}
	method := strings.Clone(c.Method())
	m.requests.WithLabelValues(method, route, strconv.Itoa(c.Response().StatusCode())).Inc()
	m.latency.WithLabelValues(method, route).Observe(d.Seconds())
}
