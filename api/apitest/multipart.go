package apitest

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/textproto"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Part is one part of a multipart/form-data body: a field, or a file when Filename is set.
type Part struct{ Name, Filename, ContentType, Data string }

// FilePart is the `file` part of an upload.
func FilePart(filename, contentType, data string) Part {
	return Part{"file", filename, contentType, data}
}

// MultipartBody encodes parts as multipart/form-data and returns the body and its
// Content-Type.
func MultipartBody(tb testing.TB, parts ...Part) ([]byte, string) {
	tb.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	quote := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	for _, p := range parts {
		hdr := textproto.MIMEHeader{}
		cd := `form-data; name="` + p.Name + `"`
		if p.Filename != "" {
			cd += `; filename="` + quote.Replace(p.Filename) + `"`
		}
		hdr.Set("Content-Disposition", cd)
		if p.ContentType != "" {
			hdr.Set("Content-Type", p.ContentType)
		}
		pw, err := w.CreatePart(hdr)
		require.NoError(tb, err)
		_, err = io.WriteString(pw, p.Data)
		require.NoError(tb, err)
	}
	require.NoError(tb, w.Close())
	return buf.Bytes(), w.FormDataContentType()
}
