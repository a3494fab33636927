package main

import (
	"context"
	"strings"
	"testing"

	"github.com/sethvargo/go-envconfig"
	"github.com/stretchr/testify/require"
)

// TestMailboxOwnAddresses: the shared desk mailbox's own addresses are
// TW_MAIL_MAILBOX_ADDRESSES plus TW_IMAP_USER when that is an address, lower case; a
// plain user name adds nothing. Both the API and the worker get them.
func TestMailboxOwnAddresses(t *testing.T) {
	t.Parallel()
	secret := strings.Repeat("s", 32)
	load := func(env map[string]string) *Config {
		t.Helper()
		env["TW_JWT_SECRET"] = secret
		cfg, err := loadConfig(context.Background(), envconfig.MapLookuper(env))
		require.NoError(t, err)
		return cfg
	}
	require.Empty(t, load(map[string]string{}).MailboxOwnAddresses())
	require.Empty(t, load(map[string]string{"TW_IMAP_USER": "desk"}).MailboxOwnAddresses())
	cfg := load(map[string]string{"TW_IMAP_USER": "Desk@Mailbox.test",
		"TW_MAIL_MAILBOX_ADDRESSES": "catchall@mailbox.test, Bounce@Mailbox.test"})
	want := []string{"desk@mailbox.test", "catchall@mailbox.test", "bounce@mailbox.test"}
	require.Equal(t, want, cfg.MailboxOwnAddresses())
	a := &app{cfg: cfg}
	require.Equal(t, want, a.serviceDeskConfig().Mail.OwnAddresses)
}
