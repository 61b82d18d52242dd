#!/usr/bin/env bash
# The Allure integration, end to end (issue 4): run example_suite (must pass) and example_failing
# (must fail, exactly as listed in .ci/allure_check.py) with --alluredir, build the Allure 3 report
# offline, check its data (guistate steps, before/after crops, timeline SVG, report.html), and take
# a headless-Chromium screenshot of the failing long-flow test's page.
#
#   bash .ci/allure.sh            # from the repo root, with the project venv active
#
# Allure 3 is pinned by .ci/allure/package-lock.json and installed with `npm ci` into the
# gitignored .allure/ folder (skipped when that install is already current). The two example
# folders run as two pytest runs into one results folder: each keeps its own rootdir and ini
# (example_suite/pytest.ini replays the LLM cassettes). Outputs (all gitignored):
#   allure-results/  raw results      allure-report/  the generated report
#   guistate-artifacts/allure/        JUnit XML, logs and allure-report.png (the screenshot)
# Environment: ALLURE_SCREENSHOT=0 skips the screenshot; CHROMIUM (default /usr/bin/chromium).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
# Allure 3.18 reads ALLURE_NO_ANALYTICS only in its allure2 plugin and only as "true".
export ALLURE_NO_ANALYTICS=true PYTHONDONTWRITEBYTECODE=1
LOCK_DIR="$ROOT/.ci/allure"
HOME_DIR="$ROOT/.allure"
ALLURE="$HOME_DIR/node_modules/.bin/allure"
RESULTS="$ROOT/allure-results"
REPORT="$ROOT/allure-report"
OUT="$ROOT/guistate-artifacts/allure"
CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"

