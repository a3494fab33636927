package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// TestAttachmentNamesLoseBidiControls: an upload named with right-to-left override or
// isolate characters is kept, listed, downloaded and stored under the name without them,
// so nobody is shown "invoiceexe.pdf" for an .exe.
func TestAttachmentNamesLoseBidiControls(t *testing.T) {
	t.Parallel()
	f := atFixtureOn(t, apitest.Shared(t))
	a := f.uploaded(t, f.Member.Access, "invoice\u202Efdp.exe", "application/octet-stream", "MZ")
	require.Equal(t, "invoicefdp.exe", a["filename"])
	require.True(t, strings.HasSuffix(f.storedName(t, a["id"]), ".exe"), "the real extension")
	require.Equal(t, 1, f.H.Count("SELECT count(*) FROM attachments WHERE id = $1 AND filename = 'invoicefdp.exe'", a["id"]))

	list := f.H.Do("GET", f.at(""), nil, f.Viewer.Access)
	require.Equal(t, http.StatusOK, list.Status)
	require.NotContains(t, string(list.Body), "\u202E")
	require.NotContains(t, string(list.Body), `\u202e`)
	d := f.H.Do("GET", f.at("/"+a["id"].(string)+"/download"), nil, f.Viewer.Access)
	require.Equal(t, http.StatusOK, d.Status)
	require.Contains(t, d.Header.Get("Content-Disposition"), "invoicefdp.exe")
	require.NotContains(t, d.Header.Get("Content-Disposition"), "%E2%80%AE")

	// A name made only of such characters is no name.
	r := f.upload(t, f.Member.Access, atFile("\u2067\u2069", "text/plain", "x"))
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
}
