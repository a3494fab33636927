package integration

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/taskweave/taskweave/domain/webhook"
)

func TestExtractGitHubPush(t *testing.T) {
	t.Parallel()
	long := "ABC-1 " + strings.Repeat("é", 120)
	payload := `{"ref":"refs/heads/main","commits":[
		{"id":"c1","message":"ABC-1 and ABC-2, not XABC-3, not ABCD-4, not abc-5, OTHER-6 elsewhere","url":"https://g/c1"},
		{"id":"c2","message":"` + long + `","url":"https://g/c2"},
		{"id":"c3","message":"ABC-1 twice ABC-1","url":"https://g/c3"},
		{"id":"","message":"ABC-7 without an id","url":"https://g/c4"},
		{"id":"c5","message":"ABC-12-3 (ABC-8)\u0000","url":"https://g/c5"}]}`
	got, err := extract(GitHub, "push", []byte(payload), "ABC")
	require.NoError(t, err)
	type ref struct{ key, id string }
	var keys []ref
	for _, c := range got {
		require.Equal(t, RefCommit, c.RefType)
		keys = append(keys, ref{c.IssueKey, c.ExternalID})
	}
	require.Equal(t, []ref{{"ABC-1", "c1"}, {"ABC-2", "c1"}, {"ABC-1", "c2"}, {"ABC-1", "c3"}, {"ABC-12", "c5"}, {"ABC-8", "c5"}}, keys)
	require.Equal(t, "https://g/c1", got[0].URL)
	require.Equal(t, "ABC-1 "+strings.Repeat("é", 94), got[2].Title, "first 100 characters, not bytes")
	require.Equal(t, "ABC-12-3 (ABC-8)", got[4].Title, "NUL is dropped")
}

func TestExtractGitHubEventChoice(t *testing.T) {
	t.Parallel()
	pr := `{"action":"opened","number":42,"pull_request":{"number":42,"title":"ABC-3 title","body":"Fixes ABC-4","html_url":"https://g/pull/42"},
		"commits":[{"id":"c1","message":"ABC-9","url":"https://g/u"}]}`

	// Without X-GitHub-Event, the pull_request member decides.
	got, err := extract(GitHub, "", []byte(pr), "ABC")
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, candidate{IssueKey: "ABC-3", RefType: RefPR, ExternalID: "42", URL: "https://g/pull/42", Title: "ABC-3 title"}, got[0])
	require.Equal(t, "ABC-4", got[1].IssueKey)

	// The header wins over the payload.
	got, err = extract(GitHub, "push", []byte(pr), "ABC")
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, candidate{IssueKey: "ABC-9", RefType: RefCommit, ExternalID: "c1", URL: "https://g/u", Title: "ABC-9"}, got[0])

	// Without either, it is a push.
	got, err = extract(GitHub, "", []byte(`{"commits":[{"id":"c1","message":"ABC-9","url":"https://g/u"}]}`), "ABC")
	require.NoError(t, err)
	require.Len(t, got, 1)

	// Other events are ignored; a null body is fine.
	for _, ev := range []string{"ping", "issues", "pull_request_review"} {
		got, err = extract(GitHub, ev, []byte(pr), "ABC")
		require.NoError(t, err)
		require.Empty(t, got, ev)
	}
	got, err = extract(GitHub, "pull_request", []byte(`{"number":1,"pull_request":{"title":"ABC-1","body":null,"html_url":"https://g/h"}}`), "ABC")
	require.NoError(t, err)
	require.Len(t, got, 1)

	// A member of an unexpected type does not hide the rest.
	got, err = extract(GitHub, "push", []byte(`{"commits":[{"id":"c1","message":"ABC-1","url":"https://g/u"},{"id":5,"message":"ABC-2"}]}`), "ABC")
	require.NoError(t, err)
	require.Equal(t, "ABC-1", got[0].IssueKey)

	_, err = extract(GitHub, "push", []byte(`{"commits":`), "ABC")
	require.Error(t, err)
}

