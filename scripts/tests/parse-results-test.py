#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Self-test of the verdict: feeds scripts/parse-results.py made-up logs.

A complete, passing set of logs must give exit 0; each hole the verdict
once had (a tier that only skipped, passes followed by exit status 4, a
host program's exit status or sanitizer report ignored, a fuzzer that ran
nothing, a base image that differs from its seed, a program that never
ran or is not in the manifest, a case count that shrank, kmemleak
missing, a distro or Debian 13 lane that skipped a program, did not finish or
splatted, a 7.3 KUnit run that lost a suite, miscounted, splatted or never
reached /init) is the same set with one thing broken, and must give exit 1
with a line that names it. Prints TAP.
"""

import os
import subprocess
import sys
import tempfile

PARSER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "..", "parse-results.py")
SEED = b"a seed image"


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return h


def good_logs():
    """Every file of one green run, by name."""
    return {
        "host-one.tap": ["1..2", "ok 1 - a", "ok 2 - b", "# exit status 0"],
        "host-fuzz.tap": ["1..1", "ok 1 - fuzzing",
                          "fuzz: 1234 execs, 0 crashes, 9 corpus",
                          "# exit status 0"],
        "console.log": [
            "[    1.000000] KTAP version 1",
            "[    1.000000] 1..1",
            "[    1.000000]     KTAP version 1",
            "[    1.000000]     # Subtest: suite_a",
            "[    1.000000]     1..2",
            "[    1.000000]     # gt_test_hostile_gpu_records: 10 hostile images: 7 refused, 3 accepted",
            "[    1.000000]     ok 1 case_one",
            "[    1.000000]     # test_bos_hostile_records: 5 hostile images: 5 refused, 0 accepted",
            "[    1.000000]     ok 2 case_two # SKIP slow here",
            "[    1.000000] ok 1 suite_a",
        ],
        "kunit73-console.log": [
            "[    1.000000] Linux version 7.3.4",
            "[    1.000000] KTAP version 1",
            "[    1.000000] 1..1",
            "[    1.000000]     KTAP version 1",
            "[    1.000000]     # Subtest: suite_a",
            "[    1.000000]     1..2",
            "[    1.000000]     ok 1 case_one",
            "[    1.000000]     ok 2 case_two # SKIP",
            "[    1.000000] ok 1 suite_a",
            "kfdcriu-probe-ok",
        ],
        "results.log": [
            "### begin",
            "### tier selftests",
            "### run selftests prog_a",
            "TAP version 13", "1..2", "ok 1 x", "ok 2 y",
            "### exit selftests prog_a 0",
            "### run selftests gpu_prog",
            "TAP version 13", "1..0 # SKIP no GPU in the KFD topology",
            "### exit selftests gpu_prog 4",
            "### tier e2e",
            "### run e2e e2e_prog",
            "1..1",
            f"# base image seed: {len(SEED)} bytes, fnv1a64 {fnv1a64(SEED):016x}",
            "ok 1 z",
            "### exit e2e e2e_prog 0",
            "### run e2e debug_prog",
            "1..1", "ok 1 w",
            "### exit e2e debug_prog 0",
            "### kmemleak", "### end kmemleak",
            "### done",
        ],
        "distro-console.log": ["[    1.000000] Linux version 6.12.117+deb12-amd64"],
        "distro-results.log": [
            "### begin",
            "### tier distro",
            "### run distro distro/module_prog",
            "1..1", "ok 1 m",
            "### exit distro distro/module_prog 0",
            "### run distro selftests/prog_a",
            "1..2", "ok 1 x", "ok 2 y",
            "### exit distro selftests/prog_a 0",
            "### run distro selftests/gpu_prog",
            "1..0 # SKIP no GPU in the KFD topology",
            "### exit distro selftests/gpu_prog 4",
            "### run distro e2e/e2e_prog",
            "1..1", "ok 1 z",
            "### exit distro e2e/e2e_prog 0",
            "### done",
        ],
        "kernel-hook.tap": ["1..2", "ok 1 - a", "ok 2 - b", "# exit status 0"],
        "debian13-console.log": ["[    1.000000] Linux version 6.12.118+deb13-amd64"],
        "debian13-results.log": [
            "### begin",
            "### tier debian13",
            "### run debian13 debian13/criu4_prog",
            "1..2", "ok 1 c", "ok 2 d",
            "### exit debian13 debian13/criu4_prog 0",
            "### run debian13 e2e/e2e_prog",
            "1..1", "ok 1 z",
            "### exit debian13 e2e/e2e_prog 0",
            "### done",
        ],
        "manifest": [
            "# tier program cases allowed-skip-reasons",
            "host host-one 2",
            "host host-fuzz 1",
            "kunit suite_a 2 slow|<empty>",
            "selftests prog_a 2",
            "selftests gpu_prog 3 no GPU in the KFD topology",
            "e2e e2e_prog 1",
            "e2e debug_prog 1",
            "debug-only e2e/debug_prog needs the debug kernel",
            "distro distro/module_prog 1",
            "distro distro/kernel_hook_test.sh 2 needs root",
            "debian13 debian13/criu4_prog 2",
            "debian13 e2e/e2e_prog 1",
        ],
    }


def replace(logs, name, old, new):
    logs[name] = [new if l == old else l for l in logs[name]]
    assert old in [l for l in logs[name]] or new in logs[name], (name, old)


def drop(logs, name, text):
    logs[name] = [l for l in logs[name] if text not in l]


def case_baseline(logs):
    pass


def case_tier_only_skipped(logs):
    replace(logs, "results.log", "ok 1 z", "ok 1 z # SKIP no /dev/kfd")


def case_passes_then_exit_4(logs):
    replace(logs, "results.log", "### exit selftests prog_a 0",
            "### exit selftests prog_a 4")


def case_host_exit_status(logs):
    logs["host-one.tap"][-1:] = ["==42==ERROR: LeakSanitizer: detected memory leaks",
                                 "# exit status 23"]


def case_host_no_exit_status(logs):
    drop(logs, "host-one.tap", "# exit status")


def case_host_sanitizer_exit_0(logs):
    logs["host-one.tap"].insert(-1, "x.c:3:1: runtime error: shift exponent 64")


def case_fuzz_no_execs(logs):
    replace(logs, "host-fuzz.tap", "fuzz: 1234 execs, 0 crashes, 9 corpus",
            "fuzz: 0 execs, 0 crashes, 9 corpus")


def case_fuzz_no_figure(logs):
    drop(logs, "host-fuzz.tap", "fuzz: ")


def case_seed_differs(logs):
    line = [l for l in logs["results.log"] if l.startswith("# base image")][0]
    replace(logs, "results.log", line, line[:-1] + ("0" if line[-1] != "0" else "1"))


def case_seed_hash_missing(logs):
    drop(logs, "results.log", "# base image")


def case_program_missing(logs):
    out, skip = [], False
    for l in logs["results.log"]:
        if l == "### run selftests prog_a":
            skip = True
        if not skip:
            out.append(l)
        if l == "### exit selftests prog_a 0":
            skip = False
    logs["results.log"] = out


def case_program_not_in_manifest(logs):
    drop(logs, "manifest", "e2e e2e_prog")


def case_fewer_cases(logs):
    replace(logs, "manifest", "selftests prog_a 2", "selftests prog_a 3")


def case_kunit_skip_not_allowed(logs):
    replace(logs, "manifest", "kunit suite_a 2 slow|<empty>", "kunit suite_a 2")


def case_kmemleak_missing(logs):
    i = logs["results.log"].index("### end kmemleak")
    logs["results.log"].insert(i, "kmemleak: not available")


def case_gpu_skip_other_reason(logs):
    replace(logs, "results.log", "TAP version 13", "TAP version 13")
    replace(logs, "results.log", "1..0 # SKIP no GPU in the KFD topology",
            "1..0 # SKIP could not open /dev/kfd")


def case_distro_program_missing(logs):
    drop(logs, "distro-results.log", "e2e/e2e_prog")
    drop(logs, "distro-results.log", "ok 1 z")


def case_distro_skip_not_allowed(logs):
    replace(logs, "distro-results.log", "ok 2 y", "ok 2 y # SKIP no module")


def case_distro_unfinished(logs):
    drop(logs, "distro-results.log", "### done")


def case_distro_splat(logs):
    logs["distro-console.log"].append(
        "[    9.000000] WARNING: CPU: 0 PID: 1 at kfd_events.c:770 set_event")


def case_distro_not_run(logs):
    logs["distro-results.log"] = []
    logs["kernel-hook.tap"] = []


def case_distro_tap_exit_status(logs):
    replace(logs, "kernel-hook.tap", "# exit status 0", "# exit status 1")


def case_distro_tap_missing(logs):
    del logs["kernel-hook.tap"]


def case_debian13_all_skipped(logs):
    replace(logs, "debian13-results.log", "1..2", "1..0 # SKIP no /dev/kfd in this kernel")
    drop(logs, "debian13-results.log", "ok 1 c")
    drop(logs, "debian13-results.log", "ok 2 d")
    replace(logs, "debian13-results.log", "### exit debian13 debian13/criu4_prog 0",
            "### exit debian13 debian13/criu4_prog 4")


def case_debian13_unfinished(logs):
    drop(logs, "debian13-results.log", "### done")


def case_debian13_splat(logs):
    logs["debian13-console.log"].append(
        "[    9.000000] BUG: KASAN: use-after-free in kfd_criu_restore")


def case_debian13_not_run(logs):
    logs["debian13-results.log"] = []


def case_kunit73_suite_lost(logs):
    logs["kunit73-console.log"] = [l for l in logs["kunit73-console.log"]
                                   if "    " not in l and "ok 1 suite_a" not in l]


def case_kunit73_fewer_cases(logs):
    logs["manifest"].append("kunit-7.3 suite_a 3")


def case_kunit73_splat(logs):
    logs["kunit73-console.log"].insert(
        -1, "[    9.000000] BUG: KASAN: slab-use-after-free in kfd_criu_restore")


def case_kunit73_no_init(logs):
    drop(logs, "kunit73-console.log", "kfdcriu-probe-ok")


def case_sweep_miscounted(logs):
    replace(logs, "console.log",
            "[    1.000000]     # gt_test_hostile_gpu_records: 10 hostile images: 7 refused, 3 accepted",
            "[    1.000000]     # gt_test_hostile_gpu_records: 10 hostile images: 7 refused, 4 accepted")


CASES = [
    (case_baseline, 0, "a complete green run passes, the sweeps split by kind",
     "hostile records on fake GPUs: 15 tried, 12 refused, 3 accepted (bos 5, gpu 10)"),
    (case_tier_only_skipped, 1, "a tier whose only test skipped for a reason not allowed",
     'reason is not allowed for it: "no /dev/kfd"'),
    (case_passes_then_exit_4, 1, "a program that passed cases and exited 4",
     "exit status 4 after 2 passes"),
    (case_host_exit_status, 1, "a host program with a complete plan and exit status 23",
     "host-one: exit status 23"),
    (case_host_no_exit_status, 1, "a host program whose exit status is missing",
     "no exit status recorded"),
    (case_host_sanitizer_exit_0, 1, "a sanitizer report with exit status 0",
     "sanitizer report"),
    (case_fuzz_no_execs, 1, "a fuzzer run of 0 execs", "the fuzzer ran 0 inputs"),
    (case_fuzz_no_figure, 1, "a fuzzer run without its figure",
     'printed no "fuzz: N execs" line'),
    (case_seed_differs, 1, "a base image whose hash differs from its seed",
     "base image seed (fnv1a64"),
    (case_seed_hash_missing, 1, "a campaign that printed no base image hash",
     "printed no hash of its base image seed"),
    (case_program_missing, 1, "a manifest program that never ran",
     "prog_a did not run"),
    (case_program_not_in_manifest, 1, "a program that is not in the manifest",
     "e2e_prog is not in the test manifest"),
    (case_fewer_cases, 1, "a program with fewer cases than the manifest",
     "prog_a reported 2 cases, the test manifest says 3"),
    (case_kunit_skip_not_allowed, 1, "a KUnit skip whose reason is not allowed",
     'suite_a: a skip whose reason is not allowed for it: "slow here"'),
    (case_kmemleak_missing, 1, "kmemleak not available in the guest",
     "the leak check did not run"),
    (case_gpu_skip_other_reason, 1, "a whole-program skip for another reason",
     '"could not open /dev/kfd"'),
    (case_distro_program_missing, 1, "a program the distro lane must rerun that it did not",
     "distro: e2e/e2e_prog did not run"),
    (case_distro_skip_not_allowed, 1, "a distro rerun that skipped where the debug lane may not",
     'distro: selftests/prog_a: a skip whose reason is not allowed for it: "no module"'),
    (case_distro_unfinished, 1, "a distro lane that did not finish",
     "distro VM: the guest did not finish"),
    (case_distro_splat, 1, "a kernel splat in the distro lane",
     "kernel splat on the distro lane's console"),
    (case_distro_not_run, 1, "a distro lane that ran nothing",
     "distro: the tier did not run at all"),
    (case_distro_tap_exit_status, 1, "a host-side distro check that exited 1 after passes",
     "distro: distro/kernel_hook_test.sh failed"),
    (case_distro_tap_missing, 1, "a host-side distro check that did not run",
     "distro: distro/kernel_hook_test.sh did not run"),
    (case_debian13_all_skipped, 1, "a Debian 13 program that skipped as a whole",
     'debian13: debian13/criu4_prog: a skip whose reason is not allowed for it: "no /dev/kfd in this kernel"'),
    (case_debian13_unfinished, 1, "a Debian 13 lane that did not finish",
     "debian13 VM: the guest did not finish"),
    (case_debian13_splat, 1, "a kernel splat in the Debian 13 lane",
     "kernel splat on the debian13 lane's console"),
    (case_debian13_not_run, 1, "a Debian 13 lane that ran nothing",
     "debian13: the tier did not run at all"),
    (case_kunit73_suite_lost, 1, "a 7.3 KUnit run that reported no suite",
     "kunit-7.3: suite_a did not run"),
    (case_kunit73_fewer_cases, 1, "a 7.3 KUnit suite with another count than its line",
     "kunit-7.3: suite_a reported 2 cases, the test manifest says 3"),
    (case_kunit73_splat, 1, "a kernel splat on the 7.3 kernel",
     "kernel splat on the 7.3 kernel's console"),
    (case_kunit73_no_init, 1, "a 7.3 kernel that never reached /init after KUnit",
     "kunit-7.3 VM: the guest did not reach /init"),
    (case_sweep_miscounted, 1, "a sweep whose figures do not add up",
     "kunit sweep gpu: 7 refused and 4 accepted of 10 images"),
]


def run_case(fn):
    logs = good_logs()
    fn(logs)
    with tempfile.TemporaryDirectory() as d:
        for name, lines in logs.items():
            with open(os.path.join(d, name), "w") as f:
                f.write("\n".join(lines) + "\n")
        os.mkdir(os.path.join(d, "corpus"))
        with open(os.path.join(d, "corpus", "seed.img"), "wb") as f:
            f.write(SEED)
        p = os.path.join
        cmd = [sys.executable, PARSER,
               "--host-tap", p(d, "host-one.tap"),
               "--host-tap", p(d, "host-fuzz.tap"),
               "--console", p(d, "console.log"),
               "--results", p(d, "results.log"),
               "--distro-console", p(d, "distro-console.log"),
               "--distro-results", p(d, "distro-results.log"),
               "--distro-tap", p(d, "kernel-hook.tap"),
               "--debian13-console", p(d, "debian13-console.log"),
               "--debian13-results", p(d, "debian13-results.log"),
               "--kunit73-console", p(d, "kunit73-console.log"),
               "--manifest", p(d, "manifest"),
               "--corpus", p(d, "corpus"), "--seed-images", "seed"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr


def main():
    failed = 0
    print(f"1..{len(CASES)}")
    for i, (fn, want, what, says) in enumerate(CASES, 1):
        rc, out = run_case(fn)
        if rc == want and says in out:
            print(f"ok {i} - {what}: exit {rc}")
            continue
        failed += 1
        print(f"not ok {i} - {what}: exit {rc}, expected {want} and "
              f"a line with '{says}'")
        print("\n".join("# " + l for l in out.splitlines()[-15:]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
