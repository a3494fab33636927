#!/usr/bin/env bash
# pg.sh makes sure a Postgres answers for `make run` and `make test`, and prints the
# database URL to use as the last line on stdout (progress goes to stderr).
#
#   scripts/pg.sh run    URL of the database to run on (created when missing)
#   scripts/pg.sh test   URL of the postgres database, as a superuser (tests create
#                        and drop their own databases)
#
# In order:
#   1. TW_DATABASE_URL (run) or TW_TEST_DATABASE_URL (test), when set, is used as is
#      (run: the database it names is created when the server lacks it).
#   2. A server answering on 127.0.0.1:5432 that lets `postgres` in without a password.
#   3. A private cluster under .data/pg (git-ignored): initdb + pg_ctl, 127.0.0.1 only,
#      trust auth, socket inside .data. Debian's postgresql package is installed first
#      when no initdb/pg_ctl can be found. Run again, it reuses (or restarts) the cluster.
#
# Postgres refuses to run as root, so as root the private cluster belongs to the
# `postgres` OS user. Stop it with `scripts/pg.sh stop`.
set -euo pipefail

mode=${1:-run}
case "$mode" in
run | test | stop) ;;
*)
	echo "usage: scripts/pg.sh run|test|stop" >&2
	exit 2
	;;
esac

say() { echo "pg.sh: $*" >&2; }
die() {
	say "$*"
	exit 1
}

# find_bin prints the path of a Postgres program: PATH first, then the
# Debian layout (newest major version wins).
find_bin() {
	local name=$1 p d
	if p=$(command -v "$name" 2>/dev/null); then
		echo "$p"
		return 0
	fi
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -n -r); do
		if [[ -x $d/$name ]]; then
			echo "$d/$name"
			return 0
		fi
	done
	return 1
}

