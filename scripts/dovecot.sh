#!/usr/bin/env bash
# dovecot.sh prints the path of a Dovecot binary for the mail ingestion tests against a
# real IMAP server (domain/servicedesk/mailbox_dovecot_test.go), as the last line on
# stdout; progress goes to stderr. The test runs its own Dovecot with a private
# configuration, certificate and ports in a temporary directory; this script never leaves
# one running.
#
# In order:
#   1. TW_DOVECOT, when set and executable, is used as is.
#   2. /usr/sbin/dovecot (Debian's dovecot-imapd package) or dovecot on PATH.
#   3. As root on a Debian-like system: Debian's `dovecot-imapd` package is installed with
#      service starts refused during the install, its service stopped and disabled in
#      case one started anyway, then 2 again.
# Anything else exits non-zero with a message saying what to do.
set -euo pipefail

# shellcheck source=lib/debian.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/debian.sh"

if find_binary TW_DOVECOT /usr/sbin/dovecot dovecot; then
	exit 0
fi

install_quiet_package dovecot-imapd dovecot

find_binary TW_DOVECOT /usr/sbin/dovecot dovecot || die "dovecot-imapd was installed but no binary was found at /usr/sbin/dovecot"
