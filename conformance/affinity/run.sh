#!/usr/bin/env bash
# Proves the multi-replica recipe of docs/deployment.md ("Several
# replicas: 2025-11-25 clients and session affinity") with real processes:
#
#   1. installs nginx from Debian packages when it is missing (needs root
#      and apt-get; an installed nginx is used as it is);
#   2. builds the fixture server (conformance/server) and the test
#      (conformance/affinity, built only with -tags affinity);
#   3. starts two fixture replicas on free loopback ports with one key ring
#      in MRTRKIT_STATE_KEYS, a random key made for this run and never
#      written anywhere but the replicas' environment;
#   4. starts nginx in the foreground, in the background of this script,
#      with a configuration written to a temporary directory (its own pid,
#      logs and temp paths, a free loopback port): `hash
#      $http_mcp_session_id consistent` across the two replicas;
#   5. runs the test, which checks that bridged 2025-11-25 calls complete
#      through nginx with every answer reaching the replica that runs the
#      call, on both replicas; that any replica serves a session's ordinary
#      requests; that an answer sent to the wrong replica gets 202 and is
#      dropped; and that 2026-07-28 requests work through nginx.
#
# Everything it starts is stopped on exit. Exits non-zero on any failure.
#
# Environment:
#   AFFINITY_KEEP=1   keep the temporary directory (logs, nginx.conf)
#   AFFINITY_VERBOSE=1  print the whole test output (go test -v), with a line per session
set -euo pipefail

start_time=$SECONDS
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/mrtrkit-affinity.XXXXXX")"
pids=()
policy_made=""
# The closing line, "affinity: N passed, N failed", printed last of all.
closing=""

log() { printf '[affinity] %s\n' "$*" >&2; }
die() {
	log "FAIL: $*"
	exit 1
}

