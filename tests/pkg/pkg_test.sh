#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Packaging (issue 14).
#
#   version_one_source  VERSION is what kinstctl --version, debian/changelog
#                       and the FreeBSD port say; dkms.conf takes it from
#                       the package
#   freebsd_port        pkg/freebsd parses with bmake, names kinsttrace.ko
#                       from Makefile.kmod, installs it under /boot/modules
#   make_install        make -C kmod/linux install, staged (INSTALL_MOD_PATH):
#                       the module and depmod's modules.dep
#   deb                 (root) dpkg-buildpackage from a clean copy of the
#                       tree; dpkg-deb -c lists; lintian has no error;
#                       kinst-dkms installed, DKMS builds kinst.ko for
#                       Debian's kernel through the kernel's postinst hook;
#                       that kinst.ko loads in the QEMU guest and traces;
#                       the installed kinstctl runs and has its man page;
#                       purging removes the module.  It installs packages
#                       on this machine and purges them in its cleanup,
#                       also when it fails.

KINST_DEFAULT_SRCDIR="@KINST_SRCDIR@"
KINST_DEFAULT_BUILDDIR="@KINST_BUILDDIR@"
KINST_DEFAULT_CACHE="@KINST_CACHE_DEFAULT@"
. "$KINST_DEFAULT_SRCDIR/tests/lib/vm.sh"

# The release version: the file VERSION, one line.
pkg_version() {
	v=$(cat "$top/VERSION") || atf_fail "cannot read $top/VERSION"
	echo "$v" | grep -Eqx '[0-9]+\.[0-9]+\.[0-9]+' ||
	    atf_fail "VERSION is '$v', not MAJOR.MINOR.PATCH"
	[ "$(wc -l <"$top/VERSION")" -eq 1 ] || atf_fail "VERSION has more than one line"
	echo "$v"
}

# The Debian kernel the tests boot (extracted under the cache) and its
# headers' build directory, as kmod/linux/Makefile finds them.
pkg_kernel() {
	kver=$(ls "$KINST_CACHE"/kernel/root/lib/modules 2>/dev/null | head -n 1)
	[ -n "$kver" ] ||
	    atf_skip "SKIPPED: no Debian kernel under $KINST_CACHE/kernel/root (run tests/setup): cannot build the module"
	kdir=/usr/src/linux-headers-$kver
	[ -f "$kdir/Makefile" ] ||
	    atf_skip "SKIPPED: no $kdir (apt-get install linux-headers-amd64, or run tests/setup): cannot build the module"
}

pkg_need() {
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 ||
		    atf_skip "SKIPPED: $t is not installed (run tests/setup as root; it installs debhelper dh-dkms dkms lintian bmake): cannot check the packaging"
	done
}

# A stand-in for the ports tree's bsd.port.mk and the base system's
# bsd.kmod.mk, sys.mk: bmake parses a Makefile without them.
pkg_bmake_stubs() {
	mkdir -p stubs
	: >stubs/sys.mk
	: >stubs/bsd.port.mk
	: >stubs/bsd.kmod.mk
}

