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
 binutils-aarch64-linux-gnu gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user"

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

kinst_build() {
	cmake -S "$top" -B "$KINST_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build "$KINST_BUILD" -j"$(nproc)"
}
