package main_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDashboardsAgainstPrometheus builds the binary, runs `taskweave api` and
// `taskweave worker` on a cloned database, has a real Prometheus scrape both every
// second while a little traffic goes through (issues, a move, a comment, webhook
// deliveries to a local receiver, a 404), then evaluates every panel's PromQL of every
// dashboards/*.json: each must parse and return at least one series. A panel that
// cannot show data without an error happening first is a defect of the panel or of the
// metric. Prometheus comes from TW_PROMETHEUS (scripts/prometheus.sh, `make test`).
func TestDashboardsAgainstPrometheus(t *testing.T) {
	promBin := os.Getenv("TW_PROMETHEUS")
	if promBin == "" {
		if os.Getenv("TW_REQUIRE_PROMETHEUS") == "1" {
			t.Fatal("TW_PROMETHEUS is unset but TW_REQUIRE_PROMETHEUS=1: run scripts/prometheus.sh (as `make test` does)")
		}
		t.Skip("TW_PROMETHEUS is unset: the dashboards are not checked against Prometheus (scripts/prometheus.sh prints one)")
	}
	t.Parallel()
	dir, bin, dbURL := binaryOnClone(t)

	var hits atomic.Int64
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		hits.Add(1)
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(receiver.Close)

	apiAddr, workerAddr, promAddr := loopbackAddr(t), loopbackAddr(t), loopbackAddr(t)
	env := map[string]string{
		"TW_DATABASE_URL":          dbURL,
		"TW_JWT_SECRET":            strings.Repeat("dashboards-test-secret-", 3),
		"TW_WEBHOOK_ALLOW_PRIVATE": "true", // the receiver is on loopback
		"TW_ATTACHMENTS_DIR":       filepath.Join(dir, "attachments"),
		"TW_LOG_LEVEL":             "warn",
	}
	startProc(t, dir, "api", bin, []string{"api"}, withSetting(env, "TW_HTTP_ADDR", apiAddr))
	startProc(t, dir, "worker", bin, []string{"worker"}, withSetting(env, "TW_HTTP_ADDR", workerAddr))
	for _, addr := range []string{apiAddr, workerAddr} {
		waitUntil(t, 30*time.Second, "http://"+addr+"/healthz answers", func() bool {
			res, err := http.Get("http://" + addr + "/healthz")
			if err != nil {
				return false
			}
			res.Body.Close()
			return res.StatusCode == http.StatusOK
		})
	}

	// The job names are those of dashboards/prometheus.yml: panels select on them.
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: taskweave-api
    static_configs: [{targets: ["%s"]}]
  - job_name: taskweave-worker
    static_configs: [{targets: ["%s"]}]
`, apiAddr, workerAddr)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(cfg), 0o600))
	startProc(t, dir, "prometheus", promBin, []string{"--config.file=" + cfgPath,
		"--storage.tsdb.path=" + filepath.Join(dir, "tsdb"), "--web.listen-address=" + promAddr, "--log.level=warn"}, nil)
	prom := &promClient{t: t, base: "http://" + promAddr}
	waitUntil(t, 60*time.Second, "Prometheus scrapes both processes", func() bool {
		v, ok := prom.scalar(`count(up{job=~"taskweave-.*"} == 1)`)
		return ok && v == 2
	})

	// Two waves of traffic with scrapes between them, so rates over the window rise.
	c := &client{t: t, base: "http://" + apiAddr}
	token := c.do("POST", "/api/v1/auth/register", "", map[string]any{
		"email": "dash@example.com", "displayName": "Dash", "password": "correct-horse-battery"}, 201)["accessToken"].(string)
	c.do("POST", "/api/v1/projects", token, map[string]any{"key": "DASH", "name": "Dashboards"}, 201)
	c.do("POST", "/api/v1/projects/DASH/webhooks", token, map[string]any{"url": receiver.URL + "/hook",
		"events": []string{"issue.created", "issue.status_changed", "comment.created"}}, 201)
	var inProgress string
	for _, s := range c.do("GET", "/api/v1/projects/DASH/workflow", token, nil, 200)["statuses"].([]any) {
		if st := s.(map[string]any); st["name"] == "In Progress" {
			inProgress = st["id"].(string)
		}
	}
	require.NotEmpty(t, inProgress, "the default workflow has In Progress")
	const perWave = 5 // webhook deliveries: 3 issues created, 1 moved, 1 comment
	for wave := 1; wave <= 2; wave++ {
		var first map[string]any
		for i := range 3 {
			iss := c.do("POST", "/api/v1/projects/DASH/issues", token, map[string]any{"title": fmt.Sprintf("Wave %d issue %d", wave, i)}, 201)
			if i == 0 {
				first = iss
			}
		}
		c.do("PATCH", "/api/v1/projects/DASH/board/move", token, map[string]any{"issueId": first["id"], "newStatusId": inProgress}, 200)
		c.do("POST", "/api/v1/projects/DASH/issues/"+first["key"].(string)+"/comments", token, map[string]any{"body": "Looks right"}, 201)
		c.do("GET", "/api/v1/projects/NOPE", token, nil, 404)
		want := float64(wave * perWave)
		waitUntil(t, 60*time.Second, fmt.Sprintf("wave %d delivered and scraped", wave), func() bool {
			delivered, ok := prom.scalar(`sum(taskweave_webhook_deliveries_total{outcome="delivered"})`)
			ran, ok2 := prom.scalar(`sum(taskweave_river_job_run_duration_seconds_count{kind="webhook.deliver"})`)
			return hits.Load() >= int64(want) && ok && ok2 && delivered >= want && ran >= want
		})
	}
	// Every request made is in Prometheus, then both processes are scraped twice more,
	// so every series has samples enough for a rate over the window.
	waitUntil(t, 30*time.Second, "every API request scraped", func() bool {
		n, ok := prom.scalar(`sum(taskweave_http_requests_total{route=~"/api/.*"})`)
		return ok && n >= float64(c.calls)
	})
	seen, ok := prom.scalar(`min(timestamp(up{job=~"taskweave-.*"}))`)
	require.True(t, ok)
	waitUntil(t, 30*time.Second, "two more scrapes of both processes, the last successful", func() bool {
		last, ok := prom.scalar(`min(timestamp(up{job=~"taskweave-.*"}))`)
		up, ok2 := prom.scalar(`min(up{job=~"taskweave-.*"})`)
		return ok && ok2 && last >= seen+2 && up == 1
	})
	t.Cleanup(func() {
		if t.Failed() {
			r, err := prom.query(`up or scrape_duration_seconds`)
			if err == nil {
				t.Logf("scrapes: %s", r.Data.Result)
			}
		}
	})

	files, err := filepath.Glob("../../dashboards/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		var d dashboard
		require.NoError(t, json.Unmarshal(raw, &d), f)
		vars := map[string]string{}
		for _, v := range d.Templating.List {
			vars[v.Name] = ".*"
			if v.AllValue != "" {
				vars[v.Name] = v.AllValue
			}
			// Grafana's label_values(metric, label) is no PromQL; its PromQL equivalent
			// must find at least one value, or the variable's list is empty.
			if m := labelValues.FindStringSubmatch(v.Definition); m != nil {
				q := fmt.Sprintf("count by (%s) (%s)", m[2], m[1])
				if n, err := prom.series(q); err != nil || n == 0 {
					t.Errorf("%s: variable %s (%s): %d series, err %v", filepath.Base(f), v.Name, v.Definition, n, err)
				}
			}
		}
		targets := 0
		for _, p := range d.flatPanels() {
			for _, tg := range p.Targets {
				if tg.Expr == "" {
					continue
				}
				targets++
				q, err := expand(tg.Expr, vars)
				if err != nil {
					t.Errorf("%s: panel %q: %v", filepath.Base(f), p.Title, err)
					continue
				}
				n, err := prom.series(q)
				switch {
				case err != nil:
					t.Errorf("%s: panel %q: %s: %v", filepath.Base(f), p.Title, q, err)
				case n == 0:
					t.Errorf("%s: panel %q: no series for %s", filepath.Base(f), p.Title, q)
				default:
					t.Logf("%s: panel %q: %d series", filepath.Base(f), p.Title, n)
				}
			}
		}
		require.NotZero(t, targets, "%s has no panel queries", f)
	}
}

// dashboard is the part of Grafana's JSON model the test reads: panels, nested in rows
// (schema ≥ 16: row panels with "panels"; older: "rows"), and the template variables.
type dashboard struct {
	Panels     []panel `json:"panels"`
	Rows       []panel `json:"rows"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			AllValue   string `json:"allValue"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	Title   string  `json:"title"`
	Panels  []panel `json:"panels"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

func (d dashboard) flatPanels() []panel {
	var out []panel
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			out = append(out, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	walk(d.Rows)
	return out
}

var (
	labelValues = regexp.MustCompile(`^label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)$`)
	// grafanaVar is $name, ${name}, ${name:format} or [[name]].
	grafanaVar = regexp.MustCompile(`\$\{(\w+)(?::[^}]*)?\}|\$(\w+)|\[\[(\w+)\]\]`)
	// builtins are Grafana's own variables, as a dashboard at the default range over
	// this test's 1 s scrapes would resolve them.
	builtins = map[string]string{
		"__rate_interval": "1m", "__interval": "15s", "__interval_ms": "15000",
		"__range": "1h", "__range_s": "3600", "__range_ms": "3600000",
	}
)

// expand substitutes Grafana's variables: built-ins, and template variables by their
// "All" value. An unknown variable is an error, so a new one is not silently skipped.
func expand(expr string, vars map[string]string) (string, error) {
	var unknown []string
	out := grafanaVar.ReplaceAllStringFunc(expr, func(m string) string {
		s := grafanaVar.FindStringSubmatch(m)
		name := s[1] + s[2] + s[3]
		if v, ok := builtins[name]; ok {
			return v
		}
		if v, ok := vars[name]; ok {
			return v
		}
		unknown = append(unknown, m)
		return m
	})
	if len(unknown) > 0 {
		return "", fmt.Errorf("unknown variables %v in %s", unknown, expr)
	}
	return out, nil
}

// promClient queries Prometheus's HTTP API.
type promClient struct {
	t    *testing.T
	base string
}

type promResult struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string            `json:"resultType"`
		Result     []json.RawMessage `json:"result"`
	} `json:"data"`
}

func (p *promClient) query(q string) (*promResult, error) {
	res, err := http.Get(p.base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var r promResult
	if err := json.NewDecoder(res.Body).Decode(&r); err != nil {
		return nil, fmt.Errorf("HTTP %d: %w", res.StatusCode, err)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("%s: %s", r.ErrorType, r.Error)
	}
	return &r, nil
}

// series is how many series an instant query returns (a scalar counts as one).
func (p *promClient) series(q string) (int, error) {
	r, err := p.query(q)
	if err != nil {
		return 0, err
	}
	if r.Data.ResultType == "scalar" || r.Data.ResultType == "string" {
		return 1, nil
	}
	return len(r.Data.Result), nil
}

// scalar is the value of a query answering one series; ok is false otherwise.
func (p *promClient) scalar(q string) (float64, bool) {
	r, err := p.query(q)
	if err != nil || len(r.Data.Result) != 1 {
		return 0, false
	}
	var s struct {
		Value [2]any `json:"value"`
	}
	if json.Unmarshal(r.Data.Result[0], &s) != nil {
		return 0, false
	}
	var v float64
	str, _ := s.Value[1].(string)
	if _, err := fmt.Sscan(str, &v); err != nil {
		return 0, false
	}
	return v, true
}
