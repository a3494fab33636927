package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api"
	"github.com/taskweave/taskweave/api/apitest"
)

// check runs apitest.CheckOpenAPI on a finished request made by h.Do.
func check(method, target string, reqHeader http.Header, reqBody []byte, r *apitest.Response) error {
	return apitest.CheckOpenAPI(apitest.Exchange{Method: method, Target: target, RequestHeader: reqHeader,
		RequestBody: reqBody, Status: r.Status, Header: r.Header, Body: r.Body})
}

var jsonHeader = http.Header{"Content-Type": {"application/json"}}

// TestOpenAPIDeclaresKnownAnswers pins the answers a validating proxy found undeclared:
// a PATCH with "priority": null (null = unchanged), an attachment downloaded with its
// stored Content-Type, and 413 BODY_TOO_LARGE on a JSON body endpoint.
func TestOpenAPIDeclaresKnownAnswers(t *testing.T) {
	t.Parallel()
	h := atLimited(t, 1<<20, func(s *api.Settings) { s.BodyLimit = 64 << 10 })
	f := atFixtureOn(t, h)

	t.Run("null means unchanged", func(t *testing.T) {
		body := `{"title":"Renamed","priority":null,"type":null,"clearSprint":null,"labelIds":null}`
		r := h.Do("PATCH", f.Path("/issues/"+f.issueKey), body, f.Member.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.Equal(t, "MEDIUM", r.JSON(t)["priority"])
		require.NoError(t, check("PATCH", f.Path("/issues/"+f.issueKey), jsonHeader, []byte(body), r))
	})

	t.Run("download answers the stored content type", func(t *testing.T) {
		a := f.uploaded(t, f.Member.Access, "notes.txt", "text/plain", "plain words")
		target := f.at("/" + a["id"].(string) + "/download")
		r := h.Do("GET", target, nil, f.Member.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.True(t, strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain"), r.Header.Get("Content-Type"))
		require.NoError(t, check("GET", target, nil, nil, r))
	})

	t.Run("413 on a JSON body", func(t *testing.T) {
		big := `{"title":"big","description":"` + strings.Repeat("d", 70<<10) + `"}`
		r := h.Do("POST", f.Path("/issues"), big, f.Member.Access)
		apitest.RequireProblem(t, r, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", apitest.Reason("BODY_TOO_LARGE"))
		require.NoError(t, check("POST", f.Path("/issues"), jsonHeader, []byte(big), r))
	})

	// The checker itself refuses what the document does not declare.
	t.Run("undeclared answers are refused", func(t *testing.T) {
		r := h.Do("GET", f.Path("/issues/"+f.issueKey), nil, f.Member.Access)
		require.Equal(t, http.StatusOK, r.Status)
		require.NoError(t, check("GET", f.Path("/issues/"+f.issueKey), nil, nil, r))

		teapot := *r
		teapot.Status = http.StatusTeapot
		require.ErrorContains(t, check("GET", f.Path("/issues/"+f.issueKey), nil, nil, &teapot), "status is not supported")

		csv := *r
		csv.Header = http.Header{"Content-Type": {"text/csv"}}
		require.ErrorContains(t, check("GET", f.Path("/issues/"+f.issueKey), nil, nil, &csv), "text/csv")

		broken := *r
		broken.Body = []byte(strings.Replace(string(r.Body), `"priority":"MEDIUM"`, `"priority":"URGENT"`, 1))
		require.NotEqual(t, r.Body, broken.Body)
		require.ErrorContains(t, check("GET", f.Path("/issues/"+f.issueKey), nil, nil, &broken), "priority")

		withBody := *r
		withBody.Status = http.StatusNoContent
		require.ErrorContains(t, check("DELETE", f.Path("/issues/"+f.issueKey), nil, nil, &withBody), "declared without a body")

		// A request the document rejects (an unknown priority) must not be answered 2xx.
		bad := `{"priority":"URGENT"}`
		require.ErrorContains(t, check("PATCH", f.Path("/issues/"+f.issueKey), jsonHeader, []byte(bad), r),
			"the server accepted a request the document rejects")

		// Unknown paths may answer 4xx, never 2xx.
		missing := &apitest.Response{Status: http.StatusNotFound, Header: jsonHeader, Body: []byte(`{}`)}
		require.NoError(t, check("GET", "/api/v1/no-such-thing", nil, nil, missing))
		ok := &apitest.Response{Status: http.StatusOK, Header: jsonHeader, Body: []byte(`{}`)}
		require.ErrorContains(t, check("GET", "/api/v1/no-such-thing", nil, nil, ok), "no documented operation")
	})
}
