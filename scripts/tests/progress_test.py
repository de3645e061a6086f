#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host-tier tests of scripts/progress.py, fed made-up logs; prints TAP.

Checks what the progress line says (objects counted, the estimate, the VM
run's phases), that a display off a terminal prints a line every interval
and no more, that a failed build's excerpt is the compiler's error, and,
through the real script around fake commands, that the command's status
comes back and the logs are followed as they grow.
"""

import argparse
import importlib.util
import io
import os
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "progress.py")

spec = importlib.util.spec_from_file_location("progress", SCRIPT)
progress = importlib.util.module_from_spec(spec)
spec.loader.exec_module(progress)

TESTS = []


def case(fn):
    TESTS.append(fn)
    return fn


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


# Lines as kbuild prints them, with noise that is not an object.
KBUILD_LINES = [
    "make: Entering directory '/build/linux'",
    "  HOSTCC  scripts/basic/fixdep.o",
    "  CC      kernel/bounds.s",
    "  CC      init/main.o",
    "  AS      arch/x86/entry/entry_64.o",
    "  CC [M]  drivers/gpu/drm/amd/amdgpu/amdgpu_drv.o",
    "drivers/foo.c:12:1: warning: the frame size of 2064 bytes is larger than 2048 bytes",
    "  AR      init/built-in.a",
    "ccache gcc -Wp,-MMD,kernel/.fork.o.d -nostdinc -O2 -c -o kernel/fork.o kernel/fork.c",
    "  LD      vmlinux.o",
]


@case
def kbuild_counts_objects_only():
    state = progress.KbuildProgress(100)
    for line in KBUILD_LINES:
        state.feed(line)
    expect(state.objects == 4, f"counted {state.objects} objects, want 4 "
           "(CC, AS, CC [M] and a V=1 compile; not HOSTCC, .s, AR, LD)")
    expect(state.last_step == "LD vmlinux.o", f"last step {state.last_step!r}")


@case
def kbuild_estimates_time_left():
    state = progress.KbuildProgress(1000)
    state.objects = 250
    text = state.describe(60)
    expect(text == "250 of ~1000 objects (25%), 1m00s elapsed, about 3m00s left",
           f"got {text!r}")


@case
def kbuild_no_estimate_too_early():
    state = progress.KbuildProgress(1000)
    state.objects = 5
    text = state.describe(30)
    expect("left" not in text and "5 of ~1000" in text, f"got {text!r}")


@case
def kbuild_past_total_names_step():
    state = progress.KbuildProgress(10)
    for i in range(12):
        state.feed(f"  CC      a/b{i}.o")
    state.feed("  LD      vmlinux.o")
    text = state.describe(125)
    expect(text == "12 objects, 2m05s elapsed, now LD vmlinux.o", f"got {text!r}")


@case
def kbuild_unknown_total():
    state = progress.KbuildProgress(0)
    state.feed("  CC      a/b.o")
    text = state.describe(3)
    expect(text == "1 objects, 3s elapsed", f"got {text!r}")


@case
def failure_excerpt_is_compiler_error():
    log = [f"  CC      drivers/x{i}.o" for i in range(50)] + [
        "drivers/noise.c:1:1: warning: frame size",
        "drivers/gpu/drm/amd/amdkfd/kfd_criu.c: In function 'kfd_criu_resume':",
        "drivers/gpu/drm/amd/amdkfd/kfd_criu.c:10:2: error: expected ';' before '}' token",
        "   10 |  return 0",
        "      |          ^",
        "  CC      drivers/y.o",
        "make[5]: *** [scripts/Makefile.build:229: drivers/gpu/drm/amd/amdkfd/kfd_criu.o] Error 1",
        "make: *** [Makefile:224: __sub-make] Error 2",
    ]
    got = progress.failure_excerpt(log)
    expect(got[0].endswith("In function 'kfd_criu_resume':"), f"starts {got[:1]}")
    expect(any("error: expected ';'" in l for l in got), "no compiler error")
    expect(got[-1].startswith("make: ***"), f"ends {got[-1:]}")
    expect(not any(l.startswith("  CC ") for l in got), "kbuild lines kept")
    expect(not any("warning" in l for l in got), "warning before the error kept")


@case
def failure_excerpt_without_error_is_tail():
    log = [f"line {i}" for i in range(100)]
    got = progress.failure_excerpt(log, limit=5)
    expect(got == [f"line {i}" for i in range(95, 100)], f"got {got}")


CONSOLE = [
    "[    0.000000] Linux version 6.12.57 (amdkfd-criu@build)",
    "[   20.100000] KTAP version 1",
    "[   20.100001] 1..3",
    "[   20.100002]     KTAP version 1",
    "[   20.100003]     # Subtest: kfd_criu_image",
    "[   20.100004]     1..2",
    "[   20.200000]     ok 1 header",
    "[   20.300000]     ok 2 events",
    "[   20.300001] ok 1 kfd_criu_image",
    "[   20.400000]     # Subtest: kfd_criu_events",
]


@case
def vm_phases_from_console():
    state = progress.VmProgress()
    expect(state.phase() == "starting QEMU", state.phase())
    state.feed_console(CONSOLE[0])
    expect(state.phase() == "booting the kernel", state.phase())
    for line in CONSOLE[1:]:
        state.feed_console(line)
    want = "KUnit at boot: 1 of 3 suites done, running kfd_criu_events"
    expect(state.phase() == want, f"got {state.phase()!r}")


@case
def vm_phases_from_results():
    state = progress.VmProgress()
    for line in CONSOLE:
        state.feed_console(line)
    for line in ["### progress plan 4",
                 "### progress start e2e kfd_criu_dump_restore_test.sh",
                 "### progress start e2e kfd_mutate_test",
                 "### progress end e2e kfd_criu_dump_restore_test.sh 0",
                 "### progress start selftests kfd_criu_bo_test",
                 "### progress end selftests kfd_criu_bo_test 4",
                 "### progress start e2e kfd_faults_test",
                 "### progress end e2e kfd_faults_test 1",
                 "### progress start selftests kfd_criu_event_test"]:
        state.feed_results(line + "\r")
    want = ("3 of 4 test programs done (1 failed: e2e/kfd_faults_test), running "
            "e2e/kfd_mutate_test, selftests/kfd_criu_event_test")
    expect(state.phase() == want, f"got {state.phase()!r}")
    state.feed_results("### begin")
    expect(state.phase().endswith("collecting results and scanning for leaks"),
           state.phase())
    state.feed_results("### done")
    expect(state.phase() == "the guest finished", state.phase())


class FakeStream(io.StringIO):
    def __init__(self, tty):
        super().__init__()
        self.tty = tty

    def isatty(self):
        return self.tty

    def fileno(self):
        raise OSError("not a real file")


@case
def display_plain_line_every_interval():
    stream = FakeStream(False)
    display = progress.Display(stream, "kernel", 30)
    for second in range(0, 200):
        display.update(f"at {second}", float(second))
    lines = stream.getvalue().splitlines()
    want = [f"kernel: at {s}" for s in range(0, 200, 30)]
    expect(lines == want, f"got {len(lines)} lines: {lines[:8]}")
    expect("\r" not in stream.getvalue(), "carriage return off a terminal")


@case
def display_updates_in_place_on_terminal():
    stream = FakeStream(True)
    display = progress.Display(stream, "VM run", 30)
    display.update("x" * 200, 0.0)
    display.update("booting", 1.0)
    display.finish("done, 5s")
    out = stream.getvalue()
    expect(out.count("\n") == 1 and out.endswith("VM run: done, 5s\n"), repr(out))
    first = out.split("\r")[1]
    expect(len(first) == 79 + len("\033[K"), f"line not cut to the width: {len(first)}")


@case
def follower_hands_out_whole_lines():
    with tempfile.NamedTemporaryFile("wb", delete=False) as f:
        path = f.name
        follower = progress.LogFollower(path)
        f.write(b"one\ntw")
        f.flush()
        first = follower.new_lines()
        f.write(b"o\r\n")
        f.flush()
        second = follower.new_lines()
    os.unlink(path)
    missing = progress.LogFollower(path).new_lines()
    expect(first == ["one"] and second == ["two"] and missing == [],
           f"got {first} {second} {missing}")


def run_script(args):
    return subprocess.run([sys.executable, SCRIPT] + args, capture_output=True,
                          text=True, timeout=60)


@case
def script_reports_failed_build():
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "build.log")
        fake = ("for i in 1 2 3; do echo \"  CC      d/f$i.o\"; sleep 0.3; done; "
                "echo \"d/f.c:1:1: error: boom\"; "
                "echo \"make: *** [Makefile:1: all] Error 2\"; exit 2")
        r = run_script(["kbuild", "--output", log, "--total", "3", "--label", "kernel",
                        "--interval", "0.5", "--poll", "0.1", "--", "sh", "-c", fake])
        err = r.stderr.splitlines()
        expect(r.returncode == 2, f"status {r.returncode}")
        expect(any("objects (" in l for l in err[:-1]), f"no progress line: {err}")
        expect(f"kernel failed (exit status 2); from {log}:" in err, f"got {err}")
        expect("  d/f.c:1:1: error: boom" in err, f"no error line: {err}")
        with open(log) as f:
            expect(f.read().count("  CC ") == 3, "log lost the build's output")


@case
def script_counts_objects_in_followed_log():
    # DKMS writes the build to its own make.log, created after the step
    # starts and unlike the step's output; the count must come from it.
    with tempfile.TemporaryDirectory() as tmp:
        out, mk = os.path.join(tmp, "dkms.out"), os.path.join(tmp, "make.log")
        fake = (f"echo 'Building module:'; sleep 0.3; "
                f"for i in 1 2 3 4; do echo \"  CC [M]  d/f$i.o\" >> {mk}; "
                f"sleep 0.2; done; echo 'Installing'")
        r = run_script(["kbuild", "--output", out, "--follow", mk, "--total", "4",
                        "--label", "DKMS", "--interval", "0.2", "--poll", "0.1",
                        "--", "sh", "-c", fake])
        err = r.stderr.splitlines()
        expect(r.returncode == 0, f"status {r.returncode}")
        expect(any(re.match(r"DKMS: [1-3] of ~4 objects \(\d+%\)", l) for l in err),
               f"no count from the followed log: {err}")
        expect(re.match(r"DKMS: 4 objects compiled", err[-1]), f"got {err}")


@case
def script_follows_vm_logs():
    with tempfile.TemporaryDirectory() as tmp:
        console, results = os.path.join(tmp, "console"), os.path.join(tmp, "results")
        fake = (f"echo 'Linux version 6.12' > {console}; sleep 0.5; "
                f"echo '### progress plan 2' > {results}; "
                f"echo '### progress start e2e t1' >> {results}; sleep 0.5; "
                f"echo '### progress end e2e t1 0' >> {results}; "
                f"echo '### done' >> {results}; sleep 0.3")
        r = run_script(["vm", "--output", os.path.join(tmp, "run.log"),
                        "--console", console, "--results", results, "--label", "VM run",
                        "--interval", "0.2", "--poll", "0.1", "--", "sh", "-c", fake])
        err = r.stderr
        expect(r.returncode == 0, f"status {r.returncode}")
        expect(re.search(r"^VM run: \d+s, booting the kernel$", err, re.M), err)
        expect(re.search(r"^VM run: \d+s, 0 of 2 test programs done, running e2e/t1$",
                         err, re.M), err)
        expect(re.match(r"VM run: \d+s, the guest finished$", err.splitlines()[-1]), err)


def main():
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    print(f"1..{len(TESTS)}")
    failed = 0
    for n, test in enumerate(TESTS, 1):
        try:
            test()
            print(f"ok {n} - progress: {test.__name__}")
        except Exception as e:  # a crash of the code under test fails too
            failed += 1
            print(f"# {type(e).__name__}: {e}")
            print(f"not ok {n} - progress: {test.__name__}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
