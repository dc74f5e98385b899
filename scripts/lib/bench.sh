# Shared pieces of the load benchmarks (scripts/bench-*): sourced, never run.
# The sourcing script sets BENCH_TAG (the log prefix) and TMP (its temp dir) first, and appends
# every background process it starts to PIDS so `bench_cleanup` stops it.

log() { printf '[%s] %s\n' "${BENCH_TAG:-bench}" "$*" >&2; }
die() { log "error: $*"; exit 1; }

need_tools() {  # tool... -> dies naming the first one missing
  local tool
  for tool in "$@"; do command -v "$tool" >/dev/null 2>&1 || die "$tool not found (run scripts/bootstrap)"; done
}

# "10s" / "1m" / "10" -> seconds, to bound each wrk run with `timeout`.
to_seconds() {
  case "$1" in
    *ms) echo 1 ;;
    *s) echo "${1%s}" ;;
    *m) echo $(( ${1%m} * 60 )) ;;
    *h) echo $(( ${1%h} * 3600 )) ;;
    *) echo "$1" ;;
  esac
}

# latency "1.23ms" / "456.00us" / "1.02s" / "2.00m" -> milliseconds
to_ms() {
  awk -v v="$1" 'BEGIN {
    n = v + 0
    if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n = n; else if (v ~ /m$/) n *= 60000; else if (v ~ /s$/) n *= 1000
    printf "%.3f", n }'
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

http_code() {  # url [curl args...] -> status code ("000" when nothing answers)
  local url="$1"; shift
  curl -sk -o /dev/null --max-time 3 -w '%{http_code}' "$@" "$url" 2>/dev/null || true
}

wait_for_200() {  # url pid timeout_s -> 0 once url answers 200; 1 on timeout or process exit
  local url="$1" pid="$2" deadline=$(( SECONDS + $3 ))
  while [ "$SECONDS" -lt "$deadline" ]; do
    kill -0 "$pid" 2>/dev/null || return 1
    [ "$(http_code "$url")" = 200 ] && return 0
    sleep 0.2
  done
  return 1
}

bench_cleanup() {  # the EXIT trap: stops wrk and every process in PIDS, removes TMP
  local rc=$?
  trap - EXIT INT TERM
  [ -z "${WRK_PID:-}" ] || kill -TERM "$WRK_PID" 2>/dev/null || true
  local pid
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ "${BENCH_KEEP_TMP:-0}" = 1 ]; then log "kept $TMP"; else rm -rf "$TMP"; fi
  exit "$rc"
}

bench_traps() {
  trap bench_cleanup EXIT
  trap 'log "interrupted"; exit 130' INT
  trap 'log "terminated"; exit 143' TERM
}

# --- nginx -------------------------------------------------------------------------------
# Each instance gets its own prefix, pid file, logs and temp paths inside $TMP; -e keeps nginx
# away from the packaged /var/log/nginx even before the config is read.
nginx_common() {  # prefix
  cat <<EOF
daemon off;
master_process on;
pid $1/nginx.pid;
error_log $1/error.log warn;
events { worker_connections 4096; }
EOF
}

nginx_http_common() {  # prefix
  cat <<EOF
    access_log off;
    keepalive_timeout 65;
    keepalive_requests 1000000;
    client_body_temp_path $1/client_body;
    proxy_temp_path $1/proxy;
    fastcgi_temp_path $1/fastcgi;
    uwsgi_temp_path $1/uwsgi;
    scgi_temp_path $1/scgi;
EOF
}

start_nginx() {  # name (config at $TMP/name/nginx.conf) -> pid in NGINX_STARTED_PID
  local name="$1" dir="$TMP/$1"
  nginx -t -q -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" 2>"$dir/configtest.log" \
    || { cat "$dir/configtest.log" >&2; die "nginx config for $name rejected"; }
  nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" >"$dir/stdout.log" 2>&1 &
  NGINX_STARTED_PID=$!
  PIDS+=("$NGINX_STARTED_PID")
}

# --- wrk output ----------------------------------------------------------------------------
parse_rps() { awk '/^Requests\/sec:/ { print $2 }' "$1"; }
parse_requests() { awk '/requests in/ { print $1; exit }' "$1"; }
parse_pct() { awk -v p="$2%" '$1 == p { print $2; exit }' "$1"; }
parse_non2xx() { awk '/Non-2xx or 3xx responses:/ { print $NF }' "$1"; }
parse_errors() { awk '/Socket errors:/ { sub(/^ *Socket errors: */, ""); print }' "$1"; }

# --- CPU accounting ------------------------------------------------------------------------
# CPU time (user + system, clock ticks) of a process and all its descendants: nginx's workers
# are children of the master, so the master's pid stands for the whole server.
cpu_ticks() {  # pid -> ticks
  local pid="$1" total=0 child stat
  stat="$(cat "/proc/$pid/stat" 2>/dev/null || true)"
  if [ -n "$stat" ]; then
    # fields after the parenthesised command name: utime is the 12th, stime the 13th
    total=$(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' <<<"$stat")
  fi
  for child in $(cat "/proc/$pid/task/"*/children 2>/dev/null); do
    total=$(( total + $(cpu_ticks "$child") ))
  done
  echo "$total"
}

cpu_us_per_request() {  # ticks-before ticks-after requests -> microseconds of CPU per request
  awk -v a="$1" -v b="$2" -v n="$3" -v hz="$(getconf CLK_TCK)" \
    'BEGIN { if (n > 0) printf "%.1f", (b - a) / hz * 1e6 / n; else print "-" }'
}
