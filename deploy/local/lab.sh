#!/usr/bin/env bash
# The lab without Docker, in one command (make local-lab; docs/front-page.md,
# "Outside compose"): the three services behind the lab's database proxy,
# Prometheus with the lab's rules (deploy/local/prometheus.yml), the
# background load and the front page, as processes on this machine sharing
# one ADMIN_TOKEN. It prints the page's
# URL and runs until Ctrl-C (or SIGTERM), which stops everything in order:
# the page first (a run in progress puts its knobs back while the services
# still answer), then the background load, then Prometheus and the services.
#
# Environment:
#   BIN              the binaries: unbounded, semaphore, pipeline, lab,
#                    prometheus (default ./bin: make build tools)
#   DATABASE_URL     the services' Postgres, as a postgres:// URL (default:
#                    the local one, postgres@127.0.0.1:5432, as make run);
#                    the services reach it through the proxy
#   ADMIN_TOKEN      the services', the background load's and the page's
#                    knob token (default orderlab-admin, as compose's)
#   BACKGROUND_RATE  requests per second to each service (default 4)
#   LOCAL_LAB_DIR    the logs, Prometheus's data (fresh at each start) and
#                    the page's reports (default .cache/local-lab)
#   LOCAL_LAB_HOST   the loopback address everything listens on (default
#                    127.0.0.1)
# Ports: the page 8080; the services 8081-8083, admin 9091-9093 (make run's);
# Prometheus 9090; the database proxy 5434, its control API 9094 (compose's);
# the background load 9095.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${BIN:-$root/bin}
dir=${LOCAL_LAB_DIR:-$root/.cache/local-lab}
host=${LOCAL_LAB_HOST:-127.0.0.1}
rate=${BACKGROUND_RATE:-4}
export ADMIN_TOKEN=${ADMIN_TOKEN:-orderlab-admin}

for b in unbounded semaphore pipeline lab prometheus; do
	[ -x "$bin/$b" ] || { echo "local-lab: no $bin/$b (make build tools)" >&2; exit 2; }
done
command -v curl >/dev/null || { echo "local-lab: curl is needed to wait for each process" >&2; exit 2; }

db=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
# The database's host:port, after the scheme and any user:password@.
upstream=$(printf '%s' "$db" | sed -nE 's#^postgres(ql)?://([^@/]*@)?([^/?]+).*#\3#p')
if [ -z "$upstream" ]; then
	echo "local-lab: DATABASE_URL must be a postgres:// URL (the services reach it through the database proxy)" >&2
	exit 2
fi
case $upstream in *:*) ;; *) upstream=$upstream:5432 ;; esac
proxied=$(printf '%s' "$db" | sed -E "s#^(postgres(ql)?://([^@/]*@)?)[^/?]+#\1$host:5434#")

rm -rf "$dir/prometheus"
mkdir -p "$dir/logs" "$dir/prometheus" "$dir/front"

names=()
pids=()
# start NAME CMD...: CMD in the background, its output in logs/NAME.log, in
# a process group of its own (set -m while it forks): Ctrl-C reaches this
# script alone, which then stops each child in order.
start() {
	local name=$1
	shift
	set -m
	"$@" >"$dir/logs/$name.log" 2>&1 &
	set +m
	names+=("$name")
	pids+=("$!")
}

# stop NAME...: SIGTERM to each, then wait for them all.
stop() {
	local i name stopped=()
	for name in "$@"; do
		for i in "${!names[@]}"; do
			if [ "${names[$i]}" = "$name" ]; then
				kill -TERM "${pids[$i]}" 2>/dev/null || true
				stopped+=("${pids[$i]}")
			fi
		done
	done
	for i in ${stopped[@]+"${stopped[@]}"}; do
		wait "$i" 2>/dev/null || true
	done
}

