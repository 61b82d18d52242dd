#!/usr/bin/env bash
# A real Appium 3 server with the chromium driver and headless Chromium, for the `appium` test set
# (issue 6). Everything lives in the project-local .appium/ folder (gitignored), APPIUM_HOME included.
#
#   bash .ci/appium.sh install   # apt: chromium chromium-driver; npm ci: appium + appium-chromium-driver (.ci/appium/)
#   bash .ci/appium.sh start     # starts the server on 127.0.0.1, prints its URL (port in .appium/port)
#   bash .ci/appium.sh url       # prints the URL of the running server
#   bash .ci/appium.sh stop      # stops it by the PID in .appium/server.pid
#
# Idempotent: install skips what is there; start reuses a live server; stop on nothing is fine.
# Environment: APPIUM_PORT (default: a free port from 4723 up), APPIUM_START_TIMEOUT (s, default 60).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
HOME_DIR="$ROOT/.appium"
export APPIUM_HOME="$HOME_DIR"
APPIUM_BIN="$HOME_DIR/node_modules/.bin/appium"
PID_FILE="$HOME_DIR/server.pid"
PORT_FILE="$HOME_DIR/port"
LOG_FILE="$HOME_DIR/server.log"

say() { echo "appium.sh: $*" >&2; }
die() { say "error: $*"; exit 1; }
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

need_apt() {
  local missing=()
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  [ -x /usr/bin/chromedriver ] || missing+=(chromium-driver)
  command -v node >/dev/null 2>&1 || missing+=(nodejs)
  command -v npm >/dev/null 2>&1 || missing+=(npm)
  command -v curl >/dev/null 2>&1 || missing+=(curl)
  echo "${missing[@]:-}"
}

install_apt() {
  local missing
  missing="$(need_apt)"
  [ -z "$missing" ] && return 0
  [ "$(id -u)" -eq 0 ] || die "missing Debian packages ($missing) and not root: run 'apt-get install -y $missing' as root"
  say "apt-get install -y $missing"
  apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

driver_installed() {
  [ -x "$APPIUM_BIN" ] && "$APPIUM_BIN" driver list --installed --json 2>/dev/null | grep -q '"chromium"'
}

install_npm() {
  # Appium and its chromium driver come pinned from the project's own files (.ci/appium/package.json and its
  # package-lock.json), installed with `npm ci` into APPIUM_HOME; Appium finds the driver there by itself.
  mkdir -p "$HOME_DIR"
  if ! cmp -s "$ROOT/.ci/appium/package-lock.json" "$HOME_DIR/package-lock.json" || ! driver_installed; then
    say "npm ci (appium + appium-chromium-driver, pinned in .ci/appium/) into $HOME_DIR"
    cp "$ROOT/.ci/appium/package.json" "$ROOT/.ci/appium/package-lock.json" "$HOME_DIR/"
    npm ci --prefix "$HOME_DIR" --no-audit --no-fund --loglevel=error
  fi
  driver_installed || die "the chromium driver is not listed by 'appium driver list --installed'"
}

server_alive() {
  [ -f "$PID_FILE" ] && [ -f "$PORT_FILE" ] && kill -0 "$(cat "$PID_FILE")" 2>/dev/null \
    && curl -fsS "http://127.0.0.1:$(cat "$PORT_FILE")/status" >/dev/null 2>&1
}

port_free() {
  ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

pick_port() {
  if [ -n "${APPIUM_PORT:-}" ]; then
    port_free "$APPIUM_PORT" || die "APPIUM_PORT=$APPIUM_PORT is already in use"
    echo "$APPIUM_PORT"; return
  fi
  local port
  for port in $(seq 4723 4823); do
    if port_free "$port"; then echo "$port"; return; fi
  done
  die "no free port in 4723-4823"
}

start() {
  if server_alive; then
    echo "http://127.0.0.1:$(cat "$PORT_FILE")"; return 0
  fi
  [ -x "$APPIUM_BIN" ] || die "Appium is not installed: run 'bash .ci/appium.sh install' first"
  local port timeout waited=0
  port="$(pick_port)"
  timeout="${APPIUM_START_TIMEOUT:-60}"
  # setsid: the server gets its own process group, so stop can end it and its children by PID.
  setsid "$APPIUM_BIN" server --address 127.0.0.1 --port "$port" --log-no-colors --log-timestamp \
    >"$LOG_FILE" 2>&1 </dev/null &
  echo $! >"$PID_FILE"
  echo "$port" >"$PORT_FILE"
  until curl -fsS "http://127.0.0.1:$port/status" >/dev/null 2>&1; do
    if ! kill -0 "$(cat "$PID_FILE")" 2>/dev/null; then
      tail -n 30 "$LOG_FILE" >&2 || true
      rm -f "$PID_FILE"
      die "the Appium server exited during start-up (log above, full log in $LOG_FILE)"
    fi
    if [ "$waited" -ge $((timeout * 10)) ]; then
      tail -n 30 "$LOG_FILE" >&2 || true
      stop
      die "the Appium server did not answer /status within ${timeout}s"
    fi
    sleep 0.1; waited=$((waited + 1))
  done
  say "Appium ready on port $port in $((waited / 10)).$((waited % 10)) s (log: $LOG_FILE)"
  echo "http://127.0.0.1:$port"
}

stop() {
  end_process_group server "$PID_FILE"
}

case "${1:-}" in
  install) install_apt; install_npm; say "installed: $("$APPIUM_BIN" --version) with the chromium driver" ;;
  start) start ;;
  stop) stop ;;
  url) server_alive || die "no Appium server running (bash .ci/appium.sh start)"; echo "http://127.0.0.1:$(cat "$PORT_FILE")" ;;
  *) die "usage: $0 install|start|stop|url" ;;
esac