atf_test_case version_one_source
version_one_source_head() {
	atf_set descr "VERSION is the version of kinstctl --version, debian/changelog and the FreeBSD port; dkms.conf takes the package's"
}
version_one_source_body() {
	vm_setup
	v=$(pkg_version)
	k=$KINST_BUILD/cli/kinstctl
	[ -x "$k" ] || atf_fail "$k is not built"
	out=$("$k" --version) || atf_fail "kinstctl --version failed"
	echo "kinstctl --version: $out"
	case $out in
	"kinstctl $v "*) ;;
	*) atf_fail "kinstctl --version says '$out', VERSION says $v" ;;
	esac
	pkg_need dpkg-parsechangelog bmake
	dv=$(dpkg-parsechangelog -l "$top/debian/changelog" -SVersion) ||
	    atf_fail "dpkg-parsechangelog failed"
	[ "$dv" = "$v" ] || atf_fail "debian/changelog says $dv, VERSION says $v"
	pkg_bmake_stubs
	pv=$(bmake -m "$PWD/stubs" -C "$top/pkg/freebsd" -V DISTVERSION) ||
	    atf_fail "bmake cannot read pkg/freebsd/Makefile"
	[ "$pv" = "$v" ] || atf_fail "pkg/freebsd/Makefile's DISTVERSION is '$pv', VERSION says $v"
	grep -qx 'PACKAGE_VERSION="#MODULE_VERSION#"' "$top/kmod/linux/dkms.conf" ||
	    atf_fail "kmod/linux/dkms.conf must leave PACKAGE_VERSION to dh_dkms -V (\"#MODULE_VERSION#\")"
	grep -q 'MODULE_VERSION(KINST_VERSION)' "$top/kmod/linux/kinst_linux.c" ||
	    atf_fail "kinst_linux.c does not declare MODULE_VERSION(KINST_VERSION)"
}

atf_test_case demo_root
demo_root_head() {
	atf_set descr "tests/demo (README's first command) as another user: through sudo when there is one (the same script, its arguments kept), a clear error and nothing run when there is none"
}
demo_root_body() {
	top=$KINST_DEFAULT_SRCDIR
	[ "$(id -u)" -eq 0 ] || atf_skip "SKIPPED: needs root to run tests/demo as another user"
	command -v setpriv >/dev/null 2>&1 || atf_skip "SKIPPED: no setpriv (util-linux): cannot drop to another user"
	mkdir -p fake nosudo
	chmod 755 . fake nosudo
	# A sudo that says what it was asked to run, and runs nothing.
	printf '#!/bin/sh\necho "sudo called: $*" >&2\nexit 0\n' >fake/sudo
	chmod 755 fake/sudo
	# nosudo: the commands tests/demo needs before any sudo, and no sudo.
	for c in sh id dirname cat; do
		ln -s "$(command -v $c)" nosudo/$c
	done
	asuser() {
		setpriv --reuid=65534 --regid=65534 --clear-groups env -i HOME=/ PATH="$1" "$top/tests/demo" one two
	}
	asuser "$PWD/fake:/usr/bin:/bin" >out 2>err
	rc=$?
	cat err
	[ $rc -eq 0 ] || atf_fail "tests/demo through the fake sudo: exit $rc: $(cat err)"
	grep -qx "sudo called: $top/tests/demo one two" err ||
	    atf_fail "tests/demo did not run itself through sudo with its arguments: $(cat err)"
	grep -q 'not root: running it again through sudo' err || atf_fail "no word about sudo: $(cat err)"
	asuser "$PWD/nosudo" >out 2>err
	rc=$?
	cat err
	[ $rc -eq 1 ] || atf_fail "tests/demo without sudo: exit $rc, expected 1: $(cat err)"
	grep -q 'needs root.*sudo is not installed: run it as root' err ||
	    atf_fail "tests/demo without sudo does not say what to do: $(cat err)"
	[ "$(wc -l <err)" -eq 1 ] || atf_fail "tests/demo without sudo ran something: $(cat err)"
}

