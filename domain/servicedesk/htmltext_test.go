package servicedesk_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/servicedesk"
)

// TestHTMLOnlyMailBecomesText: a mail with only a text/html part (as many clients and web
// forms send) makes a ticket whose text keeps the words, paragraphs, list items, link
// addresses and image alt texts, and no markup: scripts, styles and the head are
// dropped, entities decoded. A text/plain part, when there is one, is preferred.
func TestHTMLOnlyMailBecomesText(t *testing.T) {
	t.Parallel()
	htmlBody := `<html><head><title>Ignored title</title><style>p { color: red }</style></head>
<body><script>alert("x")</script>
<p>Hello&nbsp;team,<br>the <b>export</b> page fails &amp; shows <i>nothing</i>.</p>
<ul><li>Open <a href="https://app.example.com/export?id=7">the export page</a></li>
<li>Click <a href="https://example.com">https://example.com</a></li>
<li><a href="javascript:evil()">Run</a> and <a href="mailto:ops@example.com">mail us</a></li></ul>
<div><img src="cid:logo" alt="ACME logo"> &lt;script&gt; is shown as text</div>
<p onclick="steal()">Thanks,<br>   Ann</p></body></html>`
	raw := "From: ann@example.com\r\nTo: desk@acme.test\r\nSubject: HTML only\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n" +
		strings.ReplaceAll(strings.ReplaceAll(htmlBody, "=", "=3D"), "\n", "\r\n")
	e, err := servicedesk.ParseEmail([]byte(raw))
	require.NoError(t, err)
	require.Equal(t, "Hello team,\nthe export page fails & shows nothing.\n\n"+
		"- Open the export page (https://app.example.com/export?id=7)\n"+
		"- Click https://example.com\n"+
		"- Run and mail us (ops@example.com)\n\n"+
		"ACME logo <script> is shown as text\n\n"+
		"Thanks,\nAnn", e.Text)
	for _, gone := range []string{"alert", "color", "Ignored title", "steal", "evil", "<b>", "&amp;"} {
		require.NotContains(t, e.Text, gone)
	}

	both := "From: ann@example.com\r\nTo: desk@acme.test\r\nSubject: Both\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/alternative; boundary=b\r\n\r\n" +
		"--b\r\nContent-Type: text/html\r\n\r\n<p>From the <b>HTML</b> part</p>\r\n" +
		"--b\r\nContent-Type: text/plain\r\n\r\nFrom the plain part\r\n--b--\r\n"
	e, err = servicedesk.ParseEmail([]byte(both))
	require.NoError(t, err)
	require.Equal(t, "From the plain part", e.Text)
}
