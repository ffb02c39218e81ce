#!/usr/bin/env bash
# Every test of the VS Code extension, from a fresh clone: installs the npm dependencies, then
# typecheck (strict), lint, unit tests, integration tests against the real language server (and the
# webviews in headless Chromium), and packaging into threadradar-<version>.vsix.
#
#   THREADRADAR_BIN=/path/to/threadradar bash editors/vscode/scripts/test.sh
#
# THREADRADAR_BIN defaults to the repository's target/release/threadradar, then `threadradar` on
# PATH. Needs Node.js 20+, python3, Debian's chromium (/usr/bin/chromium, or CHROMIUM=…) and the
# permission to record a Python program (root or ptrace). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
here=$PWD
repo=$(cd ../.. && pwd)

log() { printf '\n== vscode: %s\n' "$*"; }

if [ -z "${THREADRADAR_BIN:-}" ]; then
  if [ -x "${CARGO_TARGET_DIR:-$repo/target}/release/threadradar" ]; then
    THREADRADAR_BIN="${CARGO_TARGET_DIR:-$repo/target}/release/threadradar"
  elif command -v threadradar >/dev/null; then
    THREADRADAR_BIN=$(command -v threadradar)
  else
    echo "vscode: no threadradar binary: build it (cargo build --release) or set THREADRADAR_BIN" >&2
    exit 2
  fi
fi
export THREADRADAR_BIN
[ -x "$THREADRADAR_BIN" ] || { echo "vscode: THREADRADAR_BIN=$THREADRADAR_BIN is not an executable file" >&2; exit 2; }

if ! command -v npm >/dev/null; then
  log "installing nodejs and npm"
  apt-get update -qq && apt-get install -y -qq nodejs npm
fi
if [ -z "${CHROMIUM:-}" ] && [ ! -x /usr/bin/chromium ]; then
  log "installing Debian's chromium"
  apt-get update -qq && apt-get install -y -qq chromium
fi

log "npm ci"
npm ci --no-audit --no-fund --loglevel=error

log "typecheck (tsc --noEmit, strict)"
npm run --silent copy-web
npm run --silent typecheck

log "lint (eslint, typescript-eslint strict type-checked)"
npm run --silent lint

mkdir -p test-output
rm -f test-output/*.tap
# node's test runner (TypeScript through tsx): a readable report on stdout, TAP for the counts.
run_tests() {
  local name=$1 timeout=$2
  shift 2
  node --import tsx --test --test-concurrency=1 --test-timeout="$timeout" \
    --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="test-output/$name.tap" "$@"
}

log "unit tests (node --test)"
run_tests unit 60000 test/unit/*.test.ts

log "integration tests: the real server ($THREADRADAR_BIN), activation, webviews in headless Chromium"
run_tests integration 180000 test/integration/*.test.ts

log "package (npm run package)"
rm -f threadradar-*.vsix
npm run --silent package
version=$(node -p 'require("./package.json").version')
vsix="threadradar-$version.vsix"
[ -f "$vsix" ] || { echo "vscode: $vsix was not produced" >&2; exit 1; }
listing=$(unzip -l "$vsix")
for f in extension/package.json extension/out/extension.js extension/media/web/index.html extension/media/web/app.js \
         extension/media/web/transport.js extension/media/web/style.css extension/media/icon.png extension/media/threadradar.svg \
         extension/images/overview.png extension/readme.md extension/LICENSE.txt; do
  grep -q " $f\$" <<<"$listing" || { echo "vscode: $vsix lacks $f" >&2; exit 1; }
done
if grep -qE ' extension/(node_modules|src|test|scripts)/' <<<"$listing"; then
  echo "vscode: $vsix holds sources, tests or node_modules:" >&2
  grep -E ' extension/(node_modules|src|test|scripts)/' <<<"$listing" >&2
  exit 1
fi
# The bundled web app is the repository's.
for f in index.html app.js transport.js style.css; do
  cmp -s "$repo/web/$f" <(unzip -p "$vsix" "extension/media/web/$f") || { echo "vscode: media/web/$f in $vsix differs from web/$f" >&2; exit 1; }
done
echo "vscode: $here/$vsix ($(wc -c <"$vsix") bytes) holds the bundle and the web app"

# One closing line for the project's test command.
node -e '
const fs = require("fs");
let passed = 0, failed = 0, skipped = 0;
for (const f of ["test-output/unit.tap", "test-output/integration.tap"]) {
  const tap = fs.readFileSync(f, "utf8");
  const count = (k) => Number((tap.match(new RegExp("^# " + k + " (\\d+)$", "m")) || [0, 0])[1]);
  passed += count("pass"); failed += count("fail") + count("cancelled"); skipped += count("skipped") + count("todo");
}
console.log(`vscode: ${passed} passed, ${failed} failed` + (skipped ? `, ${skipped} skipped` : ""));
process.exit(failed || passed === 0 ? 1 : 0);
'
