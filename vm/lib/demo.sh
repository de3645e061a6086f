# SPDX-License-Identifier: GPL-2.0
#
# "make demo", guest side: a process with KFD state is checkpointed by
# CRIU, killed, restored, and carries on. Runs on the console.

DEMO=/tmp/demo
BIN=/opt/kfd-criu/e2e

# say LINE...: one step of the story, continuation lines indented.
say() {
	printf '\n==> %s\n' "$1"
	shift
	[ $# -eq 0 ] || printf '    %s\n' "$@"
}
pause() { sleep "${1:-2}"; }

show_beats() {
	tail -n "${1:-3}" "$DEMO/heartbeat.log" | sed 's/^/    | /'
}

demo_intro() {
	say "This is a QEMU VM running the patched Linux $(uname -r)."
	say "amdkfd is built in. There is no AMD GPU here, but /dev/kfd exists:"
	ls -l /dev/kfd | sed 's/^/    /'
	say "CRIU $(criu --version | sed -n 's/Version: //p') is installed, with our plugin:"
	ls -l /usr/lib/criu/*.so | sed 's/^/    /'
}

demo_start_patient() {
	mkdir -p "$DEMO/images"
	say "Starting kfd_heartbeat: its heartbeat is a KFD event that it signals" \
	    "and waits for twice a second. The event exists only in the kernel."
	setsid "$BIN/kfd_heartbeat" < /dev/null > "$DEMO/heartbeat.log" 2>&1 &
	PATIENT=$!
	pause 3
	show_beats 4
}

demo_dump() {
	say "criu dump: the plugin asks the kernel to pause the process and write" \
	    "all of its KFD state into one stream; CRIU saves the rest and kills it."
	if ! criu dump -t "$PATIENT" -D "$DEMO/images" -o dump.log -v4; then
		say "criu dump FAILED; the end of its log:"
		tail -n 20 "$DEMO/images/dump.log"
		return 1
	fi
	wait "$PATIENT" 2>/dev/null
	LAST=$(tail -n 1 "$DEMO/heartbeat.log")
	if kill -0 "$PATIENT" 2>/dev/null; then
		say "Dump FAILED: pid $PATIENT is still running."
		return 1
	fi
	say "Dumped. Pid $PATIENT is gone. Its last beat was:" "| $LAST"
	say "The kernel's stream and the plugin's metadata, beside CRIU's images:"
	ls -l "$DEMO"/images/kfdcriu-* | sed 's/^/    /'
	pause 2
}

demo_restore() {
	say "criu restore: the plugin opens /dev/kfd in the new process and the" \
	    "kernel restores the events from the stream, checking every record."
	if ! criu restore -D "$DEMO/images" -d -o restore.log -v4; then
		say "criu restore FAILED; the end of its log:"
		tail -n 20 "$DEMO/images/restore.log"
		return 1
	fi
	pause 3
	say "Restored as pid $PATIENT. The heartbeat carries on where it stopped:"
	grep -F -x -A 4 "$LAST" "$DEMO/heartbeat.log" | sed 's/^/    | /'
	if grep -q FAILED "$DEMO/heartbeat.log" || ! kill -0 "$PATIENT" 2>/dev/null; then
		say "Demo FAILED: the heartbeat stopped after restore."
		return 1
	fi
	kill -9 "$PATIENT"
	say "Demo finished: the restored process kept its KFD event and its count."
}

demo_intro
demo_start_patient && demo_dump && demo_restore
