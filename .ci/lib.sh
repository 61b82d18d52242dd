# Shared by the .ci scripts that start servers (sourced; needs their `say`).
# end_process_group NAME PID_FILE: SIGTERM the process group started with setsid, SIGKILL after 5 s, remove the file.
end_process_group() {
  local name="$1" pid_file="$2" pid
  [ -f "$pid_file" ] || return 0
  pid="$(cat "$pid_file")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      say "$name ($pid) ignored SIGTERM for 5 s: SIGKILL"
      kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$pid_file"
}
