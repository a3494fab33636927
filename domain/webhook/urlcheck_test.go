package webhook

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestAddressAllowed(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"127.0.0.1": false, "127.8.9.10": false, "10.0.0.1": false, "172.16.5.4": false, "192.168.1.1": false,
		"169.254.169.254": false, "0.0.0.0": false, "224.0.0.1": false, "239.1.2.3": false, "::1": false, "::": false,
		"fc00::1": false, "fd12:3456::1": false, "fe80::1": false, "ff02::1": false, "::ffff:127.0.0.1": false,
		"::ffff:10.0.0.1": false, "203.0.113.10": true, "8.8.8.8": true, "2001:4860:4860::8888": true, "::ffff:8.8.8.8": true,
	} {
		require.Equal(t, want, AddressAllowed(netip.MustParseAddr(addr)), addr)
	}
}

func TestCheckerRejectsPrivateTargets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	strict := Checker{}
	for _, u := range []string{
		"http://127.0.0.1/x", "http://localhost:8080/x", "http://LOCALHOST./x", "http://api.localhost/x", "http://10.1.2.3/",
		"http://192.168.0.10/", "http://169.254.169.254/latest", "http://[::1]/", "http://[fc00::1]/", "http://0.0.0.0/",
		"http://224.0.0.1/", "http://[::ffff:127.0.0.1]/", "ftp://203.0.113.10/", "mailto:a@b.c", "http:///nohost", "/relative", "",
	} {
		err := strict.Check(ctx, u)
		require.True(t, errors.Is(err, ErrURLRejected), "%q: %v", u, err)
	}
	require.NoError(t, strict.Check(ctx, "https://203.0.113.10:8443/hook"))
	// A name that does not resolve passes; the dialer refuses it later if need be.
	require.NoError(t, strict.Check(ctx, "https://no-such-host.invalid/hook"))

	open := Checker{AllowPrivate: true}
	for _, u := range []string{"http://127.0.0.1:9/x", "http://localhost/x", "http://[::1]/", "http://10.0.0.1/"} {
		require.NoError(t, open.Check(ctx, u), u)
	}
	require.ErrorIs(t, open.Check(ctx, "gopher://127.0.0.1/"), ErrURLRejected, "the scheme rule stays")
}

func TestDialControlRefusesNonPublicAddresses(t *testing.T) {
	t.Parallel()
	for _, a := range []string{"127.0.0.1:80", "[::1]:443", "10.0.0.7:8080", "[::ffff:192.168.1.1]:80", "garbage"} {
		require.ErrorIs(t, dialControl("tcp", a, nil), errDialRefused, a)
	}
	require.NoError(t, dialControl("tcp", "203.0.113.10:443", nil))
}

func TestSignAndClip(t *testing.T) {
	t.Parallel()
	// HMAC-SHA256("hello", "key"), as computed by openssl dgst -sha256 -hmac key.
	require.Equal(t, "sha256=9307b3b915efb5171ff14d8cb55fbcc798c6c0ef1456d66ded1a6aa723a58b7b", Sign([]byte("hello"), "key"))

	require.Equal(t, "short", clip("short", 10))
	long := strings.Repeat("ä", 3000) // 6000 bytes
	c := clip(long, MaxResponseBody)
	require.LessOrEqual(t, len(c), MaxResponseBody)
	require.True(t, utf8.ValidString(c))
	require.Equal(t, "a\uFFFDb\uFFFD", clip("a\x00b\xff", 100), "NUL and invalid bytes cannot go into a text column")
}
