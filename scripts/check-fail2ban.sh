#!/usr/bin/env bash
# Runs Debian's fail2ban-regex with contrib/fail2ban/filter.d/flowadmin.conf over the audit files of
# the fail2ban test (packages/server/test/hostile-fail2ban.test.ts, run by `pnpm test` first) and of
# the directory's (packages/server/test/directory.system.ts, `pnpm test:system`): it must find the
# address of every failed login, in order, and match no other line.
set -euo pipefail
cd "$(dirname "$0")/.."

filter=contrib/fail2ban/filter.d/flowadmin.conf
# The audit files of the fail2ban test (pnpm test) and of the directory's (pnpm test:system: people of
# the directory whose passwords are refused are login.failed alike).
for results in test-results/fail2ban test-results/fail2ban-directory; do
  if [ ! -s "$results/audit.log" ] || [ ! -s "$results/failed-addresses.txt" ]; then
    echo "check-fail2ban: $results is missing: run the tests first (pnpm test, pnpm test:system)" >&2
    exit 1
  fi
done
if ! command -v fail2ban-regex >/dev/null 2>&1; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends fail2ban
fi

for results in test-results/fail2ban test-results/fail2ban-directory; do
  # Every failed login, and only those: the addresses it extracts are exactly the expected ones.
  found=$(fail2ban-regex --out ip "$results/audit.log" "$filter")
  if ! diff <(printf '%s\n' "$found") "$results/failed-addresses.txt"; then
    echo "check-fail2ban: $results: the filter's matches (<) differ from the failed logins (>)" >&2
    exit 1
  fi

  # No other line: the lines that are not failures (successes among them) match nothing.
  others=$(mktemp)
  grep -v -E '"event":"((login|client|mfa)\.(failed|throttled)|passkey\.failed)"' "$results/audit.log" >"$others"
  succeeded=$(grep -c '"event":"login\.succeeded"' "$others" || true)
  summary=$(fail2ban-regex "$others" "$filter" | grep -E '^Lines: ')
  rm -f "$others"
  echo "check-fail2ban: $results: $(wc -l <"$results/failed-addresses.txt") failed logins matched; other lines ($succeeded successes): $summary"
  if ! grep -q ' 0 matched' <<<"$summary" || [ "$succeeded" -eq 0 ]; then
    echo "check-fail2ban: $results: the filter matched a line that is not a failed login, or no success was checked" >&2
    exit 1
  fi
done
