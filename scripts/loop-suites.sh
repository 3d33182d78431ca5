#!/usr/bin/env bash
# Runs a set of jest suites N times, each time in a new random file order (seeded, printed), and
# stops at the first failing run. Default: the Redis-backed suites together with the durable,
# streaming and security suites around them — the loop behind the "30 runs, no failure" figure
# in docs/spine-tests.md.
#   scripts/loop-suites.sh [runs] [jest path patterns...]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-30}"; shift || true
paths=("$@")
[ ${#paths[@]} -eq 0 ] && paths=(test/durable test/security test/streaming)
export REQUIRE_REDIS=1 REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
# One scenario in steps, each building on the last (nest new -> nest add -> nest g -> build ->
# start): its tests cannot run in a random order, so it is left out of the loop.
scenarios=('<rootDir>/test/schematics/nest-cli.e2e-spec.ts')
for i in $(seq 1 "$runs"); do
  seed=$((RANDOM * 32768 + RANDOM))
  echo "== run $i/$runs seed $seed"
  if ! JEST_SHUFFLE_SEED=$seed node --experimental-vm-modules node_modules/jest/bin/jest.js \
      --maxWorkers=2 --randomize --seed="$seed" --testSequencer ./test/support/shuffled-sequencer.mjs \
      --testPathIgnorePatterns '/node_modules/' '/dist/' "${scenarios[@]}" \
      --silent "${paths[@]}" >"/tmp/loop-suites-$i.log" 2>&1; then
    echo "run $i FAILED (seed $seed): /tmp/loop-suites-$i.log"; tail -40 "/tmp/loop-suites-$i.log"; exit 1
  fi
  grep -E '^Tests:' "/tmp/loop-suites-$i.log" || true
done
echo "all $runs runs passed"
