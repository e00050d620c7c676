#!/bin/bash
# build-deb.sh WORKDIR OUTDIR - makes OUTDIR/lockdep-rcu_VERSION_ARCH.deb from
# what `make install PREFIX=/usr DESTDIR=WORKDIR/debian/lockdep-rcu` staged
# (make deb runs both). Plain dpkg-dev tools, no debhelper: the package is
# one make install, and debhelper would add a build dependency for the few
# steps below, which do what dh_strip, dh_compress, dh_fixperms,
# dh_installchangelogs, dh_shlibdeps, dh_gencontrol and dh_md5sums would.
# The layout (debian/control, debian/PACKAGE) is debhelper's because
# dpkg-shlibdeps expects it.
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 WORKDIR OUTDIR" >&2; exit 2; }
command -v dpkg-shlibdeps >/dev/null || { echo "$0: needs dpkg-dev (apt-get install dpkg-dev)" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
work=$(cd "$1" && pwd)
outdir=$2
package=lockdep-rcu
root=$work/debian/$package
[ -x "$root/usr/bin/lockdep-rcu" ] ||
	{ echo "$0: $root holds no staged install (make install PREFIX=/usr DESTDIR=$root)" >&2; exit 1; }

changelog=$here/changelog
version=$(dpkg-parsechangelog -l "$changelog" -SVersion)
maintainer=$(dpkg-parsechangelog -l "$changelog" -SMaintainer)
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
# The changelog's date stamps every file and the archive, as
# dpkg-buildpackage does: the same sources give the same .deb.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(dpkg-parsechangelog -l "$changelog" -STimestamp)}

# The package's upstream version is the command's: a release that moves
# LOCKDEP_RCU_TOOL_VERSION needs a changelog entry saying so.
tool_version=$("$root/usr/bin/lockdep-rcu" --version | awk '{ print $NF; exit }')
[ "${version%-*}" = "$tool_version" ] ||
	{ echo "$0: $changelog is at $version but lockdep-rcu --version says $tool_version: add a changelog entry (dch -v $tool_version-1)" >&2; exit 1; }

# pkg-config looks in the multiarch directory first; a .pc in /usr/lib/pkgconfig
# of an architecture-dependent package is one cross builds cannot see.
mkdir -p "$root/usr/lib/$multiarch"
mv "$root/usr/lib/pkgconfig" "$root/usr/lib/$multiarch/pkgconfig"

# Stripped as dh_strip strips (lintian wants it): reports name the program's
# frames and its libraries', not the tracer's own; the demo's reports are the
# same from the stripped tracer.
strip --remove-section=.comment --remove-section=.note --strip-unneeded \
	"$root/usr/lib/lockdep-rcu/liblockdep-rcu.so"
strip --remove-section=.comment --remove-section=.note "$root/usr/bin/lockdep-rcu"

gzip -9n "$root"/usr/share/man/man*/*
install -d "$root/usr/share/lintian/overrides"
install -m 0644 "$here/lintian-overrides" "$root/usr/share/lintian/overrides/$package"
doc=$root/usr/share/doc/$package
install -d "$doc"
install -m 0644 "$here/copyright" "$doc/copyright"
gzip -9nc "$changelog" > "$doc/changelog.Debian.gz"

# dh_fixperms: directories and programs 0755, everything else 0644, a preloaded
# library included (the loader maps it without the execute bit). Owner and
# group are root's in the archive (dpkg-deb --root-owner-group).
find "$root" -type d -exec chmod 0755 {} +
find "$root" -type f -exec chmod 0644 {} +
chmod 0755 "$root/usr/bin/lockdep-rcu"

# dpkg-shlibdeps reads debian/control (one binary package is enough for it)
# and the binaries from their package directory, the one with DEBIAN/ in it.
install -d -m 0755 "$root/DEBIAN"
cat > "$work/debian/control" <<EOF
Source: $package

Package: $package
Architecture: any
EOF
depends=$(cd "$work" && dpkg-shlibdeps -O -e"debian/$package/usr/bin/lockdep-rcu" \
	-e"debian/$package/usr/lib/lockdep-rcu/liblockdep-rcu.so" | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "$0: dpkg-shlibdeps found no dependencies" >&2; exit 1; }

# What is compiled in from other source packages: libiberty's demangler and
# liburcu's static inline functions, whose LGPL asks for their source
# (Built-Using), and zlib besides, for security rebuilds (Static-Built-Using).
source_of() { dpkg-query -W -f='${source:Package} (= ${source:Version})' "$1"; }
built_using="$(source_of libiberty-dev), $(source_of liburcu-dev)"
static_built_using="$(source_of libiberty-dev), $(source_of liburcu-dev), $(source_of zlib1g-dev)"

installed_size=$(du -sk --apparent-size --exclude=DEBIAN "$root" | cut -f1)
sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s|@MAINTAINER@|$maintainer|" \
	-e "s|@INSTALLED_SIZE@|$installed_size|" -e "s|@DEPENDS@|$depends|" \
	-e "s|@BUILT_USING@|$built_using|" -e "s|@STATIC_BUILT_USING@|$static_built_using|" \
	"$here/control.in" > "$root/DEBIAN/control"
(cd "$root" && find usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"

find "$root" -newermt "@$SOURCE_DATE_EPOCH" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
deb=$outdir/${package}_${version}_$arch.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb"