atf_test_case freebsd_port
freebsd_port_head() {
	atf_set descr "pkg/freebsd parses with bmake; it builds Makefile.kmod's module (kinsttrace) and installs it in KMODDIR (/boot/modules)"
}
freebsd_port_body() {
	vm_setup
	pkg_need bmake
	pkg_bmake_stubs
	port=$top/pkg/freebsd
	for f in Makefile pkg-descr pkg-plist; do
		[ -s "$port/$f" ] || atf_fail "$port/$f is missing or empty"
	done
	# distinfo is made by `make makesum` against the release tarball.
	[ ! -e "$port/distinfo" ] || atf_fail "$port/distinfo is in the tree: it must be generated (make makesum)"
	bm() { bmake -m "$PWD/stubs" -C "$port" "$@"; }
	bm -n >/dev/null 2>bmake.err || { cat bmake.err; atf_fail "bmake -n cannot parse pkg/freebsd/Makefile"; }
	for var in PORTNAME:kinst ONLY_FOR_ARCHS:amd64 "CMAKE_OFF:KINST_TESTS KINST_WITH_LIBBPF" LICENSE:BSD2CLAUSE; do
		got=$(bm -V "${var%%:*}")
		[ "$got" = "${var#*:}" ] || atf_fail "pkg/freebsd/Makefile: ${var%%:*} is '$got', expected '${var#*:}'"
	done
	for u in cmake kmod; do
		bm -V USES | tr ' ' '\n' | grep -qx "$u" || atf_fail "pkg/freebsd/Makefile: USES lacks $u"
	done
	# The recipes, with the values the ports framework would give.
	bm -n post-build post-install WRKSRC=/w WRKDIR=/wd SRC_BASE=/usr/src \
	    KMODDIR=/boot/modules STAGEDIR=/stage INSTALL_KLD=install \
	    SETENV=env MAKE=make >recipes.txt 2>bmake.err ||
	    { cat bmake.err; atf_fail "bmake -n post-build post-install failed"; }
	cat recipes.txt
	grep -q 'SYSDIR=/usr/src/sys .*make -f Makefile.kmod KINST_OBJDIR=/wd/kmod' recipes.txt ||
	    atf_fail "post-build does not run Makefile.kmod with SYSDIR"
	# Makefile.kmod's module name is the one the port installs and lists.
	kmod=$(bmake -m "$PWD/stubs" -f "$top/Makefile.kmod" KINST_OBJDIR="$PWD/kobj" -V KMOD) ||
	    atf_fail "bmake cannot parse Makefile.kmod"
	[ "$kmod" = kinsttrace ] || atf_fail "Makefile.kmod builds '$kmod', not kinsttrace"
	grep -qx 'install /wd/kmod/kinsttrace.ko /stage/boot/modules' recipes.txt ||
	    atf_fail "post-install does not install kinsttrace.ko into \${STAGEDIR}\${KMODDIR}"
	grep -qx '/%%KMODDIR%%/kinsttrace.ko' "$port/pkg-plist" ||
	    atf_fail "pkg-plist does not list /%%KMODDIR%%/kinsttrace.ko"
	grep -qx 'sbin/kinstctl' "$port/pkg-plist" || atf_fail "pkg-plist does not list sbin/kinstctl"
	for m in 4/kinst.4 8/kinstctl.8; do
		[ -f "$top/docs/${m#*/}" ] || atf_fail "docs/${m#*/} is gone"
		grep -qx "share/man/man$m.gz" "$port/pkg-plist" ||
		    atf_fail "pkg-plist does not list share/man/man$m.gz"
	done
	# The plist is exactly what CMake's install puts under the prefix
	# (man pages gzipped, as the ports framework does) plus the module.
	cmake --install "$KINST_BUILD" --prefix "$PWD/stage" >/dev/null 2>install.err ||
	    { cat install.err; atf_fail "cmake --install failed"; }
	(cd stage && find . -type f | sed 's,^\./,,; s,^share/man/.*,&.gz,' | sort) >installed.txt
	grep -v '^/%%KMODDIR%%/' "$port/pkg-plist" | sort >plist.txt
	diff -u plist.txt installed.txt ||
	    atf_fail "pkg-plist (left) does not list what cmake --install puts (right)"
	[ "$(bm -V OPTIONS_DEFINE)" = DWARF ] || atf_fail "the port has no DWARF option"
	[ "$(bm -V DWARF_CMAKE_BOOL)" = KINST_WITH_LIBDW ] ||
	    atf_fail "the port's DWARF option does not set KINST_WITH_LIBDW"
	grep -q '^option(KINST_WITH_LIBDW ' "$top/cli/CMakeLists.txt" ||
	    atf_fail "cli/CMakeLists.txt has no KINST_WITH_LIBDW option for the port to set"
}

