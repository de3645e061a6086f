#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The distro lane's own check, before the selftests and e2e tests run on
# it: the guest runs Debian's stock kernel, and /dev/kfd comes from our
# amdgpu module, built by DKMS and loaded by /init with the stock modules
# it depends on. The build writes the expected kernel release and module
# version to /etc/kfd-criu/.

CONF=/etc/kfd-criu
n=0
failed=0

check() {
	n=$((n + 1))
	if [ "$1" = ok ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=1
	fi
}

result() {
	if "$@" > /dev/null 2>&1; then echo ok; else echo fail; fi
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
	[ "$(uname -r)" = "$(cat "$CONF/kernel-release")" ] &&
		grep -q 'Debian' /proc/version
}

is_our_module() {
	[ "$(cat /sys/module/amdgpu/version)" = "$(cat "$CONF/module-version")" ]
}

# Out of tree (O); loaded from a file, not built in (initstate).
is_external_module() {
	grep -q O /sys/module/amdgpu/taint &&
		[ "$(cat /sys/module/amdgpu/initstate)" = live ]
}

kfd_device_is_up() {
	local major

	major=$(sed -n 's/^ *\([0-9]*\) kfd$/\1/p' /proc/devices)
	[ -c /dev/kfd ] && [ -n "$major" ] &&
		[ "$(stat -c %t /dev/kfd)" = "$(printf %x "$major")" ]
}

echo "1..5"
echo "# kernel $(uname -r), amdgpu $(cat /sys/module/amdgpu/version 2>/dev/null)"
check "$(result is_stock_kernel)" "the stock kernel $(cat "$CONF/kernel-release") runs"
check "$(result every_listed_module_loaded)" "every module in $CONF/modules is loaded"
check "$(result is_our_module)" "amdgpu is ours, version $(cat "$CONF/module-version")"
check "$(result is_external_module)" "amdgpu is a loaded out-of-tree module"
check "$(result kfd_device_is_up)" "/dev/kfd is up, from the module"
lsmod | sed 's/^/# /'
exit "$failed"
