#!/usr/bin/env bash
# Runs the whole test suite: typecheck, then every test file under test/ with node's test runner.
# Node 20's --test takes no globs, so the files are listed here. Pass file paths to run a subset.
# test/realtime/ holds the real-time line tests (minutes each): `npm run test:interop:realtime`.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$#" -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(find test -path test/realtime -prune -o -name '*.test.ts' -print | sort)
  # The fax engine addon and the SpanDSP test receiver (about 2 s; see scripts/build-native.sh).
  bash scripts/build-native.sh >/dev/null
  npx tsc -p tsconfig.json --noEmit
fi
exec node --import tsx --test --test-concurrency=1 --test-reporter=spec "${files[@]}"