say() { echo "allure.sh: $*" >&2; }
die() { say "error: $*"; exit 1; }
now() { date +%s.%N; }
since() { python -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$(now)"; }

# -- 1. install -----------------------------------------------------------------------------
install_allure() {
  command -v python >/dev/null || die "no python on PATH: activate the project venv first"
  python -c "import allure_pytest" 2>/dev/null || die "allure-pytest is not installed in $(command -v python)"
  if ! command -v npm >/dev/null 2>&1; then
    [ "$(id -u)" -eq 0 ] || die "npm is missing and this is not root: apt-get install -y nodejs npm"
    say "apt-get install -y nodejs npm"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
  fi
  if [ -x "$ALLURE" ] && cmp -s "$LOCK_DIR/package-lock.json" "$HOME_DIR/package-lock.json"; then
    return 0
  fi
  say "npm ci (Allure 3 as pinned in .ci/allure/package-lock.json) into $HOME_DIR"
  rm -rf "$HOME_DIR"
  mkdir -p "$HOME_DIR"
  cp "$LOCK_DIR/package.json" "$LOCK_DIR/package-lock.json" "$HOME_DIR/"
  (cd "$HOME_DIR" && npm ci --no-audit --no-fund --loglevel=error)
  [ -x "$ALLURE" ] || die "npm ci finished but $ALLURE is missing"
}

# -- 2. the two example runs ----------------------------------------------------------------
run_examples() {
  local rc_suite=0 rc_failing=0
  rm -rf "$RESULTS" "$REPORT" "$OUT"
  mkdir -p "$RESULTS" "$OUT"
  say "pytest example_suite (must pass)"
  pytest example_suite --guistate=full --alluredir="$RESULTS" -p no:cacheprovider -q \
    --junitxml="$OUT/example_suite.xml" >"$OUT/example_suite.log" 2>&1 || rc_suite=$?
  tail -n 1 "$OUT/example_suite.log" >&2
  say "pytest example_failing (every test must fail)"
  pytest example_failing --guistate=full --alluredir="$RESULTS" -p no:cacheprovider -q \
    --junitxml="$OUT/example_failing.xml" >"$OUT/example_failing.log" 2>&1 || rc_failing=$?
  tail -n 1 "$OUT/example_failing.log" >&2
  if [ "$rc_suite" -ne 0 ]; then
    tail -n 40 "$OUT/example_suite.log" >&2
    die "example_suite exited $rc_suite (expected 0; log: $OUT/example_suite.log)"
  fi
  if [ "$rc_failing" -ne 1 ]; then
    tail -n 40 "$OUT/example_failing.log" >&2
    die "example_failing exited $rc_failing (expected 1 = tests failed; log: $OUT/example_failing.log)"
  fi
  python .ci/allure_check.py junit "$OUT/example_suite.xml" "$OUT/example_failing.xml" \
    || die "the pass/fail split is not the expected one (see above)"
}

# -- 3. generate (offline: nothing here needs the network) ------------------------------------
generate() {
  # Where we may (root, unshare available), generate inside a network namespace with no interface
  # at all: proof on every run that the report is built offline.
  local offline=()
  if unshare -n true 2>/dev/null; then offline=(unshare -n --); GENERATED_OFFLINE="offline (unshare -n)"; fi
  "${offline[@]}" "$ALLURE" generate "$RESULTS" -o "$REPORT" --name "pytest-guistate examples" \
    >"$OUT/generate.log" 2>&1 || { cat "$OUT/generate.log" >&2; die "allure generate failed"; }
  # The awesome report embeds a Google Tag Manager <script> whatever the environment says; a report
  # of our tests does not phone home when opened, so drop it (and check that nothing external is left).
  python - "$REPORT/index.html" <<'PY'
import re, sys
path = sys.argv[1]
html = open(path, encoding="utf-8").read()
html = re.sub(r'<script async src="https://www\.googletagmanager\.com/[^"]*"></script>\s*', "", html)
html = re.sub(r"<script>\s*window\.dataLayer = .*?</script>\s*", "", html, flags=re.S)
if "googletagmanager" in html or "gtag(" in html:
    sys.exit(f"{path}: could not remove the analytics script")
open(path, "w", encoding="utf-8").write(html)
PY
}

# -- 5. a person's view: headless Chromium on the report, served on loopback -----------------
screenshot() {
  if [ "${ALLURE_SCREENSHOT:-1}" = "0" ]; then say "screenshot skipped (ALLURE_SCREENSHOT=0)"; return 0; fi
  if [ ! -x "$CHROMIUM" ]; then say "no $CHROMIUM: screenshot skipped (apt-get install chromium)"; return 0; fi
  local id port
  id="$(python - "$REPORT" <<'PY'
import json, pathlib, sys
for path in sorted(pathlib.Path(sys.argv[1], "data", "test-results").glob("*.json")):
    result = json.loads(path.read_text(encoding="utf-8"))
    if result["name"] == "test_long_flow_fails_at_a_late_step":
        print(result["id"])
PY
)"
  [ -n "$id" ] || die "no test result id for test_long_flow_fails_at_a_late_step"
  port="$(python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  python -m http.server "$port" --bind 127.0.0.1 --directory "$REPORT" >"$OUT/http.log" 2>&1 &
  SERVER_PID=$!
  PROFILE="$(mktemp -d)"
  for _ in $(seq 1 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  timeout 90 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$PROFILE" \
    --host-resolver-rules="MAP * ~NOTFOUND , EXCLUDE 127.0.0.1" --hide-scrollbars \
    --window-size=1400,2400 --virtual-time-budget=15000 --screenshot="$OUT/allure-report.png" \
    "http://127.0.0.1:$port/index.html#$id" >"$OUT/chromium.log" 2>&1 \
    || { tail -n 20 "$OUT/chromium.log" >&2; die "headless Chromium failed"; }
  cleanup
  [ -s "$OUT/allure-report.png" ] || die "Chromium wrote no screenshot"
  grep -q "GET /data/test-results/$id.json" "$OUT/http.log" \
    || die "the report page never loaded the failing test's data (see $OUT/http.log)"
}

SERVER_PID="" PROFILE="" GENERATED_OFFLINE="with the network namespace as it is"
cleanup() {
  # Only what this script started: the loopback file server (by its PID) and Chromium's profile.
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  SERVER_PID=""
  if [ -n "$PROFILE" ]; then rm -rf "$PROFILE"; fi
  PROFILE=""
}
trap cleanup EXIT

start="$(now)"
install_allure
say "Allure $("$ALLURE" --version) (install/check $(since "$start") s)"
t="$(now)"; run_examples; tests_s="$(since "$t")"
t="$(now)"; generate; gen_s="$(since "$t")"
report_summary="$(python .ci/allure_check.py report "$REPORT")" || die "the Allure report is missing guistate content (see above)"
t="$(now)"; screenshot; shot_s="$(since "$t")"

echo "== Allure 3 report check: OK"
python .ci/allure_check.py junit "$OUT/example_suite.xml" "$OUT/example_failing.xml"
echo "$report_summary"
echo "  tests ${tests_s} s, allure generate ${gen_s} s ($GENERATED_OFFLINE), screenshot ${shot_s} s, total $(since "$start") s"
echo "  report: $REPORT/index.html  screenshot: $OUT/allure-report.png"
