package admin_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// riverUICSPRecorder runs before any script of every page: it keeps each Content
// Security Policy violation the page reports, so the test can tell River UI ran under
// its CSP without one.
const riverUICSPRecorder = `window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', e =>
	window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI));`

// TestRiverUIInChromium signs in on the ops page in a real headless Chromium, follows
// its link to River UI and reads a real job (inserted with River's client) in River
// UI's rendered jobs list, as support staff would; then it cancels the job with River
// UI's own button and checks the change and its audit entry.
func TestRiverUIInChromium(t *testing.T) {
	t.Parallel()
	chromium := opsChromium(t)
	e := jobSetup(t)
	h := e.h
	id := riverUIInsert(t, h)

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
		chromedp.WindowSize(1400, 1000), // wide enough for River UI's desktop layout, whose sidebar lists the states
	)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()

	_, err = chromedp.Call(bctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: riverUICSPRecorder})
	require.NoError(t, err)

	// Without a session River UI sends the browser to the ops login form.
	require.NoError(t, chromedp.Do(bctx,
		chromedp.Navigate(base+"/admin/river/"),
		chromedp.WaitVisible(chromedp.ID("email")),
	))
	loginURL, err := chromedp.Run(bctx, chromedp.Location())
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(bctx,
		chromedp.SendKeys(chromedp.ID("email"), e.admin.Email),
		chromedp.SendKeys(chromedp.ID("password"), apitest.Password),
	))
	resp, err := chromedp.RunResponse(bctx, chromedp.Click(chromedp.ID("login")))
	require.NoError(t, err)
	require.EqualValues(t, 200, resp.Status)

	// The ops page links to River UI, which opens on its running jobs; its sidebar
	// leads to the available ones, where the job is listed with its args.
	require.NoError(t, chromedp.Do(bctx, chromedp.WaitVisible(chromedp.ID("river-ui"))))
	resp, err = chromedp.RunResponse(bctx, chromedp.Click(chromedp.ID("river-ui")))
	require.NoError(t, err)
	require.EqualValues(t, 200, resp.Status)
	available := chromedp.CSS(`a[href="/admin/river/jobs?state=available"]`)
	require.NoError(t, chromedp.Do(bctx, chromedp.WaitVisible(available), chromedp.Click(available)))
	list, err := chromedp.Run(bctx, chromedp.Poll[string](
		`document.body.innerText.includes('test.river_ui') && document.body.innerText`, chromedp.WithPollingTimeout(20*time.Second)))
	require.NoError(t, err)
	listURL, err := chromedp.Run(bctx, chromedp.Location())
	require.NoError(t, err)

	// The job's page, and River UI's own Cancel button: its call is same-origin, so it
	// passes the cross-site check, and it is audited.
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(base+fmt.Sprintf("/admin/river/jobs/%d", id))))
	cancelButton := chromedp.Search(`//button[normalize-space()='Cancel']`)
	require.NoError(t, chromedp.Do(bctx, chromedp.WaitVisible(cancelButton), chromedp.Click(cancelButton)))
	apitest.Eventually(t, 20*time.Second, func() bool { return riverUIState(t, h, id) == "cancelled" }, "job cancelled from River UI")
	shown, err := chromedp.Run(bctx, chromedp.Poll[string](
		`document.body.innerText.includes('Cancelled') && document.body.innerText`, chromedp.WithPollingTimeout(20*time.Second)))
	require.NoError(t, err)
	violations, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`window.__cspViolations`))
	require.NoError(t, err)

	require.True(t, strings.HasSuffix(loginURL, "/admin/ops/"), loginURL)
	require.True(t, strings.HasSuffix(listURL, "/admin/river/jobs?state=available"), listURL)
	require.Contains(t, list, riverUISecret)
	require.Contains(t, shown, "test.river_ui")
	require.Equal(t, 1, riverUIAudit(t, h, "JOB_CANCELLED", "JOB", fmt.Sprint(id)))
	details, user := riverUIAuditDetails(t, h, "JOB_CANCELLED", fmt.Sprint(id))
	require.Equal(t, "river-ui", details["via"])
	require.Equal(t, e.admin.ID.String(), user)
	// Its own scripts ran under its CSP; the only report is Zod's probe for eval (it
	// checks once whether it may compile, and does without).
	for _, v := range violations {
		require.Equal(t, "script-src eval", v)
	}
}
