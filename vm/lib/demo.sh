# SPDX-License-Identifier: GPL-2.0
#
# "make demo", guest side: show, in plain words, a process with KFD state
# being checkpointed and restored. Runs on the console.

say() { printf '\n==> %s\n' "$*"; }

say "This is a QEMU VM running the patched 6.12 kernel: $(uname -r)"
say "The amdkfd driver is built in. There is no AMD GPU here, but /dev/kfd exists:"
ls -l /dev/kfd
if [ -x /opt/kfd-criu/e2e/kfd_criu_demo ]; then
	say "A test program opens /dev/kfd, creates events, signals some and writes"
	say "into its event page. The kernel checkpoints it into one image stream,"
	say "the program is killed, and a fresh process restores from the image."
	/opt/kfd-criu/e2e/kfd_criu_demo /tmp/demo.img
	rc=$?
	if [ $rc -eq 0 ]; then
		say "Demo finished: the restored process has the same KFD state."
	else
		say "Demo FAILED (exit status $rc)."
	fi
else
	say "Image-mode checkpoint/restore is not built into this tree yet."
fi
say "CRIU is installed: $(criu --version | head -n1)"
criu check 2>&1 | tail -n 1