atf_test_case make_install
make_install_head() {
	atf_set descr "make -C kmod/linux install, staged with INSTALL_MOD_PATH: kinst.ko in lib/modules/KVER/extra with its version, and depmod's modules.dep lists it"
	atf_set timeout 900
}
make_install_body() {
	vm_setup
	pkg_kernel
	v=$(pkg_version)
	# BUILD and KO_OUT here: never the tree's kmod/linux/kinst.ko, which
	# the guest tests may be reading.
	make -C "$top/kmod/linux" install KDIR="$kdir" BUILD="$PWD/kbuild" \
	    KO_OUT="$PWD/kinst.ko" INSTALL_MOD_PATH="$PWD/stage" >make.log 2>&1 ||
	    { tail -n 40 make.log; atf_fail "make -C kmod/linux install failed"; }
	tail -n 8 make.log
	mdir=$PWD/stage/lib/modules/$kver
	ko=$mdir/extra/kinst.ko
	[ -f "$ko" ] || { find stage; atf_fail "no $ko after make install"; }
	got=$(modinfo -F version "$ko") || atf_fail "modinfo $ko failed"
	[ "$got" = "$v" ] || atf_fail "the installed kinst.ko says version '$got', VERSION says $v"
	got=$(modinfo -F vermagic "$ko" | cut -d' ' -f1)
	[ "$got" = "$kver" ] || atf_fail "the installed kinst.ko is for '$got', not $kver"
	grep -q '^extra/kinst.ko:' "$mdir/modules.dep" 2>/dev/null ||
	    atf_fail "depmod did not run: $mdir/modules.dep does not list extra/kinst.ko"
}

# --- deb ----------------------------------------------------------------

# A clean copy of the tree: the files git knows (tracked, and new ones not
# ignored), as they are in the work tree; no build products.
pkg_clean_copy() {
	dest=$1
	git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
	    atf_skip "SKIPPED: $top is not a git checkout: cannot make a clean copy of the tree to build the packages from"
	mkdir -p "$dest"
	(cd "$top" && git ls-files -z -co --exclude-standard |
	    tar --null --ignore-failed-read -T - -cf -) 2>/dev/null |
	    tar -xf - -C "$dest" || atf_fail "cannot copy the tree"
	[ -f "$dest/debian/control" ] || atf_fail "the copy has no debian/control"
}

# pkg_files DEB: its regular files and symlinks, one a line, without the
# leading "." and without .gz on documentation (dh_compress compresses
# docs by size, which changes as they are edited).
pkg_files() {
	dpkg-deb -c "$1" | awk '$1 !~ /^d/ { p = $6; sub(/^\./, "", p); print p }' |
	    sed 's|^\(/usr/share/doc/.*\)\.gz$|\1|' | sort
}

pkg_expect_files() {
	name=$1 deb=$2 expected=$3
	pkg_files "$deb" >"$name.files"
	sort "$expected" >"$name.expected"
	if ! cmp -s "$name.files" "$name.expected"; then
		echo "--- dpkg-deb -c $deb: '-' expected but missing, '+' unexpected"
		diff "$name.expected" "$name.files" | sed -n 's/^< /- /p; s/^> /+ /p'
		atf_fail "$name's files are not the expected ones"
	fi
	echo "$name: $(wc -l <"$name.files") files, as expected"
}

