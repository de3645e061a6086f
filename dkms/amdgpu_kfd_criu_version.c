// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/*
 * DOC: version of the out-of-tree build
 *
 * Linked into amdgpu.ko only by the external-module build (make module,
 * DKMS), never by the series itself. The version tells an operator which
 * amdgpu is loaded ("modinfo amdgpu", /sys/module/amdgpu/version), and it
 * makes DKMS install the module: without one, DKMS finds it "exactly
 * matches" the distribution's amdgpu, which has no version either, and
 * installs nothing.
 */

#include <linux/module.h>

MODULE_VERSION("@VERSION@");
