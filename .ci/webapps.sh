#!/usr/bin/env bash
# The real UI component libraries the appium test set drives (issue 34): @ionic/core, Framework7,
# Onsen UI, Shoelace, Material Web, Bootstrap and UI5 Web Components at the exact versions of .ci/webapps/package.json, installed by `npm ci` from the committed
# package-lock.json into .ci/webapps/node_modules (gitignored, never committed). The apps' own HTML/JS
# are in .ci/webapps/apps/; tests/appium/test_webcomp_real.py serves the folder on loopback.
#
#   bash .ci/webapps.sh          # install (skipped when node_modules already matches the lock file)
#   bash .ci/webapps.sh --force  # reinstall
set -euo pipefail

DIR="$(cd "$(dirname "$0")" && pwd)/webapps"
say() { echo "webapps.sh: $*" >&2; }
command -v npm >/dev/null 2>&1 || { say "error: npm is missing (apt-get install -y npm)"; exit 1; }

installed="$DIR/node_modules/.package-lock.json"
if [ "${1:-}" != "--force" ] && [ -f "$installed" ] && [ "$installed" -nt "$DIR/package-lock.json" ]; then
  say "up to date ($DIR/node_modules)"
  exit 0
fi
say "npm ci in $DIR"
npm ci --prefix "$DIR" --no-audit --no-fund --loglevel=error
for pkg in @ionic/core framework7 onsenui @shoelace-style/shoelace @material/web bootstrap @ui5/webcomponents; do
  [ -f "$DIR/node_modules/$pkg/package.json" ] || { say "error: $pkg missing after npm ci"; exit 1; }
done
say "installed: $(cd "$DIR" && node -e 'const p=require("./package.json");console.log(Object.entries(p.dependencies).map(([k,v])=>k+"@"+v).join(" "))')"
