package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrURLRejected is a webhook URL that is not http(s) with a host, or whose host is or
// resolves to an address the service must not call (anything but public global unicast,
// see AddressAllowed): webhooks must not become a way into the internal network, and the
// first 4 KiB of every reply is shown to the project's members.
var ErrURLRejected = errors.New("webhook: url rejected")

// resolveTimeout bounds the DNS lookup of the save-time check. A host that does not
// answer in time passes, like one that does not resolve: delivery fails later, and the
// dial-time check still guards the address actually used.
const resolveTimeout = 2 * time.Second

// Resolver looks host names up; *net.Resolver is one. Tests give a fake one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Checker validates webhook URLs against the address rule.
type Checker struct {
	// AllowPrivate switches the address rule off (tests, development).
	AllowPrivate bool
	// Resolver looks hosts up; nil means net.DefaultResolver.
	Resolver Resolver
}

func (c Checker) resolver() Resolver {
	if c.Resolver == nil {
		return net.DefaultResolver
	}
	return c.Resolver
}

// Check parses raw and applies the rule: http or https with a host; every address the
// host resolves to (an IP literal, in any notation, is its own address) must be allowed
// (AddressAllowed). A name that cannot be resolved passes and fails only at delivery,
// where the dialer applies the same rule to the addresses it connects to.
func (c Checker) Check(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrURLRejected, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.Opaque != "" {
		return fmt.Errorf("%w: need an http or https URL with a host", ErrURLRejected)
	}
	host := u.Hostname()
	ip, literal, err := literalAddr(host)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrURLRejected, err)
	}
	if c.AllowPrivate {
		return nil
	}
	if literal {
		if !AddressAllowed(ip) {
			return fmt.Errorf("%w: address %s is not public", ErrURLRejected, describe(ip))
		}
		return nil
	}
	// "localhost" and its subdomains are loopback whatever a resolver says (RFC 6761).
	if isLocalhost(host) {
		return fmt.Errorf("%w: %s is loopback", ErrURLRejected, host)
	}
	lctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	addrs, err := c.resolver().LookupNetIP(lctx, "ip", host)
	if err != nil {
		return nil // unresolvable now: refused at delivery if it resolves somewhere private
	}
	for _, a := range addrs {
		if !AddressAllowed(a) {
			return fmt.Errorf("%w: %s resolves to %s, which is not public", ErrURLRejected, host, describe(a))
		}
	}
	return nil
}

func isLocalhost(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}

// describe names an address and, when it carries one, the IPv4 address it reaches.
func describe(ip netip.Addr) string {
	if v4, ok := embeddedIPv4(ip.WithZone("")); ok {
		return fmt.Sprintf("%s (IPv4 %s)", ip, v4)
	}
	return ip.String()
}

// literalAddr reads host as an address literal: an IPv6 or dotted-quad IPv4 literal, or
// an IPv4 address in another numeric notation (see numericIPv4). literal is false for a
// name; err is a host that ends in a number but denotes no address ("1.2.3.4.5",
// "0x1g", "256.0.0.1"), which is no usable name either.
func literalAddr(host string) (ip netip.Addr, literal bool, err error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip, true, nil
	}
	return numericIPv4(host)
}

