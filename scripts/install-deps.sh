#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Install the Debian packages opentoe needs, when they are missing.
# Package lists: scripts/packages.txt and kmod/packages.txt (one per line).
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
want=$(cat "$top/scripts/packages.txt" "$top/kmod/packages.txt" 2>/dev/null |
	sed 's/#.*//' | tr -s ' \t' '\n' | grep -v '^$' | sort -u)
missing=""
for p in $want; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
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
