package servicedesk_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/servicedesk"
)

// dovecot is a private Dovecot IMAP server (Debian's dovecot-imapd, found by
// scripts/dovecot.sh) on two free loopback ports: plain with STARTTLS, and implicit
// TLS, with a certificate of the test's own CA and one account per user name given.
type dovecot struct {
	plain, implicit string // addresses
	log             string // path of its log
}

// startDovecot starts Dovecot from TW_DOVECOT; without it the test is skipped, unless
// TW_REQUIRE_DOVECOT=1 (make test) makes that a failure.
func startDovecot(t *testing.T, cert tls.Certificate, users ...string) *dovecot {
	t.Helper()
	bin := os.Getenv("TW_DOVECOT")
	if bin == "" {
		if os.Getenv("TW_REQUIRE_DOVECOT") == "1" {
			t.Fatal("TW_DOVECOT is not set (scripts/dovecot.sh prints it; make test sets it)")
		}
		t.Skip("TW_DOVECOT not set: run scripts/dovecot.sh (make test does)")
	}
	// Dovecot's processes run as an unprivileged user, which must reach the directory.
	dir, err := os.MkdirTemp("", "tw-dovecot-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	mailUser, internal := currentMailUser(t)

	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]})
	keyDER, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	require.NoError(t, err)
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cert.pem"), certPEM, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "key.pem"), keyPEM, 0o600))
	var passwd strings.Builder
	for _, u := range users {
		fmt.Fprintf(&passwd, "%s:{PLAIN}secret\n", u)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "passwd"), []byte(passwd.String()), 0o644))
	mail := filepath.Join(dir, "mail")
	require.NoError(t, os.Mkdir(mail, 0o755))
	if os.Geteuid() == 0 {
		require.NoError(t, exec.Command("chown", mailUser.Username+":", mail).Run())
	}

	d := &dovecot{plain: freeLoopback(t), implicit: freeLoopback(t), log: filepath.Join(dir, "dovecot.log")}
	port := func(addr string) string { _, p, _ := net.SplitHostPort(addr); return p }
	conf := fmt.Sprintf(`protocols = imap
listen = 127.0.0.1
base_dir = %[1]s/run
state_dir = %[1]s/run
log_path = %[1]s/dovecot.log
info_log_path = %[1]s/dovecot.log
ssl = yes
ssl_cert = <%[1]s/cert.pem
ssl_key = <%[1]s/key.pem
ssl_min_protocol = TLSv1.2
# Plain LOGIN is allowed so the plain transport can be tested; the log line of each
# login says whether its session was encrypted.
disable_plaintext_auth = no
auth_mechanisms = plain login
first_valid_uid = 1
default_internal_user = %[2]s
default_login_user = %[2]s
mail_location = maildir:%[1]s/mail/%%u
passdb {
  driver = passwd-file
  args = scheme=PLAIN %[1]s/passwd
}
userdb {
  driver = static
  args = uid=%[3]s gid=%[4]s home=%[1]s/mail/%%u
}
service imap-login {
  chroot =
  inet_listener imap {
    port = %[5]s
  }
  inet_listener imaps {
    port = %[6]s
    ssl = yes
  }
}
service anvil {
  chroot =
}
`, dir, internal, mailUser.Uid, mailUser.Gid, port(d.plain), port(d.implicit))
	confPath := filepath.Join(dir, "dovecot.conf")
	require.NoError(t, os.WriteFile(confPath, []byte(conf), 0o644))
	cmd := exec.Command(bin, "-F", "-c", confPath)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			logText, _ := os.ReadFile(d.log)
			t.Logf("dovecot output:\n%s\n%s", out.String(), logText)
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	for _, addr := range []string{d.plain, d.implicit} {
		for {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				c.Close()
				break
			}
			require.True(t, time.Now().Before(deadline), "dovecot did not listen on %s: %s", addr, out.String())
			time.Sleep(50 * time.Millisecond)
		}
	}
	return d
}

// currentMailUser is the account Dovecot's mail and internal processes run as: nobody
// when the test runs as root (Dovecot refuses uid 0 for mail), the test's own
// otherwise.
func currentMailUser(t *testing.T) (*user.User, string) {
	t.Helper()
	if os.Geteuid() == 0 {
		u, err := user.Lookup("nobody")
		require.NoError(t, err)
		return u, "nobody"
	}
	u, err := user.Current()
	require.NoError(t, err)
	return u, u.Username
}

