#!/usr/bin/env bash
# run.sh runs bin/taskweave with a development environment: a Postgres from pg.sh and,
# unless TW_JWT_SECRET is set, a generated secret kept in .data/jwt-secret so tokens stay
# valid across restarts. Every other TW_ variable passes through unchanged.
#
#   scripts/run.sh all        what `make run` does
#   scripts/run.sh migrate    what `make migrate` does
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$repo"

TW_DATABASE_URL=$(scripts/pg.sh run | tail -n 1)
export TW_DATABASE_URL

if [[ -z ${TW_JWT_SECRET:-} ]]; then
	secret_file=.data/jwt-secret
	if [[ ! -s $secret_file ]]; then
		mkdir -p .data
		(umask 077 && head -c 48 /dev/urandom | base64 | tr -d '\n' >"$secret_file")
		echo "run.sh: generated a development TW_JWT_SECRET in $secret_file" >&2
	fi
	TW_JWT_SECRET=$(cat "$secret_file")
	export TW_JWT_SECRET
	echo "run.sh: using the development TW_JWT_SECRET from $secret_file (set TW_JWT_SECRET to use your own)" >&2
fi

echo "run.sh: taskweave $* with TW_DATABASE_URL=$TW_DATABASE_URL" >&2
exec "$repo/bin/taskweave" "$@"
