#!/usr/bin/env bash
# Runs the whole test suite: typecheck, then every test file under test/ with node's test runner.
# Node 20's --test takes no globs, so the files are listed here. Pass file paths to run a subset.
# test/realtime/ holds the long real-time line tests (minutes): `npm run test:interop:realtime`;
# test/interop/sip-line-realtime.test.ts, a short one (one page, two rungs), runs here.
#
# PostgreSQL: the store and engine tests run against SQLite and PostgreSQL. Unless
# FAXLINE_TEST_PG_URL names a server, one throwaway cluster is started here for the whole run
# (scripts/test-postgres.ts; initdb + pg_ctl in /tmp, on a free port) and removed at the end;
# every suite makes a database of its own on it. Failover tests start clusters of their own.
# FAXLINE_TEST_DIALECTS=sqlite (or postgres) narrows the dialects (and says so; CI refuses it).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$#" -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(find test -path test/realtime -prune -o -name '*.test.ts' -print | sort)
  # The fax engine addon and the SpanDSP test receiver (about 2 s; see scripts/build-native.sh).
  bash scripts/build-native.sh >/dev/null
  npx tsc -p tsconfig.json --noEmit
  npx tsc -p packages/console/tsconfig.json
fi
if [ -z "${FAXLINE_TEST_PG_URL:-}" ] && [ "${FAXLINE_TEST_DIALECTS:-sqlite,postgres}" != "sqlite" ]; then
  pg_file="$(mktemp /tmp/faxline-test-pg.XXXXXX)"
  trap 'node --import tsx scripts/test-postgres.ts stop "$pg_file" || true' EXIT
  FAXLINE_TEST_PG_URL="$(node --import tsx scripts/test-postgres.ts start "$pg_file")"
  export FAXLINE_TEST_PG_URL
fi
dialects="${FAXLINE_TEST_DIALECTS:-sqlite,postgres}"
if [ "$dialects" != "sqlite,postgres" ] && [ "$dialects" != "postgres,sqlite" ]; then
  echo "run-tests.sh: FAXLINE_TEST_DIALECTS=$dialects: the suites of the other dialect are left out of this run" >&2
  if [ -n "${FAXLINE_TEST_NO_SKIPS:-}" ]; then
    echo "run-tests.sh: FAXLINE_TEST_NO_SKIPS is set (CI): every suite must run on both dialects" >&2
    exit 1
  fi
fi
# No file may hold the run forever: a test without a timeout of its own fails after 15 minutes, and a
# file whose tests have all ended exits even if something it opened is still open (a test that failed
# before its cleanup).
# FAXLINE_TEST_NO_SKIPS (set by .ci/run): a skipped test fails the run. A developer's partial run
# may skip (a peer it lacks says what to install); CI may not (scripts/install.sh installs them all).
summary="$(mktemp /tmp/faxline-test-summary.XXXXXX)"
status=0
node --import tsx --test --test-concurrency=1 --test-force-exit --test-timeout=900000 --test-reporter=spec "${files[@]}" | tee "$summary" || status=$?
skipped="$( (grep -aE '^ℹ skipped [0-9]+' "$summary" || true) | tail -n 1 | awk '{print $3}')"
if [ -n "${FAXLINE_TEST_NO_SKIPS:-}" ] && [ "${skipped:-0}" != "0" ]; then
  echo "run-tests.sh: $skipped test(s) skipped; with FAXLINE_TEST_NO_SKIPS every test must run:" >&2
  grep -aE '# SKIP|﹣' "$summary" >&2 || true
  status=1
fi
rm -f "$summary"
exit "$status"
