package servicedesk_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/servicedesk"
)

// selfSigned makes a certificate for 127.0.0.1 and the pool of roots that trusts it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "imap.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	roots := x509.NewCertPool()
	roots.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, roots
}

// serverTLS is how a test IMAP server encrypts.
type serverTLS int

const (
	serverImplicit serverTLS = iota // TLS from the first byte (port 993 style)
	serverStartTLS                  // plain, offering STARTTLS
	serverPlain                     // plain, no STARTTLS
)

// newTLSMailServer starts an in-memory IMAP server on 127.0.0.1 with one message for
// the desk at deskAddr. Except in serverPlain, the server refuses LOGIN on an
// unencrypted connection (InsecureAuth off), so a poll that logs in and makes a ticket
// proves the session was encrypted.
func newTLSMailServer(t *testing.T, mode serverTLS, cert tls.Certificate, deskAddr string) string {
	t.Helper()
	mem := imapmemserver.New()
	user := imapmemserver.NewUser("desk", "secret")
	require.NoError(t, user.Create("INBOX", nil))
	mem.AddUser(user)
	raw := email("tls-"+strings.ToLower(deskAddr), "ann@example.com", deskAddr, "Sent over TLS", "Encrypted, hopefully.")
	_, err := user.Append("INBOX", strings.NewReader(strings.ReplaceAll(raw, "\n", "\r\n")), &imap.AppendOptions{})
	require.NoError(t, err)
	opts := &imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return mem.NewSession(), nil, nil
		},
		Caps:   imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapIMAP4rev2: {}},
		Logger: slogLogger{},
	}
	tlsConfig := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	switch mode {
	case serverStartTLS:
		opts.TLSConfig = tlsConfig
	case serverPlain:
		opts.InsecureAuth = true
	}
	srv := imapserver.New(opts)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	if mode == serverImplicit {
		ln = tls.NewListener(ln, tlsConfig)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// TestMailIngestionOverTLS polls real IMAP servers in each TLS mode of TW_IMAP_TLS:
// implicit TLS, required STARTTLS and auto (STARTTLS when offered) make the ticket over
// an encrypted session; STARTTLS required of a server without it, and a certificate
// the poller does not trust, fail the poll and make nothing. Auto against a plain
// server without STARTTLS is TestMailIngestion.
func TestMailIngestionOverTLS(t *testing.T) {
	t.Parallel()
	cert, roots := selfSigned(t)
	trusted := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	for _, c := range []struct {
		name    string
		server  serverTLS
		mode    string
		client  *tls.Config
		tickets int
		err     string
	}{
		{"implicit TLS", serverImplicit, servicedesk.IMAPTLSImplicit, trusted, 1, ""},
		{"STARTTLS required", serverStartTLS, servicedesk.IMAPTLSStartTLS, trusted, 1, ""},
		{"auto upgrades when offered", serverStartTLS, servicedesk.IMAPTLSAuto, trusted, 1, ""},
		{"STARTTLS required, none offered", serverPlain, servicedesk.IMAPTLSStartTLS, trusted, 0, "imap connect"},
		{"implicit TLS, untrusted certificate", serverImplicit, servicedesk.IMAPTLSImplicit, nil, 0, "certificate"},
		{"STARTTLS, untrusted certificate", serverStartTLS, servicedesk.IMAPTLSStartTLS, nil, 0, "certificate"},
		// A failed upgrade must not quietly fall back to a plain session: an attacker
		// in the middle could otherwise force one.
		{"auto, untrusted certificate", serverStartTLS, servicedesk.IMAPTLSAuto, nil, 0, "certificate"},
		// The control for the cases above: the same server refuses a client that stays
		// plain, so their tickets can only have come through an encrypted session.
		{"plain client refused", serverStartTLS, servicedesk.IMAPTLSNone, nil, 0, "PRIVACYREQUIRED"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := newBundle(t)
			deskAddr := "help-" + strings.ToLower(b.project.Key) + "@acme.test"
			_, err := b.desk.Enable(b.ctx, b.owner.Actor, b.project, &deskAddr)
			require.NoError(t, err)
			_, err = b.desk.ApproveAddress(b.ctx, b.owner.Actor, b.project.Key, deskAddr)
			require.NoError(t, err)
			addr := newTLSMailServer(t, c.server, cert, deskAddr)
			svc := servicedesk.NewService(b.db, b.bus, audit.NewRecorder(b.bus))
			poller := servicedesk.NewPoller(svc, servicedesk.MailboxConfig{Addr: addr, Username: "desk", Password: "secret",
				TLS: c.mode, TLSConfig: c.client}, nil, nil, false)
			res, err := poller.Poll(b.ctx)
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
			} else {
				require.NoError(t, err)
				require.Equal(t, servicedesk.PollResult{Tickets: 1}, res)
			}
			require.Equal(t, c.tickets, b.count(t, `SELECT count(*) FROM service_desk_tickets AS t JOIN issues AS i ON i.id = t.issue_id
				WHERE i.project_id = $1 AND t.channel = 'EMAIL'`, b.project.ID))
		})
	}
}

// TestMailPollStopsOnSilentServer: a server that accepts the connection and then says
// nothing (no greeting, no TLS handshake) holds a poll only until its context ends, in
// every TLS mode: a worker's shutdown cancels the poll's context and must not wait for
// imapclient's 30-second timeouts.
func TestMailPollStopsOnSilentServer(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	held := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held <- c // kept open, never written to
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		for {
			select {
			case c := <-held:
				_ = c.Close()
			default:
				return
			}
		}
	})
	_, roots := selfSigned(t)
	for _, mode := range []string{servicedesk.IMAPTLSNone, servicedesk.IMAPTLSAuto, servicedesk.IMAPTLSStartTLS, servicedesk.IMAPTLSImplicit} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			poller := servicedesk.NewPoller(nil, servicedesk.MailboxConfig{Addr: ln.Addr().String(), Username: "desk",
				Password: "secret", TLS: mode, TLSConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}, nil, nil, false)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			time.AfterFunc(200*time.Millisecond, cancel) // a cancellation, not a deadline
			start := time.Now()
			_, err := poller.Poll(ctx)
			require.ErrorIs(t, err, context.Canceled)
			require.Less(t, time.Since(start), 3*time.Second, "the poll waited for the silent server")
		})
	}
}