atf_test_case deb cleanup
deb_head() {
	atf_set descr "dpkg-buildpackage from a clean copy; dpkg-deb -c; lintian; kinst-dkms installed builds kinst.ko through DKMS for Debian's kernel, which loads and traces in the guest; kinstctl from the package runs; purge removes the module"
	atf_set timeout 3600
}
deb_body() {
	vm_setup
	[ "$(id -u)" = 0 ] ||
	    atf_skip "SKIPPED: not root: this test installs kinst-dkms and kinstctl with dpkg on this machine (and purges them); run tests/run as root"
	pkg_need dpkg-buildpackage dpkg-deb dh dh_dkms dkms lintian fakeroot man modinfo git
	vm_require_guest
	pkg_kernel
	[ -e "/lib/modules/$kver/build/include" ] ||
	    atf_skip "SKIPPED: /lib/modules/$kver/build is not the headers of $kver (apt-get install linux-headers-amd64): DKMS cannot build for it"
	for p in kinst-dkms kinstctl; do
		if dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q installed; then
			atf_skip "SKIPPED: $p is installed on this machine; this test would purge it (dpkg --purge kinst-dkms kinstctl first)"
		fi
	done
	[ -z "$(dkms status -m kinst 2>/dev/null)" ] ||
	    atf_skip "SKIPPED: DKMS already has a kinst module ($(dkms status -m kinst | head -n 1)); this test would remove it"
	v=$(pkg_version)
	t0=$(date +%s)

	# What /lib/modules/$kver holds now: the cleanup removes what is new
	# (DKMS's module, depmod's files), once the packages are purged.
	find "/lib/modules/$kver" -mindepth 1 >lib-modules.before
	echo "$kver" >kver
	# DKMS signs what it builds with a key of its own, made on first use.
	for f in /var/lib/dkms/mok.key /var/lib/dkms/mok.pub; do
		[ -e "$f" ] || echo "$f" >>dkms-keys.new
	done

	# 1. Build, from a clean copy (products land in its parent, pkgs/).
	pkg_clean_copy "$PWD/pkgs/kinst-$v"
	(cd "pkgs/kinst-$v" && dpkg-buildpackage -b -uc -us -j"$(nproc)") >build.log 2>&1 ||
	    { tail -n 60 build.log; atf_fail "dpkg-buildpackage -b -uc -us failed"; }
	t1=$(date +%s)
	echo "dpkg-buildpackage: $((t1 - t0)) s (informational)"
	ls pkgs/*.deb | sed 's|.*/||' | sort >debs.txt
	printf '%s\n' "kinst-dkms_${v}_all.deb" "kinstctl-dbgsym_${v}_amd64.deb" \
	    "kinstctl_${v}_amd64.deb" | sort >debs.expected
	cmp -s debs.txt debs.expected ||
	    { diff debs.expected debs.txt; atf_fail "dpkg-buildpackage did not make the expected .deb files"; }
	dkms_deb=$PWD/pkgs/kinst-dkms_${v}_all.deb
	ctl_deb=$PWD/pkgs/kinstctl_${v}_amd64.deb

	# 2. What each package holds.
	doc=/usr/share/doc
	printf '%s\n' /usr/sbin/kinstctl /usr/share/man/man4/kinst.4.gz \
	    /usr/share/man/man8/kinstctl.8.gz $doc/kinstctl/README.md \
	    $doc/kinstctl/decoder.md $doc/kinstctl/engine.md \
	    $doc/kinstctl/freebsd.md $doc/kinstctl/json.md \
	    $doc/kinstctl/changelog $doc/kinstctl/copyright >kinstctl.list
	pkg_expect_files kinstctl "$ctl_deb" kinstctl.list
	# The module's sources: every .c and .h of common/ (its ISA folder
	# too) and kmod/linux/ in the tree, beside the build files and dkms.conf.
	src=/usr/src/kinst-$v
	{
		printf '%s\n' $src/dkms.conf $src/VERSION $src/kmod/linux/Kbuild \
		    $src/kmod/linux/Makefile $doc/kinst-dkms/README.md \
		    $doc/kinst-dkms/changelog $doc/kinst-dkms/copyright
		(cd "pkgs/kinst-$v" && ls common/*.c common/*.h common/x86/*.c \
		    common/x86/*.h common/sources.mk kmod/linux/*.c kmod/linux/*.h) |
		    sed "s|^|$src/|"
	} >kinst-dkms.list
	pkg_expect_files kinst-dkms "$dkms_deb" kinst-dkms.list
	dpkg-deb --fsys-tarfile "$dkms_deb" | tar -xOf - ".$src/dkms.conf" >dkms.conf ||
	    atf_fail "cannot read dkms.conf from $dkms_deb"
	for l in 'PACKAGE_NAME="kinst"' "PACKAGE_VERSION=\"$v\"" \
	    'BUILT_MODULE_NAME[0]="kinst"' 'AUTOINSTALL="yes"'; do
		grep -qxF "$l" dkms.conf || { cat dkms.conf; atf_fail "the packaged dkms.conf lacks $l"; }
	done

	# 3. lintian: no error; warnings are listed (informational).
	# Exit 1 is lintian's own failure, 2 an error tag (--fail-on error).
	lst=0
	lintian --fail-on error --tag-display-limit 0 \
	    "pkgs/kinst_${v}_amd64.changes" >lintian.txt 2>&1 || lst=$?
	echo "--- lintian (exit $lst; warnings are informational)"
	cat lintian.txt
	n=$(grep -c '^E: ' lintian.txt || true)
	[ "$lst" != 1 ] || atf_fail "lintian failed to run"
	[ "$n" -eq 0 ] && [ "$lst" = 0 ] || atf_fail "lintian reports $n errors (exit $lst)"
	t2=$(date +%s)
	echo "lintian: $((t2 - t1)) s (informational)"

	# 4. Install both; the cleanup purges them from here on.
	touch installed
	dpkg -i "$dkms_deb" "$ctl_deb" >dpkg-i.log 2>&1 ||
	    { cat dpkg-i.log; atf_fail "dpkg -i of the packages failed"; }
	cat dpkg-i.log
	[ -f "$src/dkms.conf" ] || atf_fail "no $src/dkms.conf after installing kinst-dkms"
	dkms status -m kinst -v "$v" | grep -q . ||
	    atf_fail "kinst $v is not in DKMS after installing kinst-dkms"

	# 5. A kernel's installation runs /etc/kernel/postinst.d/dkms, which
	# builds and installs every AUTOINSTALL module for it: do as it does
	# for Debian's kernel (its headers are /lib/modules/$kver/build).
	# The package's postinst may have built it for $kver already (it builds
	# for the running and the newest kernels, or for every one when the
	# running kernel is not in /lib/modules): forget that build first.
	ko=/lib/modules/$kver/updates/dkms/kinst.ko
	dkms unbuild -m kinst -v "$v" -k "$kver" >dkms-unbuild.log 2>&1 || true
	case $(dkms status -m kinst -v "$v" -k "$kver") in
	*": added"*) ;;
	*) cat dkms-unbuild.log; atf_fail "dkms unbuild -k $kver left: $(dkms status -m kinst)" ;;
	esac
	[ ! -e "$ko" ] || atf_fail "$ko is still there after dkms unbuild"
	hook=/etc/kernel/postinst.d/dkms
	[ -x "$hook" ] || atf_fail "$hook is missing: is dkms installed?"
	"$hook" "$kver" >dkms-hook.log 2>&1 || true
	cat dkms-hook.log
	st=$(dkms status -m kinst -v "$v" -k "$kver")
	echo "dkms status: $st"
	case $st in
	*": installed"*) ;;
	*)	cat /var/lib/dkms/kinst/"$v"/build/make.log 2>/dev/null | tail -n 40
		atf_fail "DKMS did not build and install kinst $v for $kver (AUTOINSTALL)" ;;
	esac
	[ -f "$ko" ] || { find "/lib/modules/$kver" -name 'kinst.ko*'; atf_fail "no $ko after DKMS's install"; }
	got=$(modinfo -F version "$ko")
	[ "$got" = "$v" ] || atf_fail "DKMS's kinst.ko says version '$got', VERSION says $v"
	got=$(modinfo -F vermagic "$ko" | cut -d' ' -f1)
	[ "$got" = "$kver" ] || atf_fail "DKMS's kinst.ko is for '$got', not $kver"
	t3=$(date +%s)
	echo "install + DKMS build: $((t3 - t2)) s (informational)"

	# 6. kinstctl from the package.
	out=$(/usr/sbin/kinstctl --version) || atf_fail "/usr/sbin/kinstctl --version failed"
	case $out in
	"kinstctl $v "*) echo "installed kinstctl: $out" ;;
	*) atf_fail "the installed kinstctl --version says '$out'" ;;
	esac
	m=$(man -w kinstctl) || atf_fail "man -w kinstctl finds no page"
	[ "$m" = /usr/share/man/man8/kinstctl.8.gz ] || atf_fail "man -w kinstctl: $m"
	m=$(man -w 4 kinst) || atf_fail "man -w 4 kinst finds no page"
	[ "$m" = /usr/share/man/man4/kinst.4.gz ] || atf_fail "man -w 4 kinst: $m"
	man -l "$m" >/dev/null 2>&1 || atf_fail "man cannot format $m"

	# 7. DKMS's kinst.ko and the package's kinstctl in the guest: the
	# module says its version, and trace_syscall_entry traces.
	cat >guest.sh <<'EOF'
#!/bin/sh
v=$1
got=$(cat /sys/module/kinst/version 2>/dev/null)
[ "$got" = "$v" ] || { echo "FAIL: /sys/module/kinst/version is '$got', not $v"; exit 1; }
echo "kinst $got loaded"
kinstctl --version
exec sh /kinst/scripts/trace_syscall_entry.sh
EOF
	vm_run --require-module --module "$ko" --kinstctl /usr/sbin/kinstctl \
	    -t 360 guest.sh "$v"
	vm_expect_status 0
	vm_expect_out "^kinst $v loaded"
	vm_expect_out "^kinstctl $v "
	t4=$(date +%s)
	echo "guest: $((t4 - t3)) s (informational)"

	# 8. Purge: the module goes from every kernel, the sources from /usr/src.
	dpkg --purge kinst-dkms kinstctl >purge.log 2>&1 ||
	    { cat purge.log; atf_fail "dpkg --purge failed"; }
	cat purge.log
	rm -f installed
	[ ! -e "$ko" ] || atf_fail "$ko is still there after purging kinst-dkms"
	[ -z "$(find /lib/modules -name 'kinst.ko*' 2>/dev/null)" ] ||
	    atf_fail "a kinst.ko is left under /lib/modules: $(find /lib/modules -name 'kinst.ko*')"
	[ ! -e "$src" ] || atf_fail "$src is still there after purging kinst-dkms"
	[ -z "$(dkms status -m kinst)" ] || atf_fail "DKMS still knows kinst: $(dkms status -m kinst)"
	[ ! -e /usr/sbin/kinstctl ] || atf_fail "/usr/sbin/kinstctl is still there after purging kinstctl"
	echo "total: $(( $(date +%s) - t0 )) s (informational)"
}
deb_cleanup() {
	if [ -f installed ]; then
		echo "cleanup: purging kinst-dkms and kinstctl"
		dpkg --purge kinst-dkms kinstctl >/dev/null 2>&1 ||
		    echo "cleanup: WARNING: dpkg --purge kinst-dkms kinstctl failed" >&2
	fi
	# DKMS's signing key, if this test made it.
	if [ -f dkms-keys.new ]; then
		while read -r f; do
			rm -f "$f"
		done <dkms-keys.new
	fi
	# What DKMS and depmod added under /lib/modules/KVER, deepest first.
	if [ -f kver ] && [ -f lib-modules.before ]; then
		kver=$(cat kver)
		find "/lib/modules/$kver" -mindepth 1 | sort -r | while read -r f; do
			grep -qxF "$f" lib-modules.before && continue
			if [ -d "$f" ] && [ ! -L "$f" ]; then
				rmdir "$f" 2>/dev/null || true
			else
				rm -f "$f"
			fi
		done
	fi
}

atf_init_test_cases() {
	atf_add_test_case version_one_source
	atf_add_test_case demo_root
	atf_add_test_case freebsd_port
	atf_add_test_case make_install
	atf_add_test_case deb
}