func freeLoopback(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// deliver appends raw to user's INBOX through Dovecot, unseen.
func (d *dovecot) deliver(t *testing.T, user, raw string) {
	t.Helper()
	c, err := imapclient.DialInsecure(d.plain, nil)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Login(user, "secret").Wait())
	body := []byte(strings.ReplaceAll(raw, "\n", "\r\n"))
	cmd := c.Append("INBOX", int64(len(body)), nil)
	_, err = cmd.Write(body)
	require.NoError(t, err)
	require.NoError(t, cmd.Close())
	_, err = cmd.Wait()
	require.NoError(t, err)
}

// logins are the lines of Dovecot's log recording a successful login of user.
func (d *dovecot) logins(t *testing.T, user string) []string {
	t.Helper()
	raw, err := os.ReadFile(d.log)
	require.NoError(t, err)
	var out []string
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.Contains(line, "Login: user=<"+user+">") {
			out = append(out, line)
		}
	}
	return out
}

// TestMailIngestionAgainstDovecot polls a real Dovecot over each transport of
// TW_IMAP_TLS, with certificate verification against the test's CA: plain, STARTTLS
// (required, and auto when offered) and implicit TLS each make the ticket, and
// Dovecot's log shows each encrypted session as TLS; a certificate from another CA is
// refused over STARTTLS, implicit TLS and auto (no fallback to plain), making nothing.
func TestMailIngestionAgainstDovecot(t *testing.T) {
	t.Parallel()
	cert, roots := selfSigned(t)
	_, otherRoots := selfSigned(t) // a CA that did not sign Dovecot's certificate
	trusted := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	wrong := &tls.Config{RootCAs: otherRoots, MinVersion: tls.VersionTLS12}
	cases := []struct {
		name     string
		implicit bool
		mode     string
		client   *tls.Config
		err      string
		tls      bool
	}{
		{"plain", false, servicedesk.IMAPTLSNone, nil, "", false},
		{"STARTTLS", false, servicedesk.IMAPTLSStartTLS, trusted, "", true},
		{"auto upgrades", false, servicedesk.IMAPTLSAuto, trusted, "", true},
		{"implicit TLS", true, servicedesk.IMAPTLSImplicit, trusted, "", true},
		{"STARTTLS, wrong certificate", false, servicedesk.IMAPTLSStartTLS, wrong, "certificate", false},
		{"auto, wrong certificate", false, servicedesk.IMAPTLSAuto, wrong, "certificate", false},
		{"implicit TLS, wrong certificate", true, servicedesk.IMAPTLSImplicit, wrong, "certificate", false},
	}
	users := make([]string, len(cases))
	for i := range cases {
		users[i] = fmt.Sprintf("desk%d", i)
	}
	d := startDovecot(t, cert, users...)
	for i, c := range cases {
		user := users[i]
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := newBundle(t)
			deskAddr := "help-" + strings.ToLower(b.project.Key) + "@acme.test"
			_, err := b.desk.Enable(b.ctx, b.owner.Actor, b.project, &deskAddr)
			require.NoError(t, err)
			_, err = b.desk.ApproveAddress(b.ctx, b.owner.Actor, b.project.Key, deskAddr)
			require.NoError(t, err)
			d.deliver(t, user, email("dovecot-"+user+"@acme.test", "ann@example.com", deskAddr, "Sent through Dovecot", "Hello from a real mail server."))
			before := len(d.logins(t, user))

			addr := d.plain
			if c.implicit {
				addr = d.implicit
			}
			svc := servicedesk.NewService(b.db, b.bus, audit.NewRecorder(b.bus))
			poller := servicedesk.NewPoller(svc, servicedesk.MailboxConfig{Addr: addr, Username: user, Password: "secret",
				TLS: c.mode, TLSConfig: c.client}, nil, nil, false)
			res, err := poller.Poll(b.ctx)
			tickets := b.count(t, `SELECT count(*) FROM service_desk_tickets AS t JOIN issues AS i ON i.id = t.issue_id
				WHERE i.project_id = $1 AND t.channel = 'EMAIL'`, b.project.ID)
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				require.Zero(t, tickets)
				require.Len(t, d.logins(t, user), before, "no login over a connection whose certificate was refused")
				return
			}
			require.NoError(t, err)
			require.Equal(t, servicedesk.PollResult{Tickets: 1}, res)
			require.Equal(t, 1, tickets)
			var lines []string
			require.Eventually(t, func() bool { lines = d.logins(t, user); return len(lines) > before }, 5*time.Second, 20*time.Millisecond)
			login := lines[len(lines)-1]
			if c.tls {
				require.Contains(t, login, ", TLS", "the poller's session was encrypted: %s", login)
			} else {
				require.NotContains(t, login, "TLS", "a plain session: %s", login)
			}
		})
	}
}
