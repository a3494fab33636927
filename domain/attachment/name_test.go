package attachment_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/attachment"
)

func TestNewStoredName(t *testing.T) {
	t.Parallel()
	for filename, ext := range map[string]string{
		"report.PDF": ".pdf", "backup.tar.gz": ".gz", "README": "", "x.": "", ".bashrc": ".bashrc",
		"evil.p$p": "", "a.verylongextension12": "", "dir.d/file": "", "Übersicht.docx": ".docx", "notes.tXt ": "",
	} {
		name := attachment.NewStoredName(filename)
		require.True(t, attachment.ValidStoredName(name), "%q → %q", filename, name)
		require.Len(t, name, 36+len(ext), "%q → %q", filename, name)
		require.True(t, strings.HasSuffix(name, ext), "%q → %q", filename, name)
	}
	require.NotEqual(t, attachment.NewStoredName("a.txt"), attachment.NewStoredName("a.txt"))
}

func TestValidStoredName(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"", "..", "../../etc/passwd", "a/b", `a\b`, "/etc/passwd",
		"0b7e1a9c-3d6f-4c2b-9a7e-5f1d2c3b4a59/../x", "0B7E1A9C-3D6F-4C2B-9A7E-5F1D2C3B4A59", "0b7e1a9c-3d6f-4c2b-9a7e-5f1d2c3b4a59.",
		"0b7e1a9c-3d6f-4c2b-9a7e-5f1d2c3b4a59.PDF", "0b7e1a9c-3d6f-4c2b-9a7e-5f1d2c3b4a59.pdf/x", "0b7e1a9c-3d6f-4c2b-9a7e-5f1d2c3b4a59\n"} {
		require.False(t, attachment.ValidStoredName(bad), "%q", bad)
	}
	require.True(t, attachment.ValidStoredName("0b7e1a9c-3d6f-4c2b-9a7e-5f1d2c3b4a59"))
	require.True(t, attachment.ValidStoredName("0b7e1a9c-3d6f-4c2b-9a7e-5f1d2c3b4a59.pdf"))
}

func TestCleanFilename(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"report.pdf":                   "report.pdf",
		"  spaced name.txt  ":          "spaced name.txt",
		"../../etc/passwd":             "passwd",
		`C:\Users\Ann\Desktop\a b.doc`: "a b.doc",
		"dir/":                         "",
		"..":                           "",
		".":                            "",
		"   ":                          "",
		"line\nbreak\x00.txt":          "line_break_.txt",
		"bad\xffutf8.txt":              "bad\uFFFDutf8.txt",
		"Übersicht «Q1».pdf":           "Übersicht «Q1».pdf",
		"invoice\u202Efdp.exe":         "invoicefdp.exe",
		"\u202A\u202B\u202C\u202D\u202E\u2066\u2067\u2068\u2069":               "",
		"a\u202Ab\u202Bc\u202Cd\u202De\u202Ef\u2066g\u2067h\u2068i\u2069j.txt": "abcdefghij.txt",
		" \u2067 spaced.txt \u2069 ":                                           "spaced.txt",
		"\u200Emarks\u200F\u2069.txt":                                          "\u200Emarks\u200F.txt", // LRM and RLM are marks, not controls: kept
		"\u2065\u206A edge.txt":                                                "\u2065\u206A edge.txt", // the neighbours of the isolates are not bidi controls
		"עברית\u2067.pdf":                                                      "עברית.pdf",
	} {
		require.Equal(t, want, attachment.CleanFilename(raw), "%q", raw)
	}
	require.False(t, attachment.FilenameTooLong(strings.Repeat("ü", 255)))
	require.True(t, attachment.FilenameTooLong(strings.Repeat("a", 256)))
}
