package weblink

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestValid(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"https://example.com/a.png", "http://example.com", "HTTPS://Example.com/x?y=1#z", "https://[2001:db8::1]:8443/p",
		"https://github.com/acme/app/commit/0123abc", "https://xn--bcher-kva.example/ä",
	} {
		require.True(t, Valid(s), s)
	}
	for _, s := range []string{
		"", "javascript:alert(1)", "JaVaScRiPt:alert(1)", "java\tscript:alert(1)", "\x01javascript:alert(1)",
		" https://example.com", "https://example.com ", "https://exa mple.com", "https://example.com/a b",
		"data:image/png;base64,iVBORw0KGgo=", "vbscript:msgbox(1)", "file:///etc/passwd", "ftp://example.com/",
		"mailto:a@example.com", "//example.com/a.png", "/relative.png", "example.com/a.png", "https:///nohost",
		"https://user:pw@example.com/", "https://@example.com/", "https:\\\\evil.example", "https://evil.example\\@good.example/",
		"https://example.com/\x00", "https://example.com/\n", "https://example.com/\x7f", "http:example.com", "https:",
		"https://" + strings.Repeat("a", 10) + "%zz",
	} {
		require.False(t, Valid(s), "%q", s)
	}
}
