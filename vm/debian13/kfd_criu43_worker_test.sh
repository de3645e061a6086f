#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The e2e dump/restore cases of kfd_worker (e2e/kfd_criu_dump_restore_test.sh:
# live events, a thread blocked in a wait, --leave-running, three cycles,
# a dump that fails mid-stream, damaged images) on CRIU 4.3, whose
# RESTORE_EXT_FILE has the retry flag. The criu that runs must be 4.3,
# or the run is a failure, not a second run on 4.1.

BIN=/opt/criu-4.3/bin
want=$(sed 's/-.*//' /etc/kfd-criu/criu43-version 2>/dev/null)

if ! PATH=$BIN:$PATH criu --version 2>&1 | grep -qx "Version: ${want:-none}"; then
	echo "1..1"
	echo "not ok 1 - $BIN/criu is not Debian's CRIU ${want:-4.3}"
	PATH=$BIN:$PATH criu --version 2>&1 | sed 's/^/# /'
	exit 1
fi
PATH=$BIN:$PATH exec sh /opt/kfd-criu/e2e/kfd_criu_dump_restore_test.sh
