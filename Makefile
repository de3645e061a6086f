# SPDX-License-Identifier: GPL-2.0
#
# amdkfd-criu: checkpoint/restore for AMD GPU compute processes.
# "make demo" and "make check" are all a newcomer needs; see README.md.

SHELL := /bin/bash
TOP := $(CURDIR)
BUILD := $(TOP)/build

.PHONY: help deps tree kernel test-programs initramfs check check-host \
	demo bench vm clean distclean

help:
	@echo "make demo        build everything, boot the VM, show checkpoint/restore"
	@echo "make check       run every test tier (host, kunit, selftests, e2e)"
	@echo "make check-host  only the host tier (no kernel build, no VM)"
	@echo "make kernel      prepare build/linux and build the test kernel"
	@echo "make bench       dump+restore time and CRIU peak RSS, with and without KFD"
	@echo "make vm          interactive shell in the test VM"
	@echo "make clean       remove build outputs but keep the unpacked tree"
	@echo "make distclean   remove build/ entirely"

deps:
	@scripts/install-deps.sh

tree: deps
	@scripts/prepare-tree.sh

kernel: deps
	@scripts/build-kernel.sh

test-programs: kernel
	@$(MAKE) -s -C selftests KSRC=$(BUILD)/linux KHDR=$(BUILD)/headers O=$(BUILD)/selftests
	@$(MAKE) -s -C e2e KHDR=$(BUILD)/headers O=$(BUILD)/e2e
	@$(MAKE) -s -C plugin KHDR=$(BUILD)/headers O=$(BUILD)/plugin

initramfs: test-programs
	@scripts/build-initramfs.sh

check:
	@scripts/check.sh

check-host:
	@scripts/check.sh --no-vm

demo: initramfs
	@scripts/run-vm.sh --mode demo --timeout 900

bench: initramfs
	@scripts/run-vm.sh --mode bench --timeout 1800

vm: initramfs
	@scripts/run-vm.sh --mode shell --timeout 86400

clean:
	rm -rf $(BUILD)/selftests $(BUILD)/e2e $(BUILD)/vm $(BUILD)/host.tap
	$(MAKE) -C host clean 2>/dev/null || true
	[ ! -d $(BUILD)/linux ] || $(MAKE) -C $(BUILD)/linux -s clean

distclean:
	rm -rf $(BUILD)