cleanup() {
	local rc=$?
	local pid
	for pid in ${pids[@]+"${pids[@]}"}; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in ${pids[@]+"${pids[@]}"}; do
		wait "$pid" 2>/dev/null || true
	done
	if [[ -n "$policy_made" ]]; then
		rm -f "$policy_made"
	fi
	if ((rc != 0)); then
		for f in "$work"/replica-A.log "$work"/replica-B.log "$work"/nginx/error.log "$work"/nginx/stderr.log; do
			[[ -s "$f" ]] || continue
			log "last lines of $f:"
			tail -n 15 "$f" >&2 || true
		done
	fi
	if [[ "${AFFINITY_KEEP:-0}" == 1 ]]; then
		log "kept $work"
	else
		rm -rf "$work"
	fi
	log "elapsed: $((SECONDS - start_time)) s"
	if [[ -z "$closing" ]]; then
		# Failed before the test ran: count the run as one failure.
		closing="affinity: 0 passed, 1 failed"
		((rc != 0)) || closing=""
	fi
	[[ -z "$closing" ]] || echo "$closing"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

command -v go >/dev/null || die "go is not on PATH"

# 1. nginx.
nginx_bin="$(command -v nginx || true)"
[[ -z "$nginx_bin" && -x /usr/sbin/nginx ]] && nginx_bin=/usr/sbin/nginx
if [[ -z "$nginx_bin" ]]; then
	[[ "$(id -u)" == 0 ]] || die "nginx is not installed, and installing it needs root"
	command -v apt-get >/dev/null || die "nginx is not installed, and there is no apt-get to install it with"
	log "installing nginx from Debian packages"
	t0=$SECONDS
	# The package must not start a system nginx (on port 80) as it
	# installs: policy-rc.d forbids it, unless the machine has its own.
	if [[ ! -e /usr/sbin/policy-rc.d ]]; then
		policy_made=/usr/sbin/policy-rc.d
		printf '#!/bin/sh\nexit 101\n' >"$policy_made"
		chmod 755 "$policy_made"
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >"$work/apt.log" 2>&1 || {
		cat "$work/apt.log" >&2
		die "apt-get update failed"
	}
	apt-get install -y -q --no-install-recommends nginx >>"$work/apt.log" 2>&1 || {
		cat "$work/apt.log" >&2
		die "apt-get install nginx failed"
	}
	if [[ -n "$policy_made" ]]; then
		rm -f "$policy_made"
		policy_made=""
	fi
	nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
	[[ -x "$nginx_bin" ]] || die "nginx is still missing after apt-get install nginx"
	log "installed nginx in $((SECONDS - t0)) s"
fi
log "using $("$nginx_bin" -v 2>&1) ($nginx_bin)"

# 2. Build.
t0=$SECONDS
(cd "$root" && go build -o "$work/server" ./conformance/server) || die "go build ./conformance/server failed"
(cd "$root" && go vet -tags affinity ./conformance/affinity) || die "go vet -tags affinity ./conformance/affinity failed"
(cd "$root" && go test -c -tags affinity -o "$work/affinity.test" ./conformance/affinity) || die "building the affinity test failed"
log "built the fixture server and the test in $((SECONDS - t0)) s"

# 3. Two replicas with one key ring. Each binds port 0 and logs its URL,
# which leaves no window for another process to take a port chosen in
# advance.
key="k1:$(head -c 32 /dev/urandom | base64 -w0)"
declare -A addr
for name in A B; do
	: >"$work/replica-$name.log"
	MRTRKIT_STATE_KEYS="$key" "$work/server" -addr 127.0.0.1:0 -path /mcp -portable-sessions -v 2>"$work/replica-$name.log" &
	pids+=("$!")
	deadline=$((SECONDS + 15))
	while :; do
		url="$(sed -n 's/.*msg="conformance server listening" url=http:\/\/\([^ /]*\)\/mcp.*/\1/p' "$work/replica-$name.log" | head -n 1 || true)"
		[[ -n "$url" ]] && break
		kill -0 "${pids[-1]}" 2>/dev/null || die "replica $name exited during start-up"
		((SECONDS < deadline)) || die "replica $name did not start within 15 s"
		sleep 0.1
	done
	addr[$name]="$url"
done
unset key
log "replicas: A at ${addr[A]}, B at ${addr[B]} (one key ring, made for this run)"

# 4. nginx, on a free loopback port: a port taken meanwhile makes nginx
# exit with "Address already in use", and another is tried.
mkdir -p "$work/nginx"
# nginx's workers drop root privileges (to nobody) and must reach the
# temp paths below.
chmod 755 "$work" "$work/nginx"
nginx_conf() {
	cat <<EOF
# Written by conformance/affinity/run.sh; the recipe is docs/deployment.md.
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log notice;
events { worker_connections 256; }
http {
    client_body_temp_path $work/nginx/client_body;
    proxy_temp_path       $work/nginx/proxy;
    fastcgi_temp_path     $work/nginx/fastcgi;
    uwsgi_temp_path       $work/nginx/uwsgi;
    scgi_temp_path        $work/nginx/scgi;
    log_format affinity '\$remote_addr "\$request" \$status upstream=\$upstream_addr sid=\$http_mcp_session_id';
    access_log $work/nginx/access.log affinity;

    upstream mcp_replicas {
        hash \$http_mcp_session_id consistent;
        server ${addr[A]};
        server ${addr[B]};
        keepalive 16;
    }

    server {
        listen 127.0.0.1:$1;

        # For the script only: tells it that this nginx, not some other
        # process, listens on the port.
        location = /affinity-ready {
            return 200 "$ready_token";
        }

        location = /mcp {
            proxy_pass http://mcp_replicas;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host \$http_host;
            proxy_buffering off;
            proxy_cache off;
            proxy_read_timeout 300s;
            client_max_body_size 4m;
            # For the test only: which replica served the request.
            add_header X-Affinity-Upstream \$upstream_addr always;
        }
    }
}
EOF
}
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
ready_token="ready-$(head -c 12 /dev/urandom | base64 -w0 | tr -dc 'A-Za-z0-9')"
nginx_ready() {
	local reply
	reply="$( (exec 3<>"/dev/tcp/127.0.0.1/$1" &&
		printf 'GET /affinity-ready HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3 &&
		timeout 2 cat <&3) 2>/dev/null || true)"
	[[ "$reply" == *"$ready_token"* ]]
}
nginx_port=""
for attempt in 1 2 3 4 5 6 7 8; do
	port=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
	port_open "$port" && continue
	nginx_conf "$port" >"$work/nginx/nginx.conf"
	: >"$work/nginx/error.log"
	"$nginx_bin" -p "$work/nginx" -e "$work/nginx/error.log" -c "$work/nginx/nginx.conf" -g 'daemon off;' 2>>"$work/nginx/stderr.log" &
	npid=$!
	pids+=("$npid")
	deadline=$((SECONDS + 10))
	while :; do
		if nginx_ready "$port"; then
			nginx_port="$port"
			break
		fi
		if ! kill -0 "$npid" 2>/dev/null; then
			wait "$npid" 2>/dev/null || true
			break
		fi
		if ((SECONDS >= deadline)); then
			kill -TERM "$npid" 2>/dev/null || true
			wait "$npid" 2>/dev/null || true
			die "nginx did not listen on 127.0.0.1:$port within 10 s"
		fi
		sleep 0.05
	done
	[[ -n "$nginx_port" ]] && break
	grep -q 'Address already in use' "$work/nginx/error.log" || {
		cat "$work/nginx/error.log" >&2
		die "nginx did not start"
	}
	log "port $port was taken; trying another"
done
[[ -n "$nginx_port" ]] || die "found no free port for nginx"
log "nginx at 127.0.0.1:$nginx_port: hash \$http_mcp_session_id consistent over A and B"

# 5. The test. Its verbose output goes to a file; the terminal gets one
# line per test, and everything when something failed.
t0=$SECONDS
set +e
AFFINITY_PROXY_URL="http://127.0.0.1:$nginx_port/mcp" \
	AFFINITY_REPLICA_A="${addr[A]}" AFFINITY_REPLICA_B="${addr[B]}" \
	AFFINITY_LOG_A="$work/replica-A.log" AFFINITY_LOG_B="$work/replica-B.log" \
	AFFINITY_STATS="$work/stats" \
	"$work/affinity.test" -test.count=1 -test.timeout=120s -test.v >"$work/test.out" 2>&1
rc=$?
set -e
if ((rc != 0)) || [[ "${AFFINITY_VERBOSE:-0}" == 1 ]]; then
	cat "$work/test.out"
else
	grep -E '^(--- |PASS$|FAIL$)' "$work/test.out" || true
fi
passed="$(grep -c '^--- PASS' "$work/test.out" || true)"
failed="$(grep -c '^--- FAIL' "$work/test.out" || true)"
if ((rc != 0)) && ((failed == 0)); then
	failed=1
fi
stats="$(cat "$work/stats" 2>/dev/null || echo 'no stats')"
log "summary: $passed passed, $failed failed in $((SECONDS - t0)) s through nginx (hash \$http_mcp_session_id consistent, 2 replicas): $stats"
closing="affinity: $passed passed, $failed failed"
((rc == 0)) || die "the affinity test failed (exit $rc)"
