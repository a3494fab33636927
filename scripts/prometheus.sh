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

# shellcheck source=lib/debian.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/debian.sh"

if find_binary TW_PROMETHEUS /usr/bin/prometheus prometheus; then
	exit 0
fi

install_quiet_package prometheus prometheus

find_binary TW_PROMETHEUS /usr/bin/prometheus prometheus || die "prometheus was installed but no binary was found at /usr/bin/prometheus"
