#!/usr/bin/env bash
# chromium.sh prints the path of a headless-capable Chromium for the browser test of the
# /admin/ops/ page (api/admin/ops_browser_test.go), as the last line on stdout; progress goes
# to stderr.
#
# In order:
#   1. TW_CHROMIUM, when set and executable, is used as is.
#   2. /usr/bin/chromium (Debian's package) or chromium / chromium-browser on PATH.
#   3. As root on a Debian-like system: Debian's `chromium` package is installed
#      (apt-get update -qq && apt-get install -y -qq chromium), then 2 again.
# Anything else exits non-zero with a message saying what to do.
set -euo pipefail

say() { echo "chromium.sh: $*" >&2; }
die() {
	say "$*"
	exit 1
}

find_chromium() {
	if [[ -n "${TW_CHROMIUM:-}" ]]; then
		[[ -x "$TW_CHROMIUM" ]] || die "TW_CHROMIUM=$TW_CHROMIUM is not an executable file"
		echo "$TW_CHROMIUM"
		return 0
	fi
	if [[ -x /usr/bin/chromium ]]; then
		echo /usr/bin/chromium
		return 0
	fi
	local c
	for c in chromium chromium-browser; do
		if command -v "$c" >/dev/null 2>&1; then
			command -v "$c"
			return 0
		fi
	done
	return 1
}

if find_chromium; then
	exit 0
fi

if [[ "$(id -u)" -ne 0 ]]; then
	die "no Chromium found; run this script as root to install Debian's chromium package, or set TW_CHROMIUM to a Chromium binary"
fi
if ! command -v apt-get >/dev/null 2>&1; then
	die "no Chromium found and no apt-get to install it; set TW_CHROMIUM to a Chromium binary"
fi

say "installing Debian's chromium package"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2 || die "apt-get update failed"
apt-get install -y -qq chromium >&2 || die "apt-get install chromium failed"

find_chromium || die "chromium was installed but no binary was found at /usr/bin/chromium"
