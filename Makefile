# SPDX-License-Identifier: GPL-2.0
#
# amdkfd-criu: checkpoint/restore for AMD GPU compute processes.
# "make demo" and "make check" are all a newcomer needs; see README.md.

SHELL := /bin/bash
TOP := $(CURDIR)
BUILD := $(TOP)/build
# The reroll count of the exported series (git format-patch -v)
SERIES_VERSION ?= 4

.PHONY: help deps tree kernel headers test-programs initramfs check check-host coverage \
	demo bench bench-codec vm clean distclean fuzz mutate kfdcrit install \
	module dkms-install dkms-remove dkms-status vm-distro selftests

help:
	@echo "make demo        build everything, boot the VM, show checkpoint/restore"
	@echo "make check       run every test tier (host, kunit, selftests, e2e, distro)"
	@echo "make check-host  only the host tier (no kernel build, no VM)"
	@echo "make module      build our amdgpu.ko for an installed 6.12 kernel (KVER=, KDIR=)"
	@echo "make dkms-install  build and install it with DKMS (KVER=, SYSROOT=); dkms-remove, dkms-status"
	@echo "make vm-distro   interactive shell on Debian's stock kernel with our module"
	@echo "make selftests   build the kselftests only (to run them on a GPU machine)"
	@echo "make kernel      prepare build/linux and build the test kernel"
	@echo "make bench       dump+restore time and CRIU peak RSS, with and without KFD"
	@echo "make bench-codec the image codec's throughput on BO contents against memcpy (host)"
	@echo "make coverage    what the debug VM executes of our kernel code, per file (build/coverage)"
	@echo "make vm          interactive shell in the test VM"
	@echo "                 (demo, bench, vm: V=1 shows the kernel log on the terminal)"
	@echo "make fuzz        fuzz the image codec (FUZZ_SECONDS=600, FUZZ_MERGE=1 to grow fuzz/corpus)"
	@echo "make mutate      mutation campaign through RESTORE in the VM (N=10000 SEED=1 GPU_N=200)"
	@echo "make kfdcrit     build the image tool, build/kfdcrit/kfdcrit (see kfdcrit/)"
	@echo "make install     install kfdcrit and its manual (PREFIX=/usr, DESTDIR=)"
	@echo "make series      export the patch series to build/series (git format-patch)"
	@echo "make series-check  git am, build every patch, checkpatch, W=1, sparse, clang, docs"
	@echo "make checkpatch  checkpatch --strict and kernel-doc on kernel/ and patches/ (the 7.3 series)"
	@echo "make clean       remove build outputs but keep the unpacked tree"
	@echo "make distclean   remove build/ entirely"

deps:
	@scripts/install-deps.sh

tree: deps
	@scripts/prepare-tree.sh

kernel: deps
	@scripts/build-kernel.sh

# The prepared tree, its config and the uAPI headers, without a build
headers: deps
	@scripts/build-kernel.sh --prepare

test-programs: headers
	@$(MAKE) -s -C selftests KSRC=$(BUILD)/linux KHDR=$(BUILD)/headers O=$(BUILD)/selftests
	@$(MAKE) -s -C e2e KHDR=$(BUILD)/headers O=$(BUILD)/e2e
	@$(MAKE) -s -C plugin KHDR=$(BUILD)/headers O=$(BUILD)/plugin
	@$(MAKE) -s -C kfdcrit KSRC=$(BUILD)/linux O=$(BUILD)/kfdcrit static

initramfs: test-programs
	@scripts/build-initramfs.sh

check:
	@scripts/check.sh

check-host:
	@scripts/check.sh --no-vm

# Our amdgpu as an external module for an installed Debian 6.12 kernel
# (README, "Use it on your machine"). KVER, KDIR and SYSROOT are read
# from the environment or the command line by scripts/module.sh.
module:
	@scripts/install-deps.sh --module
	@scripts/module.sh build

dkms-install:
	@scripts/install-deps.sh --module
	@scripts/module.sh dkms-install

dkms-remove:
	@scripts/module.sh dkms-remove

dkms-status:
	@scripts/module.sh dkms-status

# The kselftests alone, for a machine with a GPU and our module: needs
# only the prepared tree's uAPI headers, no kernel build.
selftests:
	@scripts/install-deps.sh --module
	@scripts/build-kernel.sh --prepare
	@$(MAKE) -s -C selftests KSRC=$(BUILD)/linux KHDR=$(BUILD)/headers O=$(BUILD)/selftests
	@echo "selftests: $(BUILD)/selftests/drivers/gpu/amdkfd/ (README, \"Use it on your machine\")"

# The test programs, not the debug kernel
vm-distro: test-programs
	@scripts/distro.sh --initramfs-only
	@scripts/run-vm.sh --distro --mode shell --timeout 86400

# The times are this project's 2-core machines (README, "Measured times").
demo:
	@echo "make demo: a first run fetches the kernel source and builds the test kernel,"
	@echo "  about 13 min with an empty cache; later runs take about 2 min."
	@$(MAKE) --no-print-directory kernel initramfs
	@scripts/run-vm.sh --mode demo --timeout 900

bench: kernel initramfs
	@scripts/run-vm.sh --mode bench --timeout 1800

# The codec built in userspace, on this machine: no kernel build, no VM
bench-codec: tree
	@$(MAKE) -s -C host KSRC=$(BUILD)/linux bench

# What the debug VM's run executes of our kernel code, per file
coverage:
	@scripts/check.sh --coverage

vm: kernel initramfs
	@scripts/run-vm.sh --mode shell --timeout 86400

# Hostile input (README): the codec fuzzer on the host, the mutation
# campaign through the kernel's RESTORE in the VM. "make check" runs a
# bounded version of each.
FUZZ_SECONDS ?= 600
FUZZ_MERGE ?= 0
N ?= 10000
SEED ?= 1
GPU_N ?= 200

fuzz: tree
	@$(MAKE) -s -C fuzz KSRC=$(BUILD)/linux O=$(BUILD)/fuzz \
		FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_MERGE=$(FUZZ_MERGE) fuzz

mutate: deps
	@scripts/mutate.sh --images $(N) --seed $(SEED) --gpu-images $(GPU_N)

# The image tool, built from the kernel's codec (kfdcrit/, kfdcrit(1))
PREFIX ?= /usr
DESTDIR ?=

kfdcrit: tree
	@$(MAKE) -s -C kfdcrit KSRC=$(BUILD)/linux O=$(BUILD)/kfdcrit

install: kfdcrit
	@$(MAKE) -s -C kfdcrit KSRC=$(BUILD)/linux O=$(BUILD)/kfdcrit \
		PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) install

clean:
	rm -rf $(BUILD)/selftests $(BUILD)/e2e $(BUILD)/vm $(BUILD)/host.tap \
		$(BUILD)/plugin-check $(BUILD)/kfdcrit $(BUILD)/module \
		$(BUILD)/distro/vm
	$(MAKE) -C host clean 2>/dev/null || true
	[ ! -d $(BUILD)/linux ] || $(MAKE) -C $(BUILD)/linux -s clean

distclean:
	rm -rf $(BUILD)

# --- patch series (issue 7): export and check what maintainers receive ---
.PHONY: series series-check checkpatch

series: deps
	@scripts/make-series.sh -v $(SERIES_VERSION)

series-check: series
	@scripts/series-check.sh

checkpatch:
	@scripts/checkpatch.sh
# --- end patch series ---
