package webhook

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/stretchr/testify/require"
)

// fakeResolver answers lookups from a table and counts them; a host it does not know
// does not resolve.
type fakeResolver struct {
	addrs map[string][]string
	calls atomic.Int32
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.calls.Add(1)
	ss, ok := r.addrs[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out, nil
}

// ianaSpecialIPv4 and ianaSpecialIPv6 are every entry of IANA's IPv4 and IPv6
// Special-Purpose Address Registries (iana-ipv4-special-registry,
// iana-ipv6-special-registry, as of 2025), sub-blocks included, and the other
// non-unicast blocks: multicast, IPv4 reserved, IPv6 site-local.
var ianaSpecialIPv4 = []string{
	"0.0.0.0/8", "0.0.0.0/32", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
	"192.0.0.0/24", "192.0.0.0/29", "192.0.0.8/32", "192.0.0.9/32", "192.0.0.10/32", "192.0.0.170/32", "192.0.0.171/32",
	"192.0.2.0/24", "192.31.196.0/24", "192.52.193.0/24", "192.88.99.0/24", "192.88.99.2/32", "192.168.0.0/16",
	"192.175.48.0/24", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4", "255.255.255.255/32",
	"224.0.0.0/4",
}

var ianaSpecialIPv6 = []string{
	"::1/128", "::/128", "::ffff:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "100:0:0:1::/64",
	"2001::/23", "2001::/32", "2001:1::1/128", "2001:1::2/128", "2001:1::3/128", "2001:2::/48", "2001:3::/32",
	"2001:4:112::/48", "2001:10::/28", "2001:20::/28", "2001:30::/28", "2001:db8::/32", "2002::/16",
	"2620:4f:8000::/48", "3fff::/20", "5f00::/16", "fc00::/7", "fe80::/10",
	"fec0::/10", "ff00::/8", "::/96",
}

// wrappers carry an IPv4 address: their addresses are judged by it, not by the block.
var wrappers = map[string]bool{"::ffff:0:0/96": true, "64:ff9b::/96": true, "2002::/16": true, "::/96": true}

// lastAddr is the highest address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// midAddr is the address half-way through p.
func midAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	if p.Bits() < len(b)*8 {
		b[p.Bits()/8] |= 0x80 >> (p.Bits() % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

func TestAddressAllowedRefusesEverySpecialPurposeBlock(t *testing.T) {
	t.Parallel()
	for _, s := range append(append([]string{}, ianaSpecialIPv4...), ianaSpecialIPv6...) {
		p := netip.MustParsePrefix(s)
		probes := []netip.Addr{p.Masked().Addr(), lastAddr(p)}
		if !wrappers[s] {
			probes = append(probes, midAddr(p))
		}
		for _, a := range probes {
			require.False(t, AddressAllowed(a), "%s in %s", a, s)
		}
	}
	// The addresses next to the blocks, and ordinary global ones, are allowed.
	for _, s := range []string{
		"1.1.1.1", "8.8.8.8", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0", "126.255.255.255", "128.0.0.0",
		"169.253.255.255", "169.255.0.0", "172.15.255.255", "172.32.0.0", "191.255.255.255", "192.0.1.0", "192.0.3.0",
		"192.88.98.255", "192.167.255.255", "192.169.0.0", "198.17.255.255", "198.20.0.0", "203.0.112.255", "203.0.114.0",
		"223.255.255.255", "2001:200::1", "2001:4860:4860::8888", "2001:db9::1", "2003::1", "2620:4f:7fff::1",
		"2a00:1450:4001:80b::200e", "3ffe::1", "3ffe:ffff::1", "::ffff:8.8.8.8",
	} {
		require.True(t, AddressAllowed(netip.MustParseAddr(s)), s)
	}
	require.False(t, AddressAllowed(netip.Addr{}), "the zero Addr")
	require.False(t, AddressAllowed(netip.MustParseAddr("fe80::1%eth0")), "a zone changes nothing")
	require.True(t, AddressAllowed(netip.MustParseAddr("2001:4860:4860::8888%eth0")), "a zone changes nothing")
}

// TestAddressAllowedUnwrapsEmbeddedIPv4: mapped, compatible, NAT64 and 6to4 addresses
// are judged as the IPv4 address they reach, so each reaches no special-purpose block.
func TestAddressAllowedUnwrapsEmbeddedIPv4(t *testing.T) {
	t.Parallel()
	wrap := map[string]func(a [4]byte) netip.Addr{
		"mapped": func(a [4]byte) netip.Addr {
			return netip.AddrFrom16([16]byte{10: 0xff, 11: 0xff, 12: a[0], 13: a[1], 14: a[2], 15: a[3]})
		},
		"compatible": func(a [4]byte) netip.Addr {
			return netip.AddrFrom16([16]byte{12: a[0], 13: a[1], 14: a[2], 15: a[3]})
		},
		"nat64": func(a [4]byte) netip.Addr {
			return netip.AddrFrom16([16]byte{1: 0x64, 2: 0xff, 3: 0x9b, 12: a[0], 13: a[1], 14: a[2], 15: a[3]})
		},
		"6to4": func(a [4]byte) netip.Addr {
			return netip.AddrFrom16([16]byte{0: 0x20, 1: 0x02, 2: a[0], 3: a[1], 4: a[2], 5: a[3], 15: 1})
		},
	}
	for form, w := range wrap {
		for _, s := range ianaSpecialIPv4 {
			p := netip.MustParsePrefix(s)
			for _, a := range []netip.Addr{p.Masked().Addr(), midAddr(p), lastAddr(p)} {
				require.False(t, AddressAllowed(w(a.As4())), "%s %s = %s", form, a, w(a.As4()))
			}
		}
		require.True(t, AddressAllowed(w([4]byte{8, 8, 8, 8})), "%s of 8.8.8.8 = %s", form, w([4]byte{8, 8, 8, 8}))
	}
	// The spellings the review named.
	for _, s := range []string{"::ffff:169.254.169.254", "::127.0.0.1", "::10.0.0.1", "64:ff9b::a9fe:a9fe", "64:ff9b::127.0.0.1",
		"2002:a9fe:a9fe::1", "2002:7f00:1::", "2002:c0a8:101::1", "::ffff:0:127.0.0.1", "64:ff9b:1::a9fe:a9fe"} {
		require.False(t, AddressAllowed(netip.MustParseAddr(s)), s)
	}
	v4, ok := embeddedIPv4(netip.MustParseAddr("64:ff9b::a9fe:a9fe"))
	require.True(t, ok)
	require.Equal(t, "169.254.169.254", v4.String())
	v4, ok = embeddedIPv4(netip.MustParseAddr("2002:0808:0404::1"))
	require.True(t, ok)
	require.Equal(t, "8.8.4.4", v4.String())
}

func TestNumericIPv4Notations(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]string{
		"127.1": "127.0.0.1", "0x7f000001": "127.0.0.1", "2130706433": "127.0.0.1", "0177.0.0.1": "127.0.0.1",
		"0": "0.0.0.0", "0x7f.1": "127.0.0.1", "127.0.0.1.": "127.0.0.1", "0X7F.0.0.01": "127.0.0.1", "0x": "0.0.0.0",
		"169.254.43518": "169.254.169.254", "0xa9.0xfe.0xa9.0xfe": "169.254.169.254", "0251.0376.0251.0376": "169.254.169.254",
		"2852039166": "169.254.169.254", "10.1": "10.0.0.1", "192.168.257": "192.168.1.1", "134744072": "8.8.8.8",
		"00000000000000000000000000010": "0.0.0.8", "4294967295": "255.255.255.255",
	} {
		ip, literal, err := literalAddr(host)
		require.NoError(t, err, host)
		require.True(t, literal, host)
		require.Equal(t, want, ip.String(), host)
	}
	for _, host := range []string{"1.2.3.4.5", "256.0.0.1", "1.2.3.08", "4294967296", "1.2.65536", "1.16777216",
		"0x100.0.0.1", "99999999999999999999999", "example.123", "1..2", ".1"} {
		_, _, err := literalAddr(host)
		require.Error(t, err, "%s ends in a number but denotes no address", host)
	}
	for _, host := range []string{"example.com", "0x1g", "1.2.3.example", "a0", "0x7f.example.", "xn--80ak6aa92e.com"} {
		_, literal, err := literalAddr(host)
		require.NoError(t, err, host)
		require.False(t, literal, "%s is a name", host)
	}
}

func TestCheckerRejectsPrivateTargets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	res := &fakeResolver{addrs: map[string][]string{
		"public.example": {"8.8.8.8", "2001:4860:4860::8888"}, "meta.example": {"100.100.100.200"},
		"mixed.example": {"8.8.8.8", "10.0.0.1"}, "nat64.example": {"64:ff9b::a9fe:a9fe"},
		"2130706433": {"8.8.8.8"}, "127.1": {"8.8.8.8"}, // a resolver's answer for a number is never asked
	}}
	strict := Checker{Resolver: res}
	for _, u := range []string{
		"http://127.0.0.1/x", "http://localhost:8080/x", "http://LOCALHOST./x", "http://api.localhost/x", "http://10.1.2.3/",
		"http://192.168.0.10/", "http://169.254.169.254/latest", "http://[::1]/", "http://[fc00::1]/", "http://0.0.0.0/",
		"http://224.0.0.1/", "http://[::ffff:127.0.0.1]/", "ftp://8.8.8.8/", "mailto:a@b.c", "http:///nohost", "/relative", "",
		"http://100.64.0.1/", "http://100.100.100.200/", "http://198.18.0.1/", "http://192.0.0.1/", "http://240.0.0.1/",
		"http://255.255.255.255/", "http://203.0.113.10/", "http://[64:ff9b::a9fe:a9fe]/", "http://[2002:a9fe:a9fe::]/",
		"http://[fec0::1]/", "http://[::169.254.169.254]/", "http://[fe80::1%25eth0]/",
		"http://127.1/", "http://0x7f000001/", "http://2130706433/", "http://0177.0.0.1/", "http://0/", "http://127.0.0.1./",
		"http://0xa9fea9fe/latest", "http://1.2.3.4.5/", "http://256.1.1.1:80/",
		"http://meta.example/", "http://mixed.example/", "http://nat64.example/",
	} {
		err := strict.Check(ctx, u)
		require.ErrorIs(t, err, ErrURLRejected, "%q", u)
	}
	for _, u := range []string{"https://8.8.8.8:8443/hook", "http://[2001:4860:4860::8888]/", "http://[64:ff9b::808:808]/",
		"http://134744072/", "https://public.example/hook"} {
		require.NoError(t, strict.Check(ctx, u), u)
	}
	require.Equal(t, int32(4), res.calls.Load(), "only the names were looked up, none of the numeric hosts")
	// A name that does not resolve passes; the dialer refuses it later if need be.
	require.NoError(t, strict.Check(ctx, "https://no-such-host.invalid/hook"))
	require.ErrorContains(t, strict.Check(ctx, "http://[64:ff9b::a9fe:a9fe]/"), "(IPv4 169.254.169.254)", "the message names what it reaches")

	open := Checker{AllowPrivate: true, Resolver: res}
	for _, u := range []string{"http://127.0.0.1:9/x", "http://localhost/x", "http://[::1]/", "http://10.0.0.1/", "http://127.1/"} {
		require.NoError(t, open.Check(ctx, u), u)
	}
	require.ErrorIs(t, open.Check(ctx, "gopher://127.0.0.1/"), ErrURLRejected, "the scheme rule stays")
	require.ErrorIs(t, open.Check(ctx, "http://1.2.3.4.5/"), ErrURLRejected, "so does the host's syntax")
}

func TestDialControlRefusesNonPublicAddresses(t *testing.T) {
	t.Parallel()
	for _, a := range []string{"127.0.0.1:80", "[::1]:443", "10.0.0.7:8080", "[::ffff:192.168.1.1]:80", "100.64.0.1:80",
		"[64:ff9b::a9fe:a9fe]:80", "garbage"} {
		require.ErrorIs(t, dialControl("tcp", a, nil), errDialRefused, a)
	}
	require.NoError(t, dialControl("tcp", "8.8.8.8:443", nil))
}

// TestPostDialTimeCheck: the delivery client resolves through the configured resolver
// and refuses the connection when the name answers any non-public address, whatever it
// answered when the webhook was saved; a host spelled as a number is its own address.
// The receiver listens on 127.0.0.1, so a refusal is the only thing between it and the
// request; with the rule off, the same resolver's answer leads there.
func TestPostDialTimeCheck(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte("reached"))
	}))
	defer srv.Close()
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)
	bad := []string{"127.0.0.1", "169.254.169.254", "100.64.0.1", "100.100.100.200", "198.18.0.1", "0.0.0.0", "::1",
		"::ffff:127.0.0.1", "::127.0.0.1", "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "2002:7f00:1::1", "fd00::1", "fec0::1"}
	res := &fakeResolver{addrs: map[string][]string{"rebound.example": {"127.0.0.1"}, "both.example": {"8.8.8.8", "127.0.0.1"}}}
	for i, a := range bad {
		res.addrs[fmt.Sprintf("h%d.example", i)] = []string{a}
	}
	strict := NewSender(nil, Config{Resolver: res, Timeout: 5 * time.Second})
	post := func(s *Sender, host string) (*int, *string, error) {
		return s.post(context.Background(), uuid.New(), "http://"+net.JoinHostPort(host, port)+"/hook", "k", "ping", "{}")
	}
	for i, a := range bad {
		status, _, err := post(strict, fmt.Sprintf("h%d.example", i))
		require.ErrorIs(t, err, errDialRefused, a)
		require.Nil(t, status, a)
	}
	for _, host := range []string{"rebound.example", "both.example", "127.1", "0x7f000001", "2130706433", "0177.0.0.1", "localhost"} {
		_, _, err := post(strict, host)
		require.ErrorIs(t, err, errDialRefused, host)
	}
	require.Zero(t, hits.Load(), "no refused request reached the receiver")
	require.Equal(t, int32(len(bad)+2), res.calls.Load(), "numbers and localhost were not looked up")

	open := NewSender(nil, Config{AllowPrivate: true, Resolver: res, Timeout: 5 * time.Second})
	for _, host := range []string{"rebound.example", "127.1", "0x7f000001", "2130706433", "0177.0.0.1"} {
		status, body, err := post(open, host)
		require.NoError(t, err, host)
		require.Equal(t, 200, *status)
		require.Equal(t, "reached", *body)
	}
	require.Equal(t, int32(5), hits.Load())
	_, _, err = post(open, "unknown.example")
	require.ErrorContains(t, err, "no such host")
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

// TestCheckerDialContext: the net/http dial of other outbound clients (SSO) applies the
// rule to the addresses it connects to, names resolved by the checker's resolver, and
// connects when private addresses are allowed.
func TestCheckerDialContext(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	port := srv.URL[strings.LastIndexByte(srv.URL, ':'):]
	res := &fakeResolver{addrs: map[string][]string{"idp.example": {"127.0.0.1"}}}
	client := func(c Checker) *http.Client {
		return &http.Client{Transport: &http.Transport{DialContext: c.DialContext(2 * time.Second)}}
	}

	strict := client(Checker{Resolver: res})
	for _, target := range []string{srv.URL, "http://idp.example" + port, "http://localhost" + port, "http://2130706433" + port} {
		_, err := strict.Get(target)
		require.ErrorIs(t, err, errDialRefused, target)
	}
	require.Zero(t, hits.Load())

	open := client(Checker{Resolver: res, AllowPrivate: true})
	resp, err := open.Get("http://idp.example" + port)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, int32(1), hits.Load())
}
