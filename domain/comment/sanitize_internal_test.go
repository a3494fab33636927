package comment

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSanitize(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{`<p>Hi <b>there</b></p>`, `<p>Hi <b>there</b></p>`},
		{`<script>alert(1)</script>ok`, `ok`},
		{`<img src="https://example.com/a.png" onerror="alert(1)">`, `<img src="https://example.com/a.png">`},
		{`<a href="javascript:alert(1)">x</a>`, `x`},
		{`<a href="https://example.com">x</a>`, `<a href="https://example.com" rel="nofollow">x</a>`},
		{`<p onclick="steal()" style="color:red">t</p>`, `<p>t</p>`},
		{`<iframe src="https://evil.example"></iframe><style>p{}</style>`, ``},
		{`a < b & c`, `a &lt; b &amp; c`},
		{"  <ul><li>one</li></ul>\n", `<ul><li>one</li></ul>`},
	} {
		require.Equal(t, c.want, Sanitize(c.in), "%q", c.in)
	}
	// Sanitizing a sanitized body changes nothing, so an edit that resends the stored
	// body stores it unchanged.
	once := Sanitize(`<p>a &amp; <a href="https://x.example">b</a> <img src=x onerror=y></p>`)
	require.Equal(t, once, Sanitize(once))
}

func TestExcerpt(t *testing.T) {
	t.Parallel()
	require.Nil(t, excerpt(`<img src="https://example.com/a.png">`), "no text, no excerpt")
	require.Equal(t, "Hello world & more", *excerpt("<p>Hello</p>\n\n<p>world &amp; <b>more</b></p>"))
	require.Equal(t, "x := 1", *excerpt("<pre><code>x := 1</code></pre>"), "code counts as text here")

	long := strings.Repeat("é", 500)
	got := *excerpt(long)
	require.Equal(t, excerptLen, len([]rune(got)))
	require.True(t, strings.HasSuffix(got, "…"))
	exact := strings.Repeat("a", excerptLen)
	require.Equal(t, exact, *excerpt(exact), "a text of exactly the limit is whole")
}
