#!/bin/sh
# Installs the Node packages of the STOMP client test (api/stomp/testdata) when
# node_modules is missing or older than package-lock.json, then prints the directory.
# The Makefile's test target runs it and sets TW_REQUIRE_NODE=1, so the real-client
# test cannot be skipped there.
set -eu
dir="$(cd "$(dirname "$0")/../api/stomp/testdata" && pwd)"
cd "$dir"
stamp=node_modules/.package-lock.json
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ]; then
	npm ci --silent --no-audit --no-fund >&2
fi
echo "$dir"
