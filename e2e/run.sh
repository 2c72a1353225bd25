#!/usr/bin/env bash
# Builds Tavern, starts it on a scratch database and runs the browser test
# (e2e/run.mjs) against it. Used by `make e2e`. Screenshots: build/e2e/.
# Env: TAVERN_E2E_ADDR (default 127.0.0.1:18089), CHROMIUM (default
# /usr/bin/chromium).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

addr="${TAVERN_E2E_ADDR:-127.0.0.1:18089}"
url="http://$addr"
tmp="$(mktemp -d)"
server_pid=""

# healthy asks /healthz with node (needed anyway), so curl is not required.
healthy() {
	node -e 'fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "$url/healthz"
}

cleanup() {
	if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

if [[ ! -d e2e/node_modules/playwright-core || ! -d e2e/node_modules/@dwmkerr/mock-llm ]]; then
	npm ci --prefix e2e --no-audit --no-fund
fi

mkdir -p bin build/e2e
go build -o bin/tavern ./cmd/server

# The e2e run creates players and tables faster than a person would.
TAVERN_QUOTAS=off ./bin/tavern -addr "$addr" -db "$tmp/e2e.db" >"build/e2e/server.log" 2>&1 &
server_pid=$!

for _ in $(seq 1 100); do
	if healthy; then
		break
	fi
	if ! kill -0 "$server_pid" 2>/dev/null; then
		echo "e2e: the server exited; its log:" >&2
		cat build/e2e/server.log >&2
		exit 1
	fi
	sleep 0.2
done
if ! healthy; then
	echo "e2e: the server did not answer /healthz at $url within 20 s; its log:" >&2
	cat build/e2e/server.log >&2
	exit 1
fi

status=0
TAVERN_URL="$url" node e2e/run.mjs || status=$?
[[ $status -ne 0 ]] || TAVERN_URL="$url" node e2e/admin.mjs || status=$?
[[ $status -ne 0 ]] || TAVERN_URL="$url" node e2e/ask.mjs || status=$?
[[ $status -ne 0 ]] || TAVERN_URL="$url" node e2e/abilities.mjs || status=$?
[[ $status -ne 0 ]] || TAVERN_URL="$url" node e2e/retcon.mjs || status=$?
[[ $status -ne 0 ]] || TAVERN_URL="$url" node e2e/adventures.mjs || status=$?
# Runs a server of its own (it stops and restarts it): OWNERS_ADDR.
[[ $status -ne 0 ]] || TAVERN_BIN=bin/tavern node e2e/owners.mjs || status=$?
# Its own mock-llm and Tavern, on other ports: a third-party model server.
[[ $status -ne 0 ]] || node e2e/mockllm.mjs || status=$?
[[ $status -ne 0 ]] || node e2e/operator.mjs || status=$?
# Every page on a desktop and a phone, on its own server (SCREENS_ADDR); the
# PNGs go to SCREENS_DIR (default /tmp/tavern-screens).
[[ $status -ne 0 ]] || node e2e/screens.mjs || status=$?
if [[ $status -ne 0 ]]; then
	echo "e2e: failed; server log in build/e2e/server.log, screenshots in build/e2e/" >&2
fi
exit $status