func TestExtractGitLab(t *testing.T) {
	t.Parallel()
	push := `{"object_kind":"push","commits":[{"id":"s1","message":"Fix ABC-5","url":"https://l/c/s1"}]}`
	got, err := extract(GitLab, "Push Hook", []byte(push), "ABC")
	require.NoError(t, err)
	require.Equal(t, []candidate{{IssueKey: "ABC-5", RefType: RefCommit, ExternalID: "s1", URL: "https://l/c/s1", Title: "Fix ABC-5"}}, got)

	mr := `{"object_kind":"merge_request","object_attributes":{"id":99,"iid":7,"title":"ABC-6 MR","description":"and ABC-5","url":"https://l/mr/7"}}`
	got, err = extract(GitLab, "", []byte(mr), "ABC")
	require.NoError(t, err)
	require.Equal(t, []candidate{
		{IssueKey: "ABC-6", RefType: RefPR, ExternalID: "7", URL: "https://l/mr/7", Title: "ABC-6 MR"},
		{IssueKey: "ABC-5", RefType: RefPR, ExternalID: "7", URL: "https://l/mr/7", Title: "ABC-6 MR"},
	}, got)

	got, err = extract(GitLab, "", []byte(`{"object_kind":"tag_push","commits":[{"id":"s1","message":"ABC-5"}]}`), "ABC")
	require.NoError(t, err)
	require.Empty(t, got)
}

func TestExtractDropsUnstorableRefs(t *testing.T) {
	t.Parallel()
	payload := `{"commits":[{"id":"` + strings.Repeat("a", 256) + `","message":"ABC-1","url":"https://g/u"},
		{"id":"ok","message":"ABC-1","url":"https://g/` + strings.Repeat("u", 2049-len("https://g/")) + `"},
		{"id":"fine","message":"ABC-1","url":"https://g/` + strings.Repeat("u", 2048-len("https://g/")) + `"}]}`
	got, err := extract(GitHub, "push", []byte(payload), "ABC")
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "fine", got[0].ExternalID)
}

func TestVerify(t *testing.T) {
	t.Parallel()
	body := []byte(`{"zen":"Keep it logically awesome."}`)
	sig := webhook.Sign(body, "s3cret")
	require.Regexp(t, `^sha256=[0-9a-f]{64}$`, sig)
	require.True(t, Verify(GitHub, "s3cret", sig, body))
	require.False(t, Verify(GitHub, "s3cret", strings.ToUpper(sig[:7])+sig[7:], body))
	require.False(t, Verify(GitHub, "s3cret", "sha256="+strings.ToUpper(sig[7:]), body), "lowercase hex only")
	require.False(t, Verify(GitHub, "other", sig, body))
	require.False(t, Verify(GitHub, "s3cret", sig, append(body, ' ')))
	require.False(t, Verify(GitHub, "s3cret", "", body))

	require.True(t, Verify(GitLab, "tok", "tok", body))
	require.False(t, Verify(GitLab, "tok", "tok ", body))
	require.False(t, Verify(GitLab, "tok", "", body))
}

func TestParseProvider(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Provider{"github": GitHub, "GitLab": GitLab, " GITHUB ": GitHub} {
		p, ok := ParseProvider(in)
		require.True(t, ok, in)
		require.Equal(t, want, p)
	}
	for _, in := range []string{"", "bitbucket", "git hub"} {
		_, ok := ParseProvider(in)
		require.False(t, ok, in)
	}
	require.Equal(t, "gitlab", GitLab.PathSegment())
}

// TestExtractDropsRefsWithoutAnHTTPLink: a reference is stored with its address, and a
// client renders that as a link, so one whose address is no http(s) URL is dropped; the
// provider's others stay.
func TestExtractDropsRefsWithoutAnHTTPLink(t *testing.T) {
	t.Parallel()
	var commits []string
	for i, u := range []string{"javascript:alert(document.cookie)", "JAVASCRIPT:alert(1)", " javascript:alert(1)",
		"java\tscript:alert(1)", "data:text/html;base64,PHNjcmlwdD4=", "vbscript:x", "//evil.example/c", "", "u",
		"https://user:pw@evil.example/c", "https://g/fine"} {
		commits = append(commits, fmt.Sprintf(`{"id":"c%d","message":"ABC-1","url":%q}`, i, u))
	}
	got, err := extract(GitHub, "push", []byte(`{"commits":[`+strings.Join(commits, ",")+`]}`), "ABC")
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "https://g/fine", got[0].URL)

	mr := `{"object_kind":"merge_request","object_attributes":{"iid":7,"title":"ABC-6","url":"javascript:alert(1)"}}`
	got, err = extract(GitLab, "", []byte(mr), "ABC")
	require.NoError(t, err)
	require.Empty(t, got)
	pr := `{"action":"opened","number":4,"pull_request":{"number":4,"title":"ABC-3","html_url":"data:text/html,x"}}`
	got, err = extract(GitHub, "pull_request", []byte(pr), "ABC")
	require.NoError(t, err)
	require.Empty(t, got)
}
