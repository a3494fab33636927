package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// malformedBodies are request bodies no endpoint accepts as they are, each with the
// Content-Type it is sent with.
var malformedBodies = []struct{ contentType, body string }{
	{"application/json", ""},
	{"application/json", "{"},
	{"application/json", "[]"},
	{"application/json", "null"},
	{"application/json", "1e400"},
	{"application/json", `"\u0000"`},
	{"application/json", `{"":{},"a":[null,{}],"id":"x","key":1,"name":{"x":1},"title":[],"url":false,"events":"x",` +
		`"page":-1,"size":1e300,"statusId":"00000000-0000-0000-0000-000000000000","userId":"x","role":"ROOT"}`},
	{"application/json", strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)},
	{"application/json", "{\"a\":\"\xff\xfe\"}"},
	{"text/plain", "hello"},
	{"multipart/form-data; boundary=xyz", "--xyz\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\x00\u202e.txt\"\r\n\r\nbody"},
	{"multipart/form-data", "--\r\n"},
	{"application/x-www-form-urlencoded", "a=%zz&b"},
}

// malformedQueries are query strings of nonsense for every parameter endpoints read.
var malformedQueries = []string{
	"",
	"?page=-1&size=0&sort=%27%3B&from=x&to=y&q=%00&status=NOPE&assigneeId=x&sprintId=1&format=exe&level=x&action=a%20b",
	"?page=99999999999999999999&size=99999999999999999999&sort=title,sideways&from=2024-13-45T99:99:99Z&labelId=" +
		strings.Repeat("x,", 300) + "&fields=" + strings.Repeat("a", 2000),
	"?page=1e3&size=1.5&limit=-5&offset=x&since=-1&until=0&type=%E2%80%AE&priority=LOWEST&q=" + strings.Repeat("%F0%9F%98%80", 100),
	"?cursor=%00%FF&size=2", "?cursor=WyJ4IiwiMSJdAAAAAAAAAAAAAAAAAAAAAA&page=2", "?cursor=" + strings.Repeat("A", 600),
}

// send issues one request to the app (not apitest.Harness.Do: an undeclared 4xx is not
// what this test is about) and returns status and body.
func send(t *testing.T, h *apitest.Harness, method, target, contentType, body, token string) (int, string, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" || contentType != "" {
		rd = bytes.NewReader([]byte(body))
	}
	req := httptest.NewRequest(method, target, rd)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := h.Server.App.Test(req, 30_000)
	require.NoError(t, err, "%s %s", method, target)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header.Get("Content-Type"), raw
}

// browserPage is a reply of a page for browsers (the ops page's HTML form, a missing
// file of Swagger UI's tree): not the API's error body, still never a 5xx.
func browserPage(target, contentType string) bool {
	return strings.HasPrefix(contentType, "text/html") ||
		(strings.HasPrefix(contentType, "text/plain") && strings.HasPrefix(target, "/swagger-ui/"))
}

var routeParam = regexp.MustCompile(`:[A-Za-z]+\??|\*\d*|\+\d*`)

// TestNoRequestShapeIsA5xx sends malformed path parameters, queries and bodies to every
// registered route, as a system ADMIN who owns the project in the path (so requests
// pass authorization and reach decoding and the rules), and as nobody. Every answer is
// below 500, and every error carries the error body (but a browser page's).
func TestNoRequestShapeIsA5xx(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewProject(t, h)
	h.MakeAdmin(f.Owner)
	issueKey := f.Create(t, map[string]any{"title": "Target"})["key"].(string)

	// Path values: the real project and issue where the name says so, then nonsense.
	realValue := func(name string) string {
		switch strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(name, ":"), "?")) {
		case "key", "projectkey":
			return f.Key
		case "issuekey", "idorkey":
			return issueKey
		case "userid":
			return f.Member.ID.String()
		}
		return uuid.NewString()
	}
	nonsense := []string{"x", "0", "-1", "99999999999999999999", "00000000-0000-0000-0000-000000000000",
		"%E2%80%AE%00", strings.Repeat("a", 200), "..%2F..%2Fetc%2Fpasswd", f.Key + "-99999999999999999999"}

	type shape struct{ method, target, contentType, body, token string }
	var shapes []shape
	seen := map[string]bool{}
	for _, r := range h.Server.App.GetRoutes(true) {
		if r.Method == http.MethodHead || r.Method == http.MethodConnect || r.Method == http.MethodTrace || seen[r.Method+r.Path] {
			continue
		}
		seen[r.Method+r.Path] = true
		paths := []string{routeParam.ReplaceAllStringFunc(r.Path, realValue)}
		for _, v := range nonsense {
			paths = append(paths, routeParam.ReplaceAllString(r.Path, v))
		}
		for i, p := range paths {
			for _, q := range malformedQueries {
				shapes = append(shapes, shape{r.Method, p + q, "", "", f.Owner.Access})
			}
			if i > 1 {
				continue // every body goes to the real path and the first nonsense one
			}
			switch r.Method {
			case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
				for _, b := range malformedBodies {
					shapes = append(shapes, shape{r.Method, p, b.contentType, b.body, f.Owner.Access})
				}
			}
			shapes = append(shapes, shape{r.Method, p, "application/json", "{}", ""})
		}
	}
	require.Greater(t, len(shapes), 5000, "every route, many shapes")

	failures := 0
	for _, s := range shapes {
		status, ct, body := send(t, h, s.method, s.target, s.contentType, s.body, s.token)
		ok := status < 500
		if ok && status >= 400 && !browserPage(s.target, ct) {
			var m map[string]any
			ok = json.Unmarshal(body, &m) == nil && m["code"] != nil && m["status"] == float64(status)
		}
		if !ok {
			failures++
			t.Errorf("%s %.200s (%s, %.80q): %d %.300s", s.method, s.target, s.contentType, s.body, status, body)
			if failures > 20 {
				t.FailNow()
			}
		}
	}
	t.Log(fmt.Sprintf("%d requests, none answered 5xx", len(shapes)))
}
