package admin_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// opsChromium finds the browser: TW_CHROMIUM, else Debian's /usr/bin/chromium
// (scripts/chromium.sh installs it). Without one the test is skipped, unless
// TW_REQUIRE_BROWSER=1 (make test) makes that a failure.
func opsChromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("TW_CHROMIUM"), "/usr/bin/chromium"} {
		if p == "" {
			continue
		}
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	msg := "no Chromium: set TW_CHROMIUM or run scripts/chromium.sh (installs Debian's chromium as root)"
	if os.Getenv("TW_REQUIRE_BROWSER") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// TestOpsPageInChromium logs in through the form in a real headless Chromium against
// the real app on a loopback port, and reads the rendered queue table and a failed
// job's error, as support staff would.
func TestOpsPageInChromium(t *testing.T) {
	t.Parallel()
	chromium := opsChromium(t)
	e := jobSetup(t)
	h := e.h
	failed := jobInsert(t, h, jobSpec{kind: "webhook.deliver", queue: "webhooks", state: "discarded", attempt: 1, max: 1,
		errors: []map[string]any{{"at": time.Now().UTC().Format(time.RFC3339Nano), "attempt": 1,
			"error": "receiver said <b>no</b>: HTTP 503", "trace": "goroutine 7 [running]"}}})
	jobInsert(t, h, jobSpec{kind: "audit.record", queue: "audit", state: "available"})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- h.Server.App.Listener(ln) }()
	t.Cleanup(func() {
		require.NoError(t, h.Server.App.ShutdownWithTimeout(5*time.Second))
		if err := <-served; err != nil && !errors.Is(err, net.ErrClosed) {
			t.Errorf("serve: %v", err)
		}
	})
	base := "http://" + ln.Addr().String()

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox, // the test may run as root (CI containers), where the sandbox refuses to start
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-gpu", true),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()

	require.NoError(t, chromedp.Do(bctx,
		chromedp.Navigate(base+"/admin/ops/"),
		chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), e.admin.Email),
		chromedp.SendKeys(chromedp.ID("password"), apitest.Password),
	))
	loginTitle, err := chromedp.Run(bctx, chromedp.Title())
	require.NoError(t, err)
	// The form posts, the server answers 303 with the cookie, the browser follows.
	resp, err := chromedp.RunResponse(bctx, chromedp.Click(chromedp.ID("login")))
	require.NoError(t, err)
	if resp.Status != 200 {
		page, _ := chromedp.Run(bctx, chromedp.Text(chromedp.CSS("main")))
		t.Fatalf("login answered %d: %s", resp.Status, page)
	}
	require.NoError(t, chromedp.Do(bctx, chromedp.WaitVisible(chromedp.ID("queues"))))
	queues, err := chromedp.Run(bctx, chromedp.Text(chromedp.ID("queues")))
	require.NoError(t, err)
	jobs, err := chromedp.Run(bctx, chromedp.Text(chromedp.ID("jobs")))
	require.NoError(t, err)
	// The inline style sheet applied: its CSP hash matches.
	border, err := chromedp.Run(bctx, chromedp.Evaluate[string](`getComputedStyle(document.getElementById('queues')).borderCollapse`))
	require.NoError(t, err)
	// The error's markup is text, not elements; the page runs no script.
	boldInJobs, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll('#jobs b').length`))
	require.NoError(t, err)
	scripts, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.scripts.length`))
	require.NoError(t, err)

	resp, err = chromedp.RunResponse(bctx, chromedp.Click(chromedp.CSS(fmt.Sprintf(`a[href="/admin/ops/jobs/%d"]`, failed))))
	require.NoError(t, err)
	require.EqualValues(t, 200, resp.Status)
	require.NoError(t, chromedp.Do(bctx, chromedp.WaitVisible(chromedp.ID("job"))))
	detail, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS("main")))
	require.NoError(t, err)

	require.Contains(t, loginTitle, "Sign in")
	for _, q := range []string{"default", "audit", "webhooks", "integrations"} {
		require.Contains(t, queues, q)
	}
	require.Contains(t, jobs, "webhook.deliver")
	require.Contains(t, jobs, "receiver said <b>no</b>: HTTP 503")
	require.Contains(t, jobs, "audit.record")
	require.Equal(t, "collapse", border)
	require.Zero(t, boldInJobs)
	require.Zero(t, scripts)
	require.Contains(t, detail, fmt.Sprintf("Job %d", failed))
	require.Contains(t, detail, "receiver said <b>no</b>: HTTP 503")
	require.Contains(t, detail, "Attempt 1 at")
}