# ensure_database creates the database a postgres:// URL names when the server does not
# have it, connecting to the server's postgres database with the URL's credentials. It
# only warns when it cannot tell (no psql, a server that does not answer, another URL
# form): taskweave itself then says what is wrong.
ensure_database() {
	local url=$1 psql db admin exists
	if [[ ! $url =~ ^(postgres(ql)?://[^/?]*)/([A-Za-z0-9_]+)(\?.*)?$ ]]; then
		say "cannot tell the database of TW_DATABASE_URL: make sure it exists"
		return 0
	fi
	db=${BASH_REMATCH[3]}
	admin=${BASH_REMATCH[1]}/postgres${BASH_REMATCH[4]}
	if ! psql=$(find_bin psql); then
		say "psql not found: make sure database $db exists"
		return 0
	fi
	if ! exists=$(echo "select 1 from pg_database where datname = :'db'" |
		PGCONNECT_TIMEOUT=5 "$psql" -X -q -tA -d "$admin" -v db="$db" 2>&1); then
		say "could not check that database $db exists: $exists"
		return 0
	fi
	if [[ $exists != 1 ]]; then
		say "creating database $db"
		echo 'create database :"db"' | "$psql" -X -q -d "$admin" -v ON_ERROR_STOP=1 -v db="$db" >&2
	fi
}

if [[ $mode == run && -n ${TW_DATABASE_URL:-} ]]; then
	say "using TW_DATABASE_URL as given"
	ensure_database "$TW_DATABASE_URL"
	echo "$TW_DATABASE_URL"
	exit 0
fi
if [[ $mode == test && -n ${TW_TEST_DATABASE_URL:-} ]]; then
	say "using TW_TEST_DATABASE_URL as given"
	echo "$TW_TEST_DATABASE_URL"
	exit 0
fi

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
base=$repo/.data/pg
pgdata=$base/data
sockdir=$base/run
logfile=$base/postgres.log
portfile=$base/port
host=127.0.0.1
default_port=5432

mkdir -p "$repo/.data"
# One pg.sh at a time: `make run` and `make test` started together must not both initdb.
if command -v flock >/dev/null; then
	exec 9>"$repo/.data/pg.lock"
	flock 9
fi

# answers reports whether a server accepts connections on host:port.
answers() {
	local port=$1 isready
	if isready=$(find_bin pg_isready); then
		"$isready" -q -h "$host" -p "$port" -t 3 2>/dev/null
		return
	fi
	timeout 3 bash -c "exec 3<>/dev/tcp/$host/$port" 2>/dev/null
}

url_for() { # port database
	echo "postgres://postgres@$host:$1/$2?sslmode=disable"
}

# usable reports whether postgres may connect without a password (what the URL we
# print promises). Without psql there is no way to tell, so an answer is enough.
usable() {
	local port=$1 psql
	psql=$(find_bin psql) || return 0
	PGCONNECT_TIMEOUT=5 "$psql" -X -q -tA -d "$(url_for "$port" postgres)" -c 'select 1' >/dev/null 2>&1
}

# as_owner runs a command as the owner of the private cluster.
as_owner() {
	if [[ $EUID -eq 0 ]]; then
		if command -v runuser >/dev/null; then
			runuser -u postgres -- "$@"
		else
			su -s /bin/sh postgres -c "$(printf '%q ' "$@")"
		fi
	else
		"$@"
	fi
}

install_postgres() {
	local sudo=()
	if [[ $EUID -ne 0 ]]; then
		command -v sudo >/dev/null ||
			die "no initdb/pg_ctl found and not root: install Postgres (Debian: apt-get install postgresql) or set TW_DATABASE_URL / TW_TEST_DATABASE_URL"
		sudo=(sudo)
	fi
	command -v apt-get >/dev/null ||
		die "no initdb/pg_ctl found and no apt-get: install Postgres or set TW_DATABASE_URL / TW_TEST_DATABASE_URL"
	say "installing Debian's postgresql package (apt-get)"
	"${sudo[@]}" apt-get update >&2
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql >&2
}

# ensure_owner prepares .data/pg for the postgres OS user when running as root.
ensure_owner() {
	[[ $EUID -eq 0 ]] || return 0
	if ! id postgres >/dev/null 2>&1; then
		say "creating the postgres OS user"
		useradd --system --user-group --no-create-home --home-dir /var/lib/postgresql --shell /bin/bash postgres
	fi
	# The server must reach .data/pg: every directory above it needs search (x) rights.
	local d=$repo
	while [[ $d != / ]]; do
		if ! as_owner test -x "$d" 2>/dev/null; then
			say "chmod o+x $d so the postgres user can reach .data/pg"
			chmod o+x "$d"
		fi
		d=$(dirname "$d")
	done
	mkdir -p "$repo/.data"
	chmod o+x "$repo/.data"
	mkdir -p "$base"
	chown -R postgres: "$base"
}

private_port() {
	if [[ -s $portfile ]]; then
		cat "$portfile"
	else
		echo "$default_port"
	fi
}

private_running() {
	[[ -f $pgdata/PG_VERSION ]] && as_owner "$pg_ctl" -D "$pgdata" status >/dev/null 2>&1
}

start_private() {
	local initdb # sets the global port
	pg_ctl=$(find_bin pg_ctl) || true
	initdb=$(find_bin initdb) || true
	if [[ -z $pg_ctl || -z $initdb ]]; then
		install_postgres
		# Debian starts its own cluster on 5432 after installing; use it if it lets us in.
		if answers "$default_port" && usable "$default_port"; then
			say "the freshly installed cluster answers on $host:$default_port"
			port=$default_port
			return 0
		fi
		pg_ctl=$(find_bin pg_ctl) || die "pg_ctl still not found after installing postgresql"
		initdb=$(find_bin initdb) || die "initdb still not found after installing postgresql"
	fi
	ensure_owner
	if [[ ! -f $pgdata/PG_VERSION ]]; then
		port=$default_port
		# 5432 may be held by a server that wants a password; take the next free port.
		while answers "$port"; do
			port=$((port + 1))
			((port < default_port + 20)) || die "no free port near $default_port"
		done
		say "creating a private cluster in .data/pg (port $port)"
		as_owner mkdir -p "$pgdata" "$sockdir"
		as_owner "$initdb" -D "$pgdata" -U postgres --auth=trust --encoding=UTF8 --no-locale >"$base/initdb.log" 2>&1 ||
			die "initdb failed; see $base/initdb.log"
		# A disposable development cluster: no fsync, room for the parallel test packages.
		as_owner tee -a "$pgdata/postgresql.conf" >/dev/null <<EOF

# added by scripts/pg.sh
listen_addresses = '$host'
port = $port
max_connections = 200
fsync = off
synchronous_commit = off
full_page_writes = off
EOF
		echo "$port" | as_owner tee "$portfile" >/dev/null
	fi
	port=$(private_port)
	if private_running; then
		say "private cluster already running on $host:$port"
		return 0
	fi
	as_owner mkdir -p "$sockdir"
	say "starting the private cluster on $host:$port (log: .data/pg/postgres.log)"
	as_owner "$pg_ctl" -D "$pgdata" -l "$logfile" -w -t 60 -o "-k '$sockdir'" start >&2 9>&- ||
		die "pg_ctl start failed; see $logfile"
}

if [[ $mode == stop ]]; then
	pg_ctl=$(find_bin pg_ctl) || die "pg_ctl not found"
	if private_running; then
		as_owner "$pg_ctl" -D "$pgdata" -m fast -w stop >&2
	else
		say "no private cluster running"
	fi
	exit 0
fi

port=""
pg_ctl=$(find_bin pg_ctl) || true
if [[ -f $pgdata/PG_VERSION && -n $pg_ctl ]] && private_running; then
	port=$(private_port)
	say "private cluster running on $host:$port"
elif answers "$default_port" && usable "$default_port"; then
	port=$default_port
	say "a Postgres answers on $host:$port"
else
	answers "$default_port" && say "$host:$default_port answers but postgres needs a password there; using a private cluster"
	start_private
fi

if [[ $mode == run ]]; then
	ensure_database "$(url_for "$port" taskweave)"
	url_for "$port" taskweave
else
	url_for "$port" postgres
fi
