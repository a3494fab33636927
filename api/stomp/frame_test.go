package stomp

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFrameRoundTripWithEscapes(t *testing.T) {
	t.Parallel()
	f := Frame{Command: "MESSAGE", Headers: []Header{
		{"destination", "/topic/projects/ABC"},
		{"odd:name", "line1\nline2\r\\back:colon"},
		{"subscription", "sub-0"},
	}, Body: []byte("{\"a\":\"b\x00c\"}")}
	raw := f.Bytes()
	require.True(t, bytes.HasPrefix(raw, []byte("MESSAGE\ndestination:/topic/projects/ABC\nodd\\cname:line1\\nline2\\r\\\\back\\ccolon\n")), "%q", raw)
	require.Contains(t, string(raw), "content-length:11\n", "a body gets its length, so it may hold NUL")

	frames, err := NewDecoder(Limits{}).Feed(raw)
	require.NoError(t, err)
	require.Len(t, frames, 1)
	got := frames[0]
	require.Equal(t, "MESSAGE", got.Command)
	require.Equal(t, "line1\nline2\r\\back:colon", got.Value("odd:name"))
	require.Equal(t, f.Body, got.Body)
}

func TestConnectHeadersAreNotEscaped(t *testing.T) {
	t.Parallel()
	f := Frame{Command: "CONNECTED", Headers: []Header{{"server", "a:b"}}}
	require.Equal(t, "CONNECTED\nserver:a:b\n\n\x00", string(f.Bytes()))

	frames, err := NewDecoder(Limits{}).Feed([]byte("CONNECT\r\nAuthorization:Bearer a\\b:c\r\n\r\n\x00"))
	require.NoError(t, err)
	require.Equal(t, "Bearer a\\b:c", frames[0].Value("Authorization"), "CONNECT values are taken verbatim, after the first colon")
}

func TestDecoderStreams(t *testing.T) {
	t.Parallel()
	d := NewDecoder(Limits{})
	stream := "\n\r\n" + "SEND\ndestination:/app/x\nreceipt:1\n\nhello\x00\n\n" +
		"SUBSCRIBE\nid:0\ndestination:/a\ndestination:/b\n\n\x00" +
		"SEND\ncontent-length:3\n\na\x00b\x00"
	var frames []Frame
	// Byte by byte: frames split across WebSocket messages are put back together.
	for i := 0; i < len(stream); i++ {
		fs, err := d.Feed([]byte{stream[i]})
		require.NoError(t, err)
		frames = append(frames, fs...)
	}
	require.Len(t, frames, 3)
	require.Equal(t, "hello", string(frames[0].Body))
	require.Equal(t, "1", frames[0].Value("receipt"))
	require.Equal(t, "/a", frames[1].Value("destination"), "the first of repeated headers wins")
	require.Nil(t, frames[1].Body)
	require.Equal(t, []byte("a\x00b"), frames[2].Body)

	// Heart-beats alone produce nothing.
	fs, err := d.Feed([]byte("\n\n\r\n"))
	require.NoError(t, err)
	require.Empty(t, fs)
}

func TestDecoderRefusesBadFrames(t *testing.T) {
	t.Parallel()
	limits := Limits{MaxFrame: 256, MaxHeaders: 4}
	cases := map[string]string{
		"lower-case command":     "send\n\n\x00",
		"binary command":         "\x01\x02\n\n\x00",
		"header without colon":   "SEND\nnocolon\n\n\x00",
		"empty header name":      "SEND\n:v\n\n\x00",
		"undefined escape":       "SEND\na:b\\t\n\n\x00",
		"unfinished escape":      "SEND\na:b\\\n\n\x00",
		"bad content-length":     "SEND\ncontent-length:x\n\n\x00",
		"negative length":        "SEND\ncontent-length:-1\n\n\x00",
		"body past length":       "SEND\ncontent-length:1\n\nab\x00",
		"too many headers":       "SEND\na:1\nb:2\nc:3\nd:4\ne:5\n\n\x00",
		"length over the limit":  "SEND\ncontent-length:1000\n\n",
		"body over the limit":    "SEND\n\n" + strings.Repeat("x", 300) + "\x00",
		"unterminated and large": "SEND\n\n" + strings.Repeat("x", 300),
		"endless header":         "SEND\n" + strings.Repeat("h", 300),
		"bare carriage return":   "CONNECT\nx:a\r\r\n\n\x00",
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := NewDecoder(limits).Feed([]byte(in))
			require.ErrorIs(t, err, ErrProtocol)
		})
	}
	// Exactly at the limit is fine: 256 bytes including the NUL.
	body := strings.Repeat("x", 256-len("SEND\n\n")-1)
	frames, err := NewDecoder(limits).Feed([]byte("SEND\n\n" + body + "\x00"))
	require.NoError(t, err)
	require.Len(t, frames, 1)
}

func FuzzDecoder(f *testing.F) {
	f.Add([]byte("CONNECT\naccept-version:1.2\n\n\x00"))
	f.Add([]byte("SEND\ncontent-length:3\n\na\x00b\x00\n"))
	f.Add([]byte("MESSAGE\na\\cb:c\\nd\n\n\x00"))
	f.Add([]byte("CONNECT\nx:a\r\r\n\n\x00"))
	f.Fuzz(func(t *testing.T, in []byte) {
		frames, err := NewDecoder(Limits{MaxFrame: 1024, MaxHeaders: 8}).Feed(in)
		if err != nil {
			return
		}
		// What decodes re-encodes to something that decodes to the same frames.
		var again []byte
		for i := range frames {
			f := frames[i]
			if _, ok := f.Get("content-length"); !ok && bytes.IndexByte(f.Body, 0) >= 0 {
				t.Fatalf("a NUL-terminated body cannot hold NUL: %q", f.Body)
			}
			again = f.AppendTo(again)
		}
		back, err := NewDecoder(Limits{MaxFrame: 1 << 20, MaxHeaders: 16}).Feed(again)
		if err != nil {
			t.Fatalf("re-encoded frames do not decode: %v\n%q", err, again)
		}
		if len(back) != len(frames) {
			t.Fatalf("got %d frames back, want %d", len(back), len(frames))
		}
		for i := range frames {
			if back[i].Command != frames[i].Command || !bytes.Equal(back[i].Body, frames[i].Body) {
				t.Fatalf("frame %d changed: %+v → %+v", i, frames[i], back[i])
			}
			for _, h := range frames[i].Headers {
				if v, _ := back[i].Get(h.Name); v != frames[i].Value(h.Name) {
					t.Fatalf("header %q changed: %q → %q", h.Name, frames[i].Value(h.Name), v)
				}
			}
		}
	})
}
