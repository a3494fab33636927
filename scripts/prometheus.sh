#!/usr/bin/env bash
# prometheus.sh prints the path of a Prometheus server binary for the dashboards test
# (cmd/taskweave/dashboards_test.go), as the last line on stdout; progress goes to
# stderr. The test runs its own server on a random port with a temporary data
# directory; this script never leaves one running.
#
# In order:
#   1. TW_PROMETHEUS, when set and executable, is used as is.
#   2. /usr/bin/prometheus (Debian's package) or prometheus on PATH.
#   3. As root on a Debian-like system: Debian's `prometheus` package is installed
#      (apt-get update && apt-get install -y --no-install-recommends prometheus) with
#      service starts refused during the install, its service stopped and disabled in
#      case one started anyway, then 2 again.
# Anything else exits non-zero with a message saying what to do.
set -euo pipefail

say() { echo "prometheus.sh: $*" >&2; }
die() {
	say "$*"
	exit 1
}

find_prometheus() {
	if [[ -n "${TW_PROMETHEUS:-}" ]]; then
		[[ -x "$TW_PROMETHEUS" ]] || die "TW_PROMETHEUS=$TW_PROMETHEUS is not an executable file"
		echo "$TW_PROMETHEUS"
		return 0
	fi
	if [[ -x /usr/bin/prometheus ]]; then
		echo /usr/bin/prometheus
		return 0
	fi
	if command -v prometheus >/dev/null 2>&1; then
		command -v prometheus
		return 0
	fi
	return 1
}

# stop_service stops and disables the package's own server (on :9090), which would
# otherwise keep running and collecting on this machine.
stop_service() {
	if command -v systemctl >/dev/null 2>&1 && [[ -d /run/systemd/system ]]; then
		systemctl disable --now prometheus >/dev/null 2>&1 || true
	fi
	if [[ -x /etc/init.d/prometheus ]]; then
		/etc/init.d/prometheus stop >/dev/null 2>&1 || true
		command -v update-rc.d >/dev/null 2>&1 && update-rc.d prometheus disable >/dev/null 2>&1 || true
	fi
}

if find_prometheus; then
	exit 0
fi

if [[ "$(id -u)" -ne 0 ]]; then
	die "no Prometheus found; run this script as root to install Debian's prometheus package, or set TW_PROMETHEUS to a prometheus binary"
fi
if ! command -v apt-get >/dev/null 2>&1; then
	die "no Prometheus found and no apt-get to install it; set TW_PROMETHEUS to a prometheus binary"
fi

say "installing Debian's prometheus package"
export DEBIAN_FRONTEND=noninteractive
# Debian's maintainer scripts ask policy-rc.d before starting a service; 101 refuses.
# An existing policy is left alone.
policy=/usr/sbin/policy-rc.d
own_policy=
if [[ ! -e $policy ]]; then
	printf '#!/bin/sh\nexit 101\n' >"$policy"
	chmod 755 "$policy"
	own_policy=1
fi
# An if, not `[[ … ]] && rm`: the trap's last status becomes the script's, and a false
# test there failed a successful install whenever the policy was not ours.
cleanup() {
	if [[ -n $own_policy ]]; then
		rm -f "$policy"
	fi
}
trap cleanup EXIT
apt-get update -qq >&2 || die "apt-get update failed"
apt-get install -y -qq --no-install-recommends prometheus >&2 || die "apt-get install prometheus failed"
stop_service

find_prometheus || die "prometheus was installed but no binary was found at /usr/bin/prometheus"
