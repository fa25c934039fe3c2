#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Write Debian's amd64 config of this kernel as the base of the distro-shaped
# variants (scripts/build-kernel.sh *-distro*).
#
#   scripts/debian-config.sh OUT
#
# (and OUT.package: the package's config as it is, for comparisons)
# The config comes from Debian's linux-config-6.12 package, of the version
# the tree is pinned to (KVER), flavour amd64 (linux-image-amd64). The guest
# loads no modules, so every module option (=m) is turned off and
# CONFIG_MODULES with them: what Debian builds into the kernel stays, what it
# builds as a module is left out (the few drivers the tests need are built in
# by scripts/configs/distro.config). Everything else is Debian's, as is.
. "$(dirname "$0")/lib.sh"

out=${1:?usage: debian-config.sh OUT}
PKG=linux-config-6.12
cfg=/usr/src/$PKG/config.amd64_none_amd64.xz

v=$(dpkg-query -W -f='${Version}' "$PKG" 2>/dev/null) ||
	die "$PKG is not installed (run 'make deps' as root)"
[ "${v%%-*}" = "$KVER" ] ||
	die "installed $PKG is $v, but the tree is Linux $KVER: install $PKG for $KVER"
[ -f "$cfg" ] || die "$cfg is missing although $PKG $v is installed"

mkdir -p "$(dirname "$out")"
xz -dc "$cfg" > "$out.package"
{
	echo "# Debian $PKG $v, $(basename "$cfg" .xz): every =m turned off, no modules"
	xz -dc "$cfg" | sed -E -e 's/^(CONFIG_[A-Za-z0-9_]+)=m$/# \1 is not set/' \
		-e 's/^CONFIG_MODULES=y$/# CONFIG_MODULES is not set/'
} > "$out.tmp"
mv "$out.tmp" "$out"
