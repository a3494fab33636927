#!/bin/sh
# Installs the Node packages of the tests that run real JavaScript tooling when
# node_modules is missing or older than package-lock.json: the STOMP client test
# (api/stomp/testdata) and the OpenAPI TypeScript check (api/testdata/openapi-ts). Prints
# the STOMP client's directory. The Makefile's test target runs it and sets
# TW_REQUIRE_NODE=1, so those tests cannot be skipped there.
set -eu
api="$(cd "$(dirname "$0")/../api" && pwd)"
for dir in "$api/testdata/openapi-ts" "$api/stomp/testdata"; do
	stamp="$dir/node_modules/.package-lock.json"
	if [ ! -f "$stamp" ] || [ "$dir/package-lock.json" -nt "$stamp" ]; then
		(cd "$dir" && npm ci --silent --no-audit --no-fund >&2)
	fi
done
echo "$api/stomp/testdata"
