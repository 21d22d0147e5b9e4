# SPDX-License-Identifier: BSD-2-Clause
# Shared settings for tests/setup, tests/run and the guest harness.
# Sourced, not executed.  Expects $top (the source tree).

KINST_BUILD=${KINST_BUILD:-$top/build}
KINST_CACHE=${KINST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kinst}

# Everything the build, the tests and the guest need, from Debian 12
# (the last line: the packaging and its test, tests/pkg).
KINST_DEBIAN_PACKAGES="build-essential cmake pkg-config git ca-certificates \
 libcapstone-dev libelf-dev libdw-dev zlib1g-dev libcli11-dev nlohmann-json3-dev libbpf-dev \
 kyua atf-sh libatf-dev clang libclang-rt-14-dev llvm binutils jq cpio gzip python3 linux-perf \
 busybox-static qemu-system-x86 linux-headers-amd64 kmod xz-utils \
 dpkg-dev debhelper dh-dkms dkms fakeroot lintian man-db bmake \
 binutils-aarch64-linux-gnu gcc-aarch64-linux-gnu g++-aarch64-linux-gnu \
 libc6-dev-arm64-cross qemu-user qemu-system-arm"

# The browser the HTML checks render kinstctl's pages in (cover --html,
# hist/latency --html: tests/vm/browser.py).  Installed on its own: when it
# cannot be, those checks say so and are skipped (tests/run --strict then
# fails the run).
KINST_BROWSER_PACKAGES="chromium fonts-dejavu-core"

export KINST_BUILD KINST_CACHE

# Debian's kernel: the linux-image package that linux-image-amd64 points
# at, extracted (never installed) under $KINST_CACHE/kernel/.
kinst_kernel_pkg() {
	apt-cache depends linux-image-amd64 2>/dev/null |
	    sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -n 1
}

kinst_fetch_kernel() {
	pkg=$(kinst_kernel_pkg)
	if [ -z "$pkg" ]; then
		echo "kinst: cannot tell which linux-image package linux-image-amd64 means (apt-get update?)" >&2
		return 1
	fi
	dir=$KINST_CACHE/kernel
	if [ -f "$dir/.$pkg.done" ]; then
		return 0
	fi
	kinst_extract_pkg "$pkg" "$pkg" "$dir"
}

# kinst_extract_pkg NAME SPEC DIR: apt-get download SPEC (NAME, or
# NAME:ARCH), extract it into DIR/root (replacing what was there) and mark
# DIR/.NAME.done.
kinst_extract_pkg() {
	echo "kinst: fetching $2 into $3" >&2
	rm -rf "$3"
	mkdir -p "$3/root"
	(cd "$3" && apt-get download "$2" >/dev/null 2>&1) || {
		echo "kinst: apt-get download $2 failed" >&2
		return 1
	}
	dpkg-deb -x "$3"/"$1"_*.deb "$3/root"
	rm -f "$3"/"$1"_*.deb
	touch "$3/.$1.done"
}

# Debian's arm64 kernel package, the same release as the amd64 one
# (issue 44: the A64 classifier's corpus, tests/decoder/a64_corpus_test),
# downloaded by name and extracted into $KINST_CACHE/kernel-arm64/root,
# never installed.  apt needs the foreign architecture for that: added
# (as root) if it is missing, which makes apt-get update read arm64's
# package lists too.
kinst_fetch_kernel_arm64() {
	pkg=$(kinst_kernel_pkg)
	pkg=${pkg%-amd64}-arm64
	dir=$KINST_CACHE/kernel-arm64
	if [ "$pkg" = -arm64 ]; then
		echo "kinst: cannot tell which linux-image package linux-image-amd64 means (apt-get update?)" >&2
		return 1
	fi
	if [ -f "$dir/.$pkg.done" ]; then
		return 0
	fi
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		if [ "$(id -u)" != 0 ]; then
			echo "kinst: dpkg has no arm64 architecture (dpkg --add-architecture arm64 && apt-get update, as root)" >&2
			return 1
		fi
		dpkg --add-architecture arm64
		apt-get update -qq
	fi
	kinst_extract_pkg "$pkg" "$pkg:arm64" "$dir"
}

