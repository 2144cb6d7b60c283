#!/usr/bin/env bash
# The scale-out end-to-end test (make scaleout): a real redis-server, three
# replicas (redis/scaleout/replica: mrtr.WithShare over Redis, a key ring
# file reloaded without restart, the legacy engine) and nginx balancing
# them round robin, with no affinity: the "round robin with Redis" recipe
# of docs/deployment.md.
#
#   1. installs redis-server and nginx from Debian packages when missing
#      (apt-get update first; needs root; installed ones are used as they are);
#   2. builds the replica, the load generator and the tests;
#   3. starts redis-server, three replicas (A, B, C) with one key ring file,
#      made for this run, and nginx on free loopback ports;
#   4. runs, in order, each phase asserting what it shows:
#      shared    2026-07-28 multi-round calls whose rounds land on different
#                replicas; a list change on one replica reaching listeners
#                on the other two; a single-use state refused on another
#                replica; a forged answer and deletion PUBLISHed on Redis
#                dropped while the real answer crosses replicas; the key
#                ring rotated mid-run with calls running and none failing;
#                a task (Tasks extension) created on one replica, polled on
#                a second, answered on a third, and another cancelled
#                through nginx;
#      legacy    a three-round call of the go-sdk client pinned to
#                2025-11-25 and of the TypeScript SDK v1 client, their
#                answers landing on other replicas;
#      redis-down  redis-server killed: single-use tools refuse, everything
#                else works, list changes stay on their replica;
#      redis-back  redis-server started again: all of it comes back;
#      kill      one replica killed with SIGKILL mid-run: what a 2026-07-28
#                client, a 2025-11-25 client and a listen stream see, a
#                task running on it taken over by another replica, and
#                every later call succeeds on the other two;
#      kill-ts1  a fourth replica started and nginx reloaded; then the one
#                running a bridged call of the TypeScript SDK v1 client
#                killed while the client answers: the call fails, the
#                session goes on;
#      kill-go-sdk  the same under the go-sdk client (at 2025-11-25): the
#                session goes on, on the last replica.
#
# `run.sh bench` starts the same processes and measures throughput instead
# (see docs/deployment.md, "Figures").
#
# `run.sh conformance` starts three conformance fixture replicas instead
# (redis/internal/cmd/redisfixture: internal/fixture on the shared Redis,
# one key ring) behind the same round-robin nginx, and runs the official
# suite through nginx with conformance/run.sh (CONFORMANCE_URL): both
# requirement sets and the nine tasks-* scenarios.
#
# Everything it starts is stopped on exit. Exits non-zero on any failure.
#
# Environment:
#   SCALEOUT_KEEP=1     keep the temporary directory (logs, nginx.conf)
#   SCALEOUT_VERBOSE=1  print the whole output of every phase
#   SCALEOUT_BENCH_SECONDS  seconds per bench measurement (default 5)
#   SCALEOUT_ONLY="shared kill"  run only these phases (for debugging; the
#                       run then ends with exit status 3, as incomplete)
set -euo pipefail

start_time=$SECONDS
mode="${1:-test}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/mrtrkit-scaleout.XXXXXX")"
declare -A pid addr
nginx_pid=""
policy_made=""
results=()

log() { printf '[scaleout] %s\n' "$*" >&2; }
die() {
	log "FAIL: $*"
	exit 1
}

