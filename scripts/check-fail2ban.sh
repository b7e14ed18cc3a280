#!/usr/bin/env bash
# Runs Debian's fail2ban-regex with contrib/fail2ban/filter.d/flowadmin.conf over the audit file of
# the fail2ban test (packages/server/test/hostile-fail2ban.test.ts, run by `pnpm test` first): it
# must find the address of every failed login, in order, and match no other line.
set -euo pipefail
cd "$(dirname "$0")/.."

filter=contrib/fail2ban/filter.d/flowadmin.conf
results=test-results/fail2ban
if [ ! -s "$results/audit.log" ] || [ ! -s "$results/failed-addresses.txt" ]; then
  echo "check-fail2ban: $results is missing: run the tests first (pnpm test)" >&2
  exit 1
fi
if ! command -v fail2ban-regex >/dev/null 2>&1; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends fail2ban
fi

# Every failed login, and only those: the addresses it extracts are exactly the expected ones.
found=$(fail2ban-regex --out ip "$results/audit.log" "$filter")
if ! diff <(printf '%s\n' "$found") "$results/failed-addresses.txt"; then
  echo "check-fail2ban: the filter's matches (<) differ from the failed logins (>)" >&2
  exit 1
fi

# No other line: the lines that are not failures (successes among them) match nothing.
others=$(mktemp)
trap 'rm -f "$others"' EXIT
grep -v -E '"event":"((login|client|mfa)\.(failed|throttled)|passkey\.failed)"' "$results/audit.log" >"$others"
succeeded=$(grep -c '"event":"login\.succeeded"' "$others" || true)
summary=$(fail2ban-regex "$others" "$filter" | grep -E '^Lines: ')
echo "check-fail2ban: $(wc -l <"$results/failed-addresses.txt") failed logins matched; other lines ($succeeded successes): $summary"
if ! grep -q ' 0 matched' <<<"$summary" || [ "$succeeded" -eq 0 ]; then
  echo "check-fail2ban: the filter matched a line that is not a failed login, or no success was checked" >&2
  exit 1
fi
