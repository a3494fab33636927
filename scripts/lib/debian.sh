# debian.sh: finding a binary the tests need, and installing the Debian package that has
# it with its service kept from running. Sourced by scripts/prometheus.sh and
# scripts/dovecot.sh.

say() { echo "$(basename "$0"): $*" >&2; }
die() {
	say "$*"
	exit 1
}

# find_binary prints the binary to use: the variable named var when set (it must be
# executable), else path when executable, else name on PATH; it fails when none is.
find_binary() {
	local var=$1 path=$2 name=$3
	if [[ -n "${!var:-}" ]]; then
		[[ -x "${!var}" ]] || die "$var=${!var} is not an executable file"
		echo "${!var}"
		return 0
	fi
	if [[ -x $path ]]; then
		echo "$path"
		return 0
	fi
	if command -v "$name" >/dev/null 2>&1; then
		command -v "$name"
		return 0
	fi
	return 1
}

# stop_service stops and disables a package's own server (Prometheus on :9090, Dovecot
# on :143), which would otherwise keep running on this machine.
stop_service() {
	local name=$1
	if command -v systemctl >/dev/null 2>&1 && [[ -d /run/systemd/system ]]; then
		systemctl disable --now "$name" >/dev/null 2>&1 || true
	fi
	if [[ -x /etc/init.d/$name ]]; then
		"/etc/init.d/$name" stop >/dev/null 2>&1 || true
		command -v update-rc.d >/dev/null 2>&1 && update-rc.d "$name" disable >/dev/null 2>&1 || true
	fi
}

# install_quiet_package installs package (as root, with apt-get) with service starts
# refused during the install, then stops and disables service in case one started anyway.
install_quiet_package() {
	local package=$1 service=$2
	if [[ "$(id -u)" -ne 0 ]]; then
		die "not root: install Debian's $package package yourself, or run this script as root"
	fi
	command -v apt-get >/dev/null 2>&1 || die "no apt-get to install $package"
	say "installing Debian's $package package"
	export DEBIAN_FRONTEND=noninteractive
	# Debian's maintainer scripts ask policy-rc.d before starting a service; 101 refuses.
	# An existing policy is left alone.
	local policy=/usr/sbin/policy-rc.d own_policy=
	if [[ ! -e $policy ]]; then
		printf '#!/bin/sh\nexit 101\n' >"$policy"
		chmod 755 "$policy"
		own_policy=1
	fi
	local ok=1
	apt-get update -qq >&2 || ok=
	if [[ -n $ok ]]; then
		apt-get install -y -qq --no-install-recommends "$package" >&2 || ok=
	fi
	if [[ -n $own_policy ]]; then
		rm -f "$policy"
	fi
	[[ -n $ok ]] || die "apt-get install $package failed"
	stop_service "$service"
}
