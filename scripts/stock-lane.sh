# SPDX-License-Identifier: GPL-2.0
#
# What the two stock-kernel lanes share (scripts/distro.sh: Debian 12;
# scripts/debian13.sh: Debian 13): the key that decides when DKMS builds
# our amdgpu again, the check of its build log, and the copy of the
# modules the guest loads into its initramfs. Sourced after common.sh;
# each lane says where its root is and how its modprobe resolves.

# stock_module_key SYSROOT KVER FILE...: a digest of the staged module
# sources (the KUnit tests are not in the module: the stock kernel does
# not build them) and of FILE..., the scripts and stamps that decide how
# it is built. The staged sources go to build/dkms-src-KVER: the two
# lanes build at the same time, and a directory both staged into was
# changing under the other's digest (a file write_if_changed() had just
# renamed made sha256sum, and so the lane, fail).
stock_module_key() {
	local root=$1 kver=$2 dir=$BUILD_DIR/dkms-src-$2 cfg

	shift 2
	cfg=$root/boot/config-$kver
	"$TOP/scripts/module.sh" stage "$dir"
	[ -f "$cfg" ] || die "no stock kernel configuration at $cfg"
	! grep -q '^CONFIG_HSA_AMD_CRIU_KUNIT_TEST=' "$cfg" ||
		die "the stock kernel builds our KUnit tests: the module key must cover them"
	{
		cat "$@" "$TOP/scripts/module.sh" "$TOP/scripts/common.sh" \
			"$TOP/scripts/stock-lane.sh"
		(cd "$dir" && find . -type f -not -path '*/amdkfd/tests/*' -print0 |
		 LC_ALL=C sort -z | xargs -0 sha256sum)
	} | sha256sum | cut -d' ' -f1
}

# stock_check_build_log SYSROOT KVER: DKMS's build against the stock
# headers and configuration was clean: no compiler warning, and modpost
# found every symbol the module uses exported by the stock kernel.
stock_check_build_log() {
	local log

	log=$1/var/lib/dkms/$MODULE_PKG/$MODULE_PKG_VERSION/$2/x86_64/log/make.log
	[ -f "$log" ] || die "no DKMS build log at $log"
	if grep -v '^  [A-Z]' "$log" | grep -iE 'warning|undefined|error' >&2; then
		die "the DKMS build printed the warnings above ($log)"
	fi
	log "DKMS build: no warnings, every symbol resolved ($(grep -c 'CC \[M\]' "$log") objects)"
}

# stock_add_modules INITRAMFS SYSROOT KVER MODULES: uncompressed copies
# of MODULES (paths inside SYSROOT, one per line, in load order) under
# INITRAMFS/lib/modules/KVER, and the list /init loads them from. The
# list must hold DKMS's amdgpu, not the stock one.
stock_add_modules() {
	local root=$1 sysroot=$2 dir=/lib/modules/$3 mods=$4 f name

	case "$mods" in
	*/updates/dkms/amdgpu.ko*) ;;
	*) die "the modules to load do not include DKMS's amdgpu: $mods" ;;
	esac
	mkdir -p "$root$dir" "$root/etc/kfd-criu"
	: > "$root/etc/kfd-criu/modules"
	for f in $mods; do
		f=${f#"$sysroot"}
		name=$(basename "$f")
		case "$name" in
		*.xz) xz -dc "$sysroot$f" > "$root$dir/${name%.xz}"; name=${name%.xz} ;;
		*) cp "$sysroot$f" "$root$dir/$name" ;;
		esac
		echo "$dir/$name" >> "$root/etc/kfd-criu/modules"
	done
}