# The rest of the arm64 guest (issue 44), next to the kernel: the headers
# package of the same release, extracted into $KINST_CACHE/headers-arm64
# (kinst.ko is cross-built against it; its scripts/ and tools/ links are
# pointed at the host's linux-kbuild, whose programs run here, instead of
# the package's arm64 ones), and busybox-static:arm64 into
# $KINST_CACHE/busybox-arm64 (the guest's userland).
kinst_fetch_arm64_guest() {
	kinst_fetch_kernel_arm64 || return 1
	pkg=$(kinst_kernel_pkg)
	hdr=linux-headers-${pkg#linux-image-}
	hdr=${hdr%-amd64}-arm64
	dir=$KINST_CACHE/headers-arm64
	if [ ! -f "$dir/.$hdr.done" ]; then
		kinst_extract_pkg "$hdr" "$hdr:arm64" "$dir" || return 1
		src=$(ls -d "$dir"/root/usr/src/linux-headers-*-arm64 2>/dev/null | head -n 1)
		# ../../lib/linux-kbuild-V/scripts in the package: the host's.
		kbuild=/usr/lib/$(basename "$(dirname "$(readlink "$src/scripts" 2>/dev/null)")")
		[ -n "$src" ] && [ -d "$kbuild/scripts" ] &&
		    ln -sfn "$kbuild/scripts" "$src/scripts" &&
		    ln -sfn "$kbuild/tools" "$src/tools" || {
			echo "kinst: $hdr: no headers, or no host $kbuild (linux-kbuild, which linux-headers-amd64 brings)" >&2
			rm -f "$dir/.$hdr.done"
			return 1
		}
	fi
	dir=$KINST_CACHE/busybox-arm64
	if [ ! -f "$dir/.busybox-static.done" ]; then
		kinst_extract_pkg busybox-static busybox-static:arm64 "$dir" || return 1
	fi
	kinst_fetch_arm64_libs
}

# What kinstctl is cross-built for the arm64 guest with
# (cli/aarch64-linux-gnu.cmake): Debian's arm64 -dev packages of its
# libraries, with their static archives, and the header-only ones,
# extracted together into $KINST_CACHE/arm64-sysroot/root, never installed.
KINST_ARM64_LIB_PACKAGES="libcapstone-dev:arm64 libelf-dev:arm64 libdw-dev:arm64 \
 libbpf-dev:arm64 zlib1g-dev:arm64 liblzma-dev:arm64 libbz2-dev:arm64 \
 libzstd-dev:arm64 libcli11-dev nlohmann-json3-dev"
kinst_fetch_arm64_libs() {
	dir=$KINST_CACHE/arm64-sysroot
	stamp=$dir/.$(echo "$KINST_ARM64_LIB_PACKAGES" | cksum | cut -d' ' -f1).done
	[ -f "$stamp" ] && return 0
	echo "kinst: fetching kinstctl's arm64 libraries into $dir" >&2
	rm -rf "$dir"
	mkdir -p "$dir/root"
	# shellcheck disable=SC2086
	(cd "$dir" && apt-get download $KINST_ARM64_LIB_PACKAGES >/dev/null 2>&1) || {
		echo "kinst: apt-get download $KINST_ARM64_LIB_PACKAGES failed" >&2
		return 1
	}
	for deb in "$dir"/*.deb; do
		dpkg-deb -x "$deb" "$dir/root" || return 1
	done
	rm -f "$dir"/*.deb
	touch "$stamp"
}

# The arm64 headers' directory (KDIR), empty when not fetched.
kinst_arm64_kdir() {
	ls -d "$KINST_CACHE"/headers-arm64/root/usr/src/linux-headers-*-arm64 2>/dev/null | head -n 1
}

kinst_build() {
	cmake -S "$top" -B "$KINST_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build "$KINST_BUILD" -j"$(nproc)"
}
