package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// ErrURLRejected is a webhook URL that is not http(s) with a host, or whose host is or
// resolves to an address the service must not call (loopback, private, link-local,
// unspecified, multicast): webhooks must not become a way into the internal network.
var ErrURLRejected = errors.New("webhook: url rejected")

// resolveTimeout bounds the DNS lookup of the save-time check. A host that does not
// answer in time passes, like one that does not resolve: delivery fails later, and the
// dial-time check still guards the address actually used.
const resolveTimeout = 2 * time.Second

// Checker validates webhook URLs against the private-address rule.
type Checker struct {
	// AllowPrivate switches the address rule off (tests, development).
	AllowPrivate bool
	// Resolver looks hosts up; nil means net.DefaultResolver.
	Resolver *net.Resolver
}

// Check parses raw and applies the rule: http or https with a host; every address the
// host resolves to (an IP literal is its own address) must be public. A host that
// cannot be resolved passes and fails only at delivery.
func (c Checker) Check(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrURLRejected, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.Opaque != "" {
		return fmt.Errorf("%w: need an http or https URL with a host", ErrURLRejected)
	}
	if c.AllowPrivate {
		return nil
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		if !AddressAllowed(ip) {
			return fmt.Errorf("%w: address %s is not public", ErrURLRejected, ip)
		}
		return nil
	}
	// "localhost" and its subdomains are loopback whatever a resolver says (RFC 6761).
	if h := strings.ToLower(strings.TrimSuffix(host, ".")); h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return fmt.Errorf("%w: %s is loopback", ErrURLRejected, host)
	}
	r := c.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	lctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	addrs, err := r.LookupNetIP(lctx, "ip", host)
	if err != nil {
		return nil // unresolvable now: refused at delivery if it resolves somewhere private
	}
	for _, a := range addrs {
		if !AddressAllowed(a) {
			return fmt.Errorf("%w: %s resolves to %s, which is not public", ErrURLRejected, host, a)
		}
	}
	return nil
}

// AddressAllowed reports whether the service may call ip: not loopback, private
// (RFC 1918, fc00::/7), link-local unicast or multicast, unspecified or multicast.
// IPv4-mapped IPv6 addresses are judged as the IPv4 address they carry.
func AddressAllowed(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() {
		return false
	}
	return !(ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified())
}

// errDialRefused is the dial-time refusal; its text lands in the delivery's last error.
var errDialRefused = errors.New("webhook: refusing to connect to a non-public address")

// dialControl is net.Dialer.Control for deliveries: it sees the address actually being
// dialed, after DNS, so a host that resolved to a public address when saved and to a
// private one now (DNS rebinding) is still refused.
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
