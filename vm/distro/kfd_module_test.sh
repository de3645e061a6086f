#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The distro lane's own check, the first program of the lane: the guest
# runs Debian's stock kernel, and /dev/kfd comes from our
# amdgpu module, built by DKMS and loaded by /init with the stock modules
# it depends on. The build writes the expected kernel release and module
# version to /etc/kfd-criu/.

CONF=/etc/kfd-criu
n=0
failed=0

# check WHAT CMD...: one TAP result, CMD's output below it as comments.
check() {
	local what=$1 out

	shift
	n=$((n + 1))
	if out=$("$@" 2>&1); then
		echo "ok $n - $what"
	else
		echo "not ok $n - $what"
		failed=1
	fi
	[ -z "$out" ] || echo "$out" | sed 's/^/# /'
}

is_loaded() {
	grep -q "^$1 " /proc/modules
}

# every_listed_module_loaded: /init loaded all it was given.
every_listed_module_loaded() {
	local m name

	while read -r m; do
		name=$(basename "$m" .ko | tr - _)
		is_loaded "$name" || { echo "# not loaded: $name"; return 1; }
	done < "$CONF/modules"
}

is_stock_kernel() {
	cat /proc/version
	[ "$(uname -r)" = "$(cat "$CONF/kernel-release")" ] &&
		grep -q 'Debian' /proc/version
}

is_our_module() {
	echo "loaded amdgpu: version $(cat /sys/module/amdgpu/version 2>&1)"
	[ "$(cat /sys/module/amdgpu/version)" = "$(cat "$CONF/module-version")" ]
}

# Out of tree (O); loaded from a file, not built in (initstate).
is_external_module() {
	echo "taint $(cat /sys/module/amdgpu/taint 2>&1), $(cat /sys/module/amdgpu/initstate 2>&1)"
	grep -q O /sys/module/amdgpu/taint &&
		[ "$(cat /sys/module/amdgpu/initstate)" = live ]
}

kfd_device_is_up() {
	local major

	major=$(sed -n 's/^ *\([0-9]*\) kfd$/\1/p' /proc/devices)
	ls -l /dev/kfd
	[ -c /dev/kfd ] && [ -n "$major" ] &&
		[ "$(stat -c %t /dev/kfd)" = "$(printf %x "$major")" ]
}

echo "1..5"
check "the stock kernel $(cat "$CONF/kernel-release") runs" is_stock_kernel
check "every module in $CONF/modules is loaded" every_listed_module_loaded
check "amdgpu is ours, version $(cat "$CONF/module-version")" is_our_module
check "amdgpu is a loaded out-of-tree module" is_external_module
check "/dev/kfd is up, from the module" kfd_device_is_up
lsmod | sed 's/^/# /'
exit "$failed"