cleanup() {
	local rc=$?
	local p
	for p in "${pid[@]}" $nginx_pid; do
		[[ -n "$p" ]] && kill -TERM "$p" 2>/dev/null || true
	done
	# Replicas are disowned (not waitable): poll until they are gone.
	local deadline=$((SECONDS + 5))
	for p in "${pid[@]}" $nginx_pid; do
		while [[ -n "$p" ]] && kill -0 "$p" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.05; done
		[[ -n "$p" ]] && kill -KILL "$p" 2>/dev/null || true
		[[ -n "$p" ]] && wait "$p" 2>/dev/null || true
	done
	[[ -z "$policy_made" ]] || rm -f "$policy_made"
	if ((rc != 0)); then
		for f in "$work"/replica-*.log "$work"/redis.log "$work"/nginx/error.log; do
			[[ -s "$f" ]] || continue
			log "last lines of $(basename "$f"):"
			tail -n 12 "$f" >&2 || true
		done
	fi
	if [[ "${SCALEOUT_KEEP:-0}" == 1 ]]; then log "kept $work"; else rm -rf "$work"; fi
	for r in ${results[@]+"${results[@]}"}; do echo "$r"; done
	log "elapsed: $((SECONDS - start_time)) s"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

command -v go >/dev/null || die "go is not on PATH"

# 1. Debian packages, when missing.
find_bin() { command -v "$1" 2>/dev/null || { [[ -x "/usr/sbin/$1" ]] && echo "/usr/sbin/$1"; } || { [[ -x "/usr/bin/$1" ]] && echo "/usr/bin/$1"; } || true; }
redis_bin="$(find_bin redis-server)"
nginx_bin="$(find_bin nginx)"
missing=()
[[ -n "$redis_bin" ]] || missing+=(redis-server)
[[ -n "$nginx_bin" ]] || missing+=(nginx)
if ((${#missing[@]})); then
	[[ "$(id -u)" == 0 ]] || die "${missing[*]} not installed, and installing needs root"
	command -v apt-get >/dev/null || die "${missing[*]} not installed, and there is no apt-get"
	log "installing ${missing[*]} from Debian packages"
	# The packages must not start system services as they install.
	if [[ ! -e /usr/sbin/policy-rc.d ]]; then
		policy_made=/usr/sbin/policy-rc.d
		printf '#!/bin/sh\nexit 101\n' >"$policy_made"
		chmod 755 "$policy_made"
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >"$work/apt.log" 2>&1 || { cat "$work/apt.log" >&2; die "apt-get update failed"; }
	apt-get install -y -q --no-install-recommends "${missing[@]}" >>"$work/apt.log" 2>&1 || { cat "$work/apt.log" >&2; die "apt-get install failed"; }
	[[ -z "$policy_made" ]] || { rm -f "$policy_made"; policy_made=""; }
	redis_bin="$(find_bin redis-server)"
	nginx_bin="$(find_bin nginx)"
	[[ -n "$redis_bin" && -n "$nginx_bin" ]] || die "still missing after apt-get install: ${missing[*]}"
fi
log "using $("$redis_bin" --version | cut -d' ' -f1-3), $("$nginx_bin" -v 2>&1)"

# 2. Build.
t0=$SECONDS
(cd "$here" && go vet -tags scaleout ./...) || die "go vet failed"
(cd "$here" && go build -o "$work/replica" ./replica && go build -o "$work/load" ./load) || die "build failed"
(cd "$here" && go test -c -tags scaleout -o "$work/e2e.test" ./e2e) || die "building the e2e test failed"
if [[ "$mode" == test ]]; then
	(cd "$root/conformance/interop/go" && go vet -tags scaleout ./scaleout && go test -c -tags scaleout -o "$work/gosdk.test" ./scaleout) || die "building the go-sdk scale-out test failed"
fi
log "built in $((SECONDS - t0)) s"

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() {
	local p
	while :; do
		p=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
		port_open "$p" || { echo "$p"; return; }
	done
}

# 3a. redis-server with the settings of docs/deployment.md: no
# persistence, noeviction, and the ACL user the guide gives the replicas
# (the default user off), its password made for this run.
redis_port=""
redis_pass="$(head -c 24 /dev/urandom | base64 -w0 | tr -dc 'A-Za-z0-9')"
start_redis() {
	local port="$1"
	"$redis_bin" --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
		--loglevel warning --maxmemory 64mb --maxmemory-policy noeviction \
		--user default off \
		--user mrtrkit on ">$redis_pass" resetkeys '~mrtrkit/*' resetchannels '&mrtrkit/*' \
		-@all +set +get +publish +subscribe +unsubscribe +ping +hello +auth >>"$work/redis.log" 2>&1 &
	pid[redis]=$!
	local deadline=$((SECONDS + 10))
	until [[ "$( (exec 3<>"/dev/tcp/127.0.0.1/$port" && printf 'AUTH mrtrkit %s\r\nPING\r\n' "$redis_pass" >&3 && timeout 1 head -c 12 <&3) 2>/dev/null || true)" == *+PONG* ]]; do
		kill -0 "${pid[redis]}" 2>/dev/null || return 1
		((SECONDS < deadline)) || return 1
		sleep 0.05
	done
}
for attempt in 1 2 3 4 5; do
	redis_port="$(free_port)"
	start_redis "$redis_port" && break
	kill "${pid[redis]}" 2>/dev/null || true
	wait "${pid[redis]}" 2>/dev/null || true
	redis_port=""
done
[[ -n "$redis_port" ]] || die "redis-server did not start"
log "redis-server at 127.0.0.1:$redis_port (pid ${pid[redis]})"

# 3b. The key ring file, as a mounted secret would hold it: made for this
# run, readable by the replicas only.
keyfile="$work/state-keys"
umask 077
echo "k1:$(head -c 32 /dev/urandom | base64 -w0)" >"$keyfile"
umask 022

# 3c'. The conformance mode: fixture replicas, nginx, the official suite.
if [[ "$mode" == conformance ]]; then
	(cd "$here/.." && go build -o "$work/redisfixture" ./internal/cmd/redisfixture) || die "building redisfixture failed"
	state_keys="k1:$(head -c 32 /dev/urandom | base64 -w0)"
	for name in A B C; do
		: >"$work/replica-$name.log"
		MRTRKIT_STATE_KEYS="$state_keys" "$work/redisfixture" -redis "redis://mrtrkit:$redis_pass@127.0.0.1:$redis_port/0" -addr 127.0.0.1:0 -path /mcp 2>"$work/replica-$name.log" &
		pid[$name]=$!
		deadline=$((SECONDS + 15))
		while :; do
			url="$(sed -n 's/.*msg="conformance server listening" url=http:\/\/\([^ /]*\)\/mcp.*/\1/p' "$work/replica-$name.log" | head -n 1 || true)"
			[[ -n "$url" ]] && break
			kill -0 "${pid[$name]}" 2>/dev/null || die "fixture replica $name exited during start-up"
			((SECONDS < deadline)) || die "fixture replica $name did not start within 15 s"
			sleep 0.05
		done
		addr[$name]="$url"
	done
	log "fixture replicas: A ${addr[A]}, B ${addr[B]}, C ${addr[C]}"
fi

# 3c. Replicas.
start_replica() {
	local name="$1"
	: >"$work/replica-$name.log"
	"$work/replica" -name "$name" -redis "redis://mrtrkit:$redis_pass@127.0.0.1:$redis_port/0" -keys "$keyfile" -addr 127.0.0.1:0 -leg-timeout 5s 2>"$work/replica-$name.log" &
	pid[$name]=$!
	# The kill phases kill replicas on purpose: no job notice for that.
	disown "${pid[$name]}"
	local deadline=$((SECONDS + 15)) url
	while :; do
		url="$(sed -n 's/.*msg="replica listening" replica=[A-Z] url=http:\/\/\([^ /]*\)\/mcp.*/\1/p' "$work/replica-$name.log" | head -n 1 || true)"
		[[ -n "$url" ]] && break
		kill -0 "${pid[$name]}" 2>/dev/null || die "replica $name exited during start-up"
		((SECONDS < deadline)) || die "replica $name did not start within 15 s"
		sleep 0.05
	done
	addr[$name]="$url"
}
replicas=(A B C)
if [[ "$mode" != conformance ]]; then
	for name in "${replicas[@]}"; do start_replica "$name"; done
	log "replicas: A ${addr[A]}, B ${addr[B]}, C ${addr[C]}"
fi

# 3d. nginx, round robin (no hash, no affinity).
mkdir -p "$work/nginx"
chmod 755 "$work" "$work/nginx"
ready_token="ready-$(head -c 12 /dev/urandom | base64 -w0 | tr -dc 'A-Za-z0-9')"
nginx_conf() { # PORT NAME...
	local port="$1"
	shift
	cat <<EOF
# Written by redis/scaleout/run.sh; the recipe is docs/deployment.md.
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log notice;
events { worker_connections 1024; }
http {
    client_body_temp_path $work/nginx/client_body;
    proxy_temp_path       $work/nginx/proxy;
    fastcgi_temp_path     $work/nginx/fastcgi;
    uwsgi_temp_path       $work/nginx/uwsgi;
    scgi_temp_path        $work/nginx/scgi;
    access_log off;

    upstream mcp {
$(for n in "$@"; do echo "        server ${addr[$n]} max_fails=1 fail_timeout=10s;"; done)
        keepalive 64;
    }

    server {
        listen 127.0.0.1:$port;
        location = /scaleout-ready { return 200 "$ready_token"; }
        location = /mcp {
            proxy_pass http://mcp;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host \$http_host;
            proxy_buffering off;
            proxy_cache off;
            proxy_read_timeout 300s;
            client_max_body_size 4m;
            proxy_next_upstream error timeout;
            # For the test only: which upstream served the request.
            add_header X-Upstream \$upstream_addr always;
        }
    }
}
EOF
}
nginx_ready() {
	local reply
	reply="$( (exec 3<>"/dev/tcp/127.0.0.1/$1" && printf 'GET /scaleout-ready HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3 && timeout 2 cat <&3) 2>/dev/null || true)"
	[[ "$reply" == *"$ready_token"* ]]
}
nginx_port=""
start_nginx() { # NAME...
	if [[ -n "$nginx_pid" ]]; then
		kill -TERM "$nginx_pid" 2>/dev/null || true
		wait "$nginx_pid" 2>/dev/null || true
		nginx_pid=""
	fi
	local attempt port deadline
	for attempt in 1 2 3 4 5 6; do
		port="$(free_port)"
		nginx_conf "$port" "$@" >"$work/nginx/nginx.conf"
		"$nginx_bin" -p "$work/nginx" -e "$work/nginx/error.log" -c "$work/nginx/nginx.conf" -g 'daemon off;' 2>>"$work/nginx/stderr.log" &
		nginx_pid=$!
		deadline=$((SECONDS + 10))
		while ! nginx_ready "$port"; do
			if ! kill -0 "$nginx_pid" 2>/dev/null || ((SECONDS >= deadline)); then
				kill -TERM "$nginx_pid" 2>/dev/null || true
				wait "$nginx_pid" 2>/dev/null || true
				nginx_pid=""
				break
			fi
			sleep 0.05
		done
		if [[ -n "$nginx_pid" ]]; then
			nginx_port="$port"
			return 0
		fi
	done
	die "nginx did not start"
}
# reload_nginx NAME... points the running nginx, on its port, at these
# replicas (nginx -s reload), and waits until its new workers answer.
reload_nginx() {
	ready_token="ready-$(head -c 12 /dev/urandom | base64 -w0 | tr -dc 'A-Za-z0-9')"
	nginx_conf "$nginx_port" "$@" >"$work/nginx/nginx.conf"
	"$nginx_bin" -p "$work/nginx" -e "$work/nginx/error.log" -c "$work/nginx/nginx.conf" -s reload 2>>"$work/nginx/stderr.log" || die "nginx -s reload failed"
	local deadline=$((SECONDS + 10))
	until nginx_ready "$nginx_port"; do
		((SECONDS < deadline)) || die "nginx did not take its new configuration within 10 s"
		sleep 0.05
	done
}
start_nginx "${replicas[@]}"
log "nginx at 127.0.0.1:$nginx_port, round robin over A, B, C"

if [[ "$mode" == conformance ]]; then
	# localhost, as the suite's dns-rebinding scenario expects.
	CONFORMANCE_URL="http://localhost:$nginx_port/mcp" bash "$root/conformance/run.sh" || die "the official suite through nginx failed"
	log "elapsed: $((SECONDS - start_time)) s"
	exit 0
fi

export SCALEOUT_PROXY_URL="http://127.0.0.1:$nginx_port/mcp"
export SCALEOUT_REPLICAS="A=${addr[A]},B=${addr[B]},C=${addr[C]}"
export SCALEOUT_PIDS="A=${pid[A]},B=${pid[B]},C=${pid[C]}"
export SCALEOUT_KEY_FILE="$keyfile"
export SCALEOUT_LOG_DIR="$work"
# The replicas' own Redis credentials, for the forged-message check.
export SCALEOUT_REDIS_URL="redis://mrtrkit:$redis_pass@127.0.0.1:$redis_port/0"

# phase NAME CMD... runs one phase, printing its outcome.
not_run=()
phase() {
	local name="$1" t0=$SECONDS rc
	shift
	if [[ -n "${SCALEOUT_ONLY:-}" && " $SCALEOUT_ONLY " != *" $name "* ]]; then
		not_run+=("$name")
		results+=("NOT RUN $name")
		return 0
	fi
	set +e
	SCALEOUT_PHASE="$name" "$@" >"$work/phase-$name.out" 2>&1
	rc=$?
	set -e
	if ((rc != 0)) || [[ "${SCALEOUT_VERBOSE:-0}" == 1 ]]; then
		cat "$work/phase-$name.out" >&2
	else
		grep -E '^(--- |ok |# (pass|fail)|✔|✖)' "$work/phase-$name.out" >&2 || true
	fi
	if ((rc != 0)); then
		results+=("FAIL $name")
		die "phase $name failed (exit $rc)"
	fi
	results+=("PASS $name ($((SECONDS - t0)) s)")
	log "phase $name: ok in $((SECONDS - t0)) s"
}

if [[ "$mode" == bench ]]; then
	secs="${SCALEOUT_BENCH_SECONDS:-5}"
	log "bench: one replica behind nginx"
	start_nginx A
	"$work/load" -url "http://127.0.0.1:$nginx_port/mcp" -seconds "$secs" -label "1 replica" | tee "$work/bench-1.txt"
	log "bench: three replicas behind nginx"
	start_nginx A B C
	"$work/load" -url "http://127.0.0.1:$nginx_port/mcp" -seconds "$secs" -label "3 replicas" | tee "$work/bench-3.txt"
	log "bench: Redis paths, replicas called directly"
	"$work/load" -redis-paths -replicas "$SCALEOUT_REPLICAS" -seconds "$secs" | tee "$work/bench-redis.txt"
	exit 0
fi

# 4. The phases.
phase shared "$work/e2e.test" -test.count=1 -test.timeout=180s -test.v -test.run '^TestShared'
phase legacy-go-sdk "$work/gosdk.test" -test.count=1 -test.timeout=120s -test.v -test.run '^TestGoSDK2025ThreeRounds$'
(cd "$root/conformance/interop/ts-v1" && { [[ -d node_modules/@modelcontextprotocol/sdk ]] || npm ci --no-audit --no-fund >"$work/npm.log" 2>&1; }) || die "npm ci in conformance/interop/ts-v1 failed"
phase legacy-ts1 node "$root/conformance/interop/ts-v1/test/scaleout.mjs"

log "killing redis-server (SIGKILL)"
kill -KILL "${pid[redis]}"
wait "${pid[redis]}" 2>/dev/null || true
phase redis-down "$work/e2e.test" -test.count=1 -test.timeout=120s -test.v -test.run '^TestRedisDown'
log "starting redis-server again on 127.0.0.1:$redis_port"
start_redis "$redis_port" || die "redis-server did not start again on port $redis_port"
phase redis-back "$work/e2e.test" -test.count=1 -test.timeout=120s -test.v -test.run '^TestRedisBack'

phase kill "$work/e2e.test" -test.count=1 -test.timeout=120s -test.v -test.run '^TestReplicaKilled'

# A fourth replica joins the two left (nginx reloaded), and the replica
# running a bridged call of the TypeScript SDK v1 client is killed.
live() {
	local n out=()
	for n in "$@"; do kill -0 "${pid[$n]}" 2>/dev/null && out+=("$n"); done
	echo "${out[@]}"
}
start_replica D
replicas=(A B C D)
read -r -a alive_now <<<"$(live "${replicas[@]}")"
((${#alive_now[@]} == 3)) || die "want three live replicas after adding D, have: ${alive_now[*]}"
reload_nginx "${alive_now[@]}"
SCALEOUT_PIDS="$(for n in "${alive_now[@]}"; do printf '%s=%s,' "$n" "${pid[$n]}"; done)"
export SCALEOUT_PIDS="${SCALEOUT_PIDS%,}"
log "replica D at ${addr[D]}; nginx now over ${alive_now[*]}"
phase kill-ts1 node "$root/conformance/interop/ts-v1/test/scaleout-kill.mjs"
# Another replica killed, under the go-sdk client at 2025-11-25: one is left.
read -r -a alive_now <<<"$(live "${replicas[@]}")"
SCALEOUT_PIDS="$(for n in "${alive_now[@]}"; do printf '%s=%s,' "$n" "${pid[$n]}"; done)"
export SCALEOUT_PIDS="${SCALEOUT_PIDS%,}"
phase kill-go-sdk "$work/gosdk.test" -test.count=1 -test.timeout=120s -test.v -test.run '^TestGoSDK2025ReplicaKilled$'

if ((${#not_run[@]})); then
	log "incomplete: SCALEOUT_ONLY left out ${not_run[*]}"
	exit 3
fi
