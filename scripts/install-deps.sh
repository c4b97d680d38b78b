#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Install the Debian packages opentoe needs, when they are missing.
# Package lists: scripts/packages.txt and kmod/packages.txt (one per line).
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
want=$(cat "$top/scripts/packages.txt" "$top/kmod/packages.txt" 2>/dev/null |
	sed 's/#.*//' | tr -s ' \t' '\n' | grep -v '^$' | sort -u)
# one dpkg-query for them all (one a package took 1.4 s: every make bench-*
# and the bench smoke test pay it)
installed=$(dpkg-query -W -f='${Package}\t${Status}\n' $want 2>/dev/null |
	awk -F'\t' '$2 == "install ok installed" { print $1 }')
missing=""
for p in $want; do
	printf '%s\n' "$installed" | grep -qxF "$p" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages:$missing (run as root to install them)" >&2
	exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null
