# SPDX-License-Identifier: GPL-2.0
# Shared by the bypass tests: opentoe loaded on a cgroup of the test's own,
# policy "bypass ports 7000-7999" (8000-8999 stay on the host), namespaces
# a and b joined by a veth, and helpers.  Both ends of every connection run
# inside the cgroup, so sock_ops sees both.
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
need_root
need_cmd bpftool jq nsenter
[ -x "$TOE_BUILD/toe-loader" ] && [ -x "$TOE_BUILD/toed" ] &&
	[ -x "$TOE_BUILD/selftests/bypass_check" ] || cannot_run "not built (make)"

PIN=$TOE_PIN_DIR
BC=$TOE_BUILD/selftests/bypass_check
TMP=$(mktemp -d /tmp/opentoe-bypass.XXXXXX)
defer "rm -rf $TMP"
cg_add byp || skip "no cgroup v2 mount"
two_hosts 203 || exit 1
NSA=/run/netns/$(ns_name a) NSB=/run/netns/$(ns_name b)

load_toe() { # extra toe-loader args
	defer "toe-loader unload --pin-dir $PIN --force; rm -rf $PIN"
	toe-loader load --cgroup "$CG" --pin-dir "$PIN" "$@" >/dev/null
}
conf() { # NAME <<EOF: a root-owned 0600 configuration; prints its path
	local f=$TMP/$1.conf
	cat >"$f" && chmod 600 "$f" && echo "$f"
}
apply() { toed --apply "$1" --pin-dir "$PIN" >/dev/null; }
# both ends' namespaces, by name (a rule with no netns: toed's own only)
BYPASS_CONF=$(conf bypass <<EOC
default host
rule bypass lport 7000-7999 netns $(ns_name a),$(ns_name b)
rule bypass rport 7000-7999 netns $(ns_name a),$(ns_name b)
EOC
)
HOST_CONF=$(conf host <<'EOC'
default host
EOC
)

# in_cg NS CMD...: run CMD in namespace NS, inside the test cgroup.
in_cg() {
	local ns=$1; shift
	(echo $BASHPID >"$CG/cgroup.procs" && exec nsenter --net=/run/netns/$(ns_name "$ns") "$@")
}
# bcheck NS ARGS...: bypass_check in namespace NS (both ends unless --srv-ns),
# inside the cgroup; its JSON line on stdout.
bcheck() { local ns=$1; shift; in_cg "$ns" timeout "$(slow 120)" "$BC" "$@" | tail -1; }

# nginx_start WORKERS PORT...: nginx (sendfile on, as root, files from
# $TMP/www, its own folder $TMP/nginx) in namespace a inside the cgroup,
# listening on 127.0.0.1 at each PORT; stopped on exit.  Waits until the
# first PORT listens.
nginx_start() {
	local w=$1 l= p; shift
	for p in "$@"; do l="$l listen 127.0.0.1:$p;"; done
	mkdir -p "$TMP/nginx"
	cat >"$TMP/nginx.conf" <<-EOC
		daemon off;
		user root;
		worker_processes $w;
		pid $TMP/nginx/pid;
		error_log $TMP/nginx/error.log;
		events { worker_connections 1024; }
		http {
			access_log off;
			sendfile on;
			client_body_temp_path $TMP/nginx;
			proxy_temp_path $TMP/nginx;
			fastcgi_temp_path $TMP/nginx;
			uwsgi_temp_path $TMP/nginx;
			scgi_temp_path $TMP/nginx;
			server {$l root $TMP/www; }
		}
	EOC
	in_cg a nginx -c "$TMP/nginx.conf" -p "$TMP/nginx" >/dev/null 2>&1 &
	defer "kill $!"
	wait_for 5 bash -c "nsenter --net=$NSA ss -ltn | grep -q :$1"
}

stat_sum() { stat_of "$PIN" "$1"; } # INDEX (STAT_BYP_BYTES ...)
byp_bytes() { stat_sum $STAT_BYP_BYTES; }

# jqcheck DESC JSON FILTER: ok if FILTER is true of JSON; else print JSON.
jqcheck() {
	if jq -e "$3" <<<"$2" >/dev/null 2>&1; then ok "$1"; else fail "$1"; echo "$2"; fi
}