// numericIPv4 reads host as browsers (the WHATWG URL standard's IPv4 parser) and the C
// library's inet_aton do: one to four dot-separated parts, each decimal, octal (leading
// 0) or hexadecimal (leading 0x), the last filling the remaining bytes, one trailing dot
// allowed. So 127.1, 0x7f000001, 2130706433, 0177.0.0.1 and 0 are addresses (127.0.0.1
// and 0.0.0.0), judged as such rather than looked up as names, which a resolver may or
// may not do the same way. A host whose last part is numeric but which is no valid
// address is an error; any other host is a name (literal false).
func numericIPv4(host string) (netip.Addr, bool, error) {
	parts := strings.Split(host, ".")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if _, ok := ipv4Number(parts[len(parts)-1]); !ok && !allDigits(parts[len(parts)-1]) {
		return netip.Addr{}, false, nil // the last label is not a number: a name
	}
	bad := fmt.Errorf("host %q is neither a name nor an IPv4 address", host)
	if len(parts) > 4 {
		return netip.Addr{}, false, bad
	}
	var v uint64
	for i, p := range parts {
		n, ok := ipv4Number(p)
		if !ok {
			return netip.Addr{}, false, bad
		}
		if i < len(parts)-1 {
			if n > 255 {
				return netip.Addr{}, false, bad
			}
			v = v<<8 | n
			continue
		}
		rest := uint(5-len(parts)) * 8 // bits the last part fills
		if n >= 1<<rest {
			return netip.Addr{}, false, bad
		}
		v = v<<rest | n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true, nil
}

// ipv4Number parses one part of a numeric IPv4 host: 0x or 0X then hex digits (none
// means 0), 0 then octal digits, or decimal digits.
func ipv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
		if s == "" {
			return 0, true
		}
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	for i := 0; i < len(s); i++ { // ParseUint alone would take a sign or underscores
		c := s[i]
		switch {
		case '0' <= c && c <= '7', '8' <= c && c <= '9' && base >= 10, 'a' <= c|0x20 && c|0x20 <= 'f' && base == 16:
		default:
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		return 1 << 40, true // more digits than any part may have: out of range, not a name
	}
	return n, true
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// specialIPv4 is IANA's IPv4 Special-Purpose Address Registry (as of 2025), with the
// multicast block and the reserved block 240.0.0.0/4 (255.255.255.255 included). Blocks
// the registry marks globally reachable (192.0.0.9, AS112, ...) are refused too: none is
// a place a webhook receiver lives.
var specialIPv4 = prefixes(
	"0.0.0.0/8",       // "this network" (RFC 791)
	"10.0.0.0/8",      // private use (RFC 1918)
	"100.64.0.0/10",   // shared address space, carrier-grade NAT and cloud metadata (RFC 6598)
	"127.0.0.0/8",     // loopback (RFC 1122)
	"169.254.0.0/16",  // link local, cloud metadata (RFC 3927)
	"172.16.0.0/12",   // private use (RFC 1918)
	"192.0.0.0/24",    // IETF protocol assignments (RFC 6890), DS-Lite, NAT64 discovery
	"192.0.2.0/24",    // documentation TEST-NET-1 (RFC 5737)
	"192.31.196.0/24", // AS112-v4 (RFC 7535)
	"192.52.193.0/24", // AMT (RFC 7450)
	"192.88.99.0/24",  // deprecated 6to4 relay anycast (RFC 7526)
	"192.168.0.0/16",  // private use (RFC 1918)
	"192.175.48.0/24", // direct delegation AS112 service (RFC 7534)
	"198.18.0.0/15",   // benchmarking (RFC 2544)
	"198.51.100.0/24", // documentation TEST-NET-2 (RFC 5737)
	"203.0.113.0/24",  // documentation TEST-NET-3 (RFC 5737)
	"224.0.0.0/4",     // multicast (RFC 5771)
	"240.0.0.0/4",     // reserved (RFC 1112), limited broadcast 255.255.255.255 (RFC 919)
)

// globalUnicastIPv6 is the only IPv6 space allocated for global unicast (RFC 4291,
// IANA's IPv6 Address Space registry): everything else (::/8 with loopback, unspecified,
// mapped and compatible addresses; 100::/64 discard; 5f00::/16 segment routing;
// fc00::/7 unique local; fe80::/10 link local; fec0::/10 site local; ff00::/8
// multicast) is refused.
var globalUnicastIPv6 = netip.MustParsePrefix("2000::/3")

// specialIPv6 is IANA's IPv6 Special-Purpose Address Registry (as of 2025) within
// 2000::/3; the registry's blocks outside it are refused by globalUnicastIPv6.
var specialIPv6 = prefixes(
	"2001::/23",         // IETF protocol assignments (RFC 2928): Teredo 2001::/32, PCP and TURN anycast, benchmarking 2001:2::/48, AMT, AS112, ORCHID, drone remote ID
	"2001:db8::/32",     // documentation (RFC 3849)
	"2002::/16",         // 6to4 (RFC 3056); reached only through its IPv4 address, see embeddedIPv4
	"2620:4f:8000::/48", // direct delegation AS112 service (RFC 7534)
	"3fff::/20",         // documentation (RFC 9637)
)

// nat64 is the well-known NAT64 prefix (RFC 6052): 64:ff9b::a.b.c.d reaches a.b.c.d.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// embeddedIPv4 is the IPv4 address an IPv6 address reaches in one of the forms that
// carry one: IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d (deprecated, still
// routed to IPv4 by some stacks), NAT64 64:ff9b::a.b.c.d and 6to4 2002:aabb:ccdd::/48.
func embeddedIPv4(ip netip.Addr) (netip.Addr, bool) {
	if !ip.Is6() {
		return netip.Addr{}, false
	}
	if ip.Is4In6() {
		return ip.Unmap(), true
	}
	b := ip.As16()
	switch {
	case [12]byte(b[:12]) == [12]byte{}, nat64.Contains(ip):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case b[0] == 0x20 && b[1] == 0x02:
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// AddressAllowed reports whether the service may call ip: only global unicast addresses
// outside IANA's special-purpose registries, IPv4 and IPv6. An IPv6 address carrying an
// IPv4 address (embeddedIPv4) is judged as that IPv4 address: ::ffff:8.8.8.8 and
// 64:ff9b::8.8.8.8 may be called, 64:ff9b::169.254.169.254 may not. A zone is ignored.
func AddressAllowed(ip netip.Addr) bool {
	ip = ip.WithZone("")
	if v4, ok := embeddedIPv4(ip); ok {
		ip = v4
	}
	if !ip.IsValid() {
		return false
	}
	if ip.Is4() {
		for _, p := range specialIPv4 {
			if p.Contains(ip) {
				return false
			}
		}
		return true
	}
	if !globalUnicastIPv6.Contains(ip) {
		return false
	}
	for _, p := range specialIPv6 {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// errDialRefused is the dial-time refusal; its text lands in the delivery's last error.
var errDialRefused = errors.New("webhook: refusing to connect to a non-public address")

// guardedDialer opens delivery connections. It resolves the host itself (a numeric host
// in any notation is its own address, as at save time), refuses the whole dial when any
// address the name resolves to is not allowed (unless allowPrivate), and connects to
// the checked addresses, so a host that resolved to a public address when saved and to
// a private one now (DNS rebinding) is refused, and no second lookup happens between
// the check and the connection.
type guardedDialer struct {
	dialer       net.Dialer
	resolver     Resolver
	allowPrivate bool
}

func newGuardedDialer(cfg Config) *guardedDialer {
	d := &guardedDialer{
		dialer:       net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second},
		resolver:     Checker{Resolver: cfg.Resolver}.resolver(),
		allowPrivate: cfg.AllowPrivate,
	}
	if !cfg.AllowPrivate {
		d.dialer.Control = dialControl // the last word, on the socket's own address
	}
	return d
}

// DialContext is the address rule at dial time for the service's other outbound
// net/http clients (SSO discovery, token and key requests): a net/http Transport's
// DialContext that resolves with c's resolver, refuses a host when any of its addresses
// is not allowed (unless c.AllowPrivate), and connects only to the addresses checked, as
// webhook deliveries do. Every connection, a redirect's included, passes through it.
func (c Checker) DialContext(timeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	g := newGuardedDialer(Config{AllowPrivate: c.AllowPrivate, Resolver: c.Resolver, Timeout: timeout})
	return func(ctx context.Context, _, addr string) (net.Conn, error) {
		d := g.dialer
		return g.dialContext(ctx, &d, addr)
	}
}

// dial connects to addr (host:port) within timeout (0: the dialer's own).
func (g *guardedDialer) dial(addr string, timeout time.Duration) (net.Conn, error) {
	d := g.dialer
	if timeout > 0 {
		d.Timeout = min(timeout, d.Timeout)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d.Timeout)
	defer cancel()
	return g.dialContext(ctx, &d, addr)
}

// dialContext resolves, checks and connects to addr with d under ctx.
func (g *guardedDialer) dialContext(ctx context.Context, d *net.Dialer, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", errDialRefused, addr)
	}
	ip, literal, err := literalAddr(host)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errDialRefused, err)
	}
	addrs := []netip.Addr{ip}
	if !literal {
		if !g.allowPrivate && isLocalhost(host) {
			return nil, fmt.Errorf("%w: %s", errDialRefused, host)
		}
		if addrs, err = g.resolver.LookupNetIP(ctx, "ip", host); err != nil {
			return nil, fmt.Errorf("webhook: resolve %s: %w", host, err)
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("webhook: %s has no address", host)
		}
	}
	if !g.allowPrivate {
		for _, a := range addrs {
			if !AddressAllowed(a) {
				return nil, fmt.Errorf("%w: %s is %s", errDialRefused, host, describe(a))
			}
		}
	}
	var errs []error
	for _, a := range addrs {
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(a.String(), port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// dialControl is net.Dialer.Control for deliveries: it sees the address of the socket
// actually being connected and applies the rule once more.
func dialControl(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", errDialRefused, address)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !AddressAllowed(ip) {
		return fmt.Errorf("%w: %s", errDialRefused, host)
	}
	return nil
}
