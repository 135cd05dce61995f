# Shared by the bash bench suites (source it): the processes a suite starts, stopped by their
# PIDs at exit; a launcher of test services (ferry-fakes, ferry-garage) that runs until its
# stdin closes, held open through a FIFO; free loopback ports; readiness polling.

pids=()
hold=""

# Stops the given PIDs (only processes this script started).
stop() {
  for pid in "$@"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
}

# Starts LAUNCHER ARGS... with its stdin on a FIFO under DIR, its stdout into OUT; it becomes the
# first of `pids`. Usage: start_held DIR OUT LAUNCHER ARGS...
start_held() {
  local dir=$1 out=$2
  shift 2
  mkfifo "$dir/hold"
  "$@" <"$dir/hold" >"$out" &
  pids+=($!)
  exec {hold}>"$dir/hold"
}

# At exit: closing the hold lets the launcher stop what it started (killing it first would orphan
# its services), then every other process is stopped.
stop_all() {
  if [[ -n $hold ]]; then
    exec {hold}>&- 2>/dev/null || true
    for _ in $(seq 1 100); do
      kill -0 "${pids[0]}" 2>/dev/null || break
      sleep 0.1
    done
  fi
  stop "${pids[@]}"
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Waits until URL answers at all (any status), 20 s at most.
wait_ready() {
  for _ in $(seq 1 400); do
    curl -s -o /dev/null "$1" && return 0
    sleep 0.05
  done
  echo "not ready: $1" >&2
  return 1
}
