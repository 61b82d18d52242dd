#!/usr/bin/env bash
# A pip user's set-up, from the docs alone (issue 15): a clean venv, `pip install .` (not -e), then docs/appium.md's
# "Set up a real Appium server (pip user)" block run as written (between its <!-- pip-user-setup --> markers), in a
# scratch folder holding nothing but a user's own test (.ci/pip_user/test_my_app.py), against a real Appium 3 server.
#
#   bash .ci/pip_user.sh          # from anywhere; needs python3, and apt/npm as docs/appium.md says
#
# Isolation: the venv, $HOME (so APPIUM_HOME=$HOME/appium is fresh) and the user's folder live in a temp dir that is
# removed at exit; only the pip and npm download caches are shared with the machine, which keeps the time bounded
# (no re-download of wheels and tarballs). As root without sudo, `sudo` runs the command as is.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/guistate-pip-user.XXXXXX")"
say() { echo "pip_user.sh: $*" >&2; }
die() { say "error: $*"; exit 1; }
now() { date +%s; }
started="$(now)"

cleanup() {
  # stop only the server this run started (its PID file is under the scratch $HOME), then remove the scratch dir
  if [ -x "$WORK/venv/bin/guistate" ] && [ -d "$WORK/home/appium" ]; then
    APPIUM_HOME="$WORK/home/appium" "$WORK/venv/bin/guistate" appium stop >/dev/null 2>&1 || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

export PIP_CACHE_DIR="${PIP_CACHE_DIR:-$HOME/.cache/pip}" npm_config_cache="${npm_config_cache:-$HOME/.npm}"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1

say "clean venv + pip install . (not editable)"
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install -q "$ROOT" >"$WORK/pip.log" 2>&1 || { tail -n 30 "$WORK/pip.log" >&2; die "pip install . failed"; }
installed="$(cd "$WORK" && "$WORK/venv/bin/python" -c 'import pytest_guistate; print(pytest_guistate.__file__)')"
case "$installed" in "$WORK/venv/"*) say "installed: $installed" ;; *) die "pytest_guistate comes from $installed, not the venv" ;; esac

say "the pip-user block of docs/appium.md"
python3 - "$ROOT/docs/appium.md" "$WORK/setup.sh" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
match = re.search(r"<!-- pip-user-setup -->\s*```bash\n(.*?)```\s*<!-- /pip-user-setup -->", text, re.S)
if not match:
    sys.exit("docs/appium.md has no ```bash block between <!-- pip-user-setup --> and <!-- /pip-user-setup -->")
open(sys.argv[2], "w", encoding="utf-8").write(match.group(1))
PY
sed 's/^/  | /' "$WORK/setup.sh" >&2

mkdir -p "$WORK/home" "$WORK/user" "$WORK/bin"
cp "$ROOT/.ci/pip_user/test_my_app.py" "$WORK/user/"
if ! command -v sudo >/dev/null 2>&1; then
  [ "$(id -u)" -eq 0 ] || die "no sudo and not root: the apt line of docs/appium.md cannot run"
  printf '#!/bin/sh\nexec "$@"\n' >"$WORK/bin/sudo" && chmod +x "$WORK/bin/sudo"
fi
(
  cd "$WORK/user"
  export HOME="$WORK/home" PATH="$WORK/bin:$WORK/venv/bin:$PATH" VIRTUAL_ENV="$WORK/venv"
  export DEBIAN_FRONTEND=noninteractive
  bash -euo pipefail -x "$WORK/setup.sh"
) || die "the pip-user block of docs/appium.md failed (commands above)"
say "OK: docs-only set-up and a user's test against a real Appium server in $(( $(now) - started )) s"