stopping=
stop_all() {
	[ -z "$stopping" ] || return 0
	stopping=1
	trap '' INT TERM
	echo "local-lab: stopping"
	stop front
	stop background
	stop prometheus unbounded semaphore pipeline
	stop dbproxy
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# alive NAME: the process NAME still runs.
alive() {
	local i
	for i in "${!names[@]}"; do
		if [ "${names[$i]}" = "$1" ]; then
			kill -0 "${pids[$i]}" 2>/dev/null
			return
		fi
	done
	return 1
}

# ready NAME URL: wait up to 60 s for URL to answer, while NAME runs.
ready() {
	local name=$1 url=$2 i
	for i in $(seq 1 300); do
		if curl -sf -o /dev/null --max-time 2 "$url"; then
			return 0
		fi
		if ! alive "$name"; then
			echo "local-lab: $name exited; the end of $dir/logs/$name.log:" >&2
			tail -n 20 "$dir/logs/$name.log" >&2
			exit 1
		fi
		sleep 0.2
	done
	echo "local-lab: $name did not answer $url within 60 s; the end of $dir/logs/$name.log:" >&2
	tail -n 20 "$dir/logs/$name.log" >&2
	exit 1
}

# The database proxy (compose's profile dbproxy): db-latency and db-restart
# set their faults there.
start dbproxy "$bin/lab" dbproxy -listen "$host:5434" -upstream "$upstream" -control "$host:9094"
ready dbproxy "http://$host:9094/healthz"

# The services on 808N (admin 909N), N = 1, 2, 3, through the proxy.
services=(unbounded semaphore pipeline)
for i in 0 1 2; do
	start "${services[$i]}" env DATABASE_URL="$proxied" HTTP_ADDR="$host:808$((i + 1))" ADMIN_ADDR="$host:909$((i + 1))" "$bin/${services[$i]}"
done
for i in 0 1 2; do
	ready "${services[$i]}" "http://$host:808$((i + 1))/readyz"
done

start background "$bin/lab" background -rate "$rate" -listen "$host:9095" \
	unbounded="http://$host:8081" semaphore="http://$host:8082" pipeline="http://$host:8083"
ready background "http://$host:9095/rate"

# The committed config, its targets moved to $host and its rules found
# from where the copy is.
sed -e "s#127\.0\.0\.1:#$host:#" -e "s#\.\./\.\./prometheus/rules/#$root/prometheus/rules/#" \
	"$root/deploy/local/prometheus.yml" >"$dir/prometheus/prometheus.yml"
# compose.yaml's flags for its Prometheus, but the paths and the address.
start prometheus "$bin/prometheus" --config.file="$dir/prometheus/prometheus.yml" \
	--storage.tsdb.path="$dir/prometheus/data" --storage.tsdb.retention.time=2d \
	--enable-feature=exemplar-storage --web.enable-lifecycle --web.listen-address="$host:9090"
ready prometheus "http://$host:9090/-/ready"

targets=()
for i in 0 1 2; do
	targets+=(-target "${services[$i]}=http://$host:808$((i + 1))" -metrics "${services[$i]}=http://$host:909$((i + 1))/metrics")
done
start front "$bin/lab" front -listen "$host:8080" -out "$dir/front" -prometheus "http://$host:9090" \
	-background "http://$host:9095" -dbproxy "http://$host:9094" -dbproxy-host "$host:5434" -lab-db "$db" "${targets[@]}"
ready front "http://$host:8080/api/config"

cat <<EOF
local-lab: the front page is on http://$host:8080
  Prometheus http://$host:9090; the services http://$host:8081-8083 (admin 9091-9093), through the
  database proxy $host:5434 (control 9094) to $upstream; background load $rate/s each
  ADMIN_TOKEN=$ADMIN_TOKEN for all of them; logs and reports under $dir
  Ctrl-C stops everything.
EOF

# Until Ctrl-C, or until one of them exits on its own.
while :; do
	for i in "${!names[@]}"; do
		if ! kill -0 "${pids[$i]}" 2>/dev/null; then
			echo "local-lab: ${names[$i]} exited; the end of $dir/logs/${names[$i]}.log:" >&2
			tail -n 20 "$dir/logs/${names[$i]}.log" >&2
			exit 1
		fi
	done
	sleep 1
done
