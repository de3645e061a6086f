#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the logs of one "make check" run into the per-tier summary.

Reads the host tier's TAP, the VM console (kernel log with KUnit's KTAP)
and the guest's results port (framed TAP of the selftests and e2e tiers),
prints failures with the log lines that explain them, then one line per
tier, "TIER: N passed, N failed, N skipped", and a final total line.
Exits 1 when anything failed or an expected tier did not run at all.

With --manifest, every test program (a host TAP file, a KUnit suite, a
guest program) must be listed there, must have run, must report exactly
the listed number of cases, and may skip only for a reason listed for it;
a program that skipped as a whole (exit 4, "1..0 # SKIP reason") counts
as one skip. Host TAP files end with "# exit status N" (scripts/check.sh
writes it); a missing or non-zero status, or a sanitizer report, fails.
"""

import argparse
import re
import sys

TIERS = ("host", "kunit", "kunit-7.3", "selftests", "e2e", "distro", "debian13")
# The tiers whose programs the distro lane runs again, on the stock kernel
DISTRO_RERUNS = ("selftests", "e2e")
TS_RE = re.compile(r"^\[\s*\d+\.\d+\]\s?")
# TAP allows a result without its number ("not ok - name").
RESULT_RE = re.compile(r"^(not ok|ok)(?:\s+\d+)?(?:\s+-)?(?:\s+(.*?))?\s*(#\s*(SKIP|TODO)\b.*)?$",
                       re.IGNORECASE)
# A kernel splat: any of these on the console fails the run.
SPLAT_RE = re.compile(r"BUG: |WARNING: |Kernel panic|Oops|general protection fault|"
                      r"UBSAN: |INFO: task .* blocked|INFO: trying to register "
                      r"non-static key|possible recursive locking|"
                      r"suspicious RCU usage")


class Tier:
    def __init__(self, name):
        self.name = name
        self.passed = self.failed = self.skipped = 0
        self.failures = []

    def add(self, status, name):
        if status == "skip":
            self.skipped += 1
        elif status == "pass":
            self.passed += 1
        else:
            self.failed += 1
            self.failures.append(name)

    def total(self):
        return self.passed + self.failed + self.skipped

    def summary(self):
        return (f"{self.name}: {self.passed} passed, {self.failed} failed, "
                f"{self.skipped} skipped")


def classify(line):
    m = RESULT_RE.match(line)
    if not m:
        return None, None
    ok, name, directive = m.group(1), m.group(2) or "", m.group(4)
    if directive and directive.upper() == "SKIP":
        return "skip", name
    return ("pass" if ok.lower() == "ok" else "fail"), name


def skip_reason(line):
    """The text after "# SKIP" of a result or plan line, or ""."""
    m = re.search(r"#\s*SKIP\b:?\s*(.*)$", line, re.IGNORECASE)
    return m.group(1).strip() if m else ""


class Program:
    """What one test program (host TAP file, KUnit suite, guest program)
    reported: its results, the reasons of its skips, how it ended."""

    def __init__(self, tier, name):
        self.tier, self.name = tier, name
        self.results = 0
        self.passed = 0
        self.reasons = []
        self.whole_skip = None
        self.rc = None
        self.problems = []

    def add(self, status, line):
        self.results += 1
        if status == "pass":
            self.passed += 1
        elif status == "skip":
            self.reasons.append(skip_reason(line))


PROGRAMS = {}


def program(tier, name):
    return PROGRAMS.setdefault((tier, name), Program(tier, name))


def read_lines(path):
    try:
        with open(path, errors="replace") as f:
            return [l.rstrip("\r\n") for l in f]
    except FileNotFoundError:
        return None


def parse_plain_tap(lines, tier, problems, what, prog=None):
    """Count TAP results; fewer results than the plan is a failure."""
    planned, counted = None, 0
    for line in lines:
        text = line.strip()
        m = re.match(r"^1\.\.(\d+)", text)
        if m and planned is None:
            planned = int(m.group(1))
            if planned == 0 and prog is not None and "SKIP" in text.upper():
                prog.whole_skip = skip_reason(text)
        status, name = classify(text)
        if status:
            tier.add(status, name)
            counted += 1
            if prog is not None:
                prog.add(status, text)
    if planned is not None and counted < planned:
        tier.add("fail", f"{what}: {counted} of {planned} planned results")
        problems.append(f"{tier.name}: {what} stopped after {counted} of "
                        f"{planned} planned results")
    elif planned is None and not counted:
        # A test program that did not build or start prints no TAP at all
        tier.add("fail", f"{what}: no TAP results")


def parse_ktap(console, tier, problems, path):
    """Count KUnit test cases (depth 1) and check every suite reported."""
    lines = [TS_RE.sub("", l) for l in console]
    suites_planned = None
    suites_done = 0
    suite = None
    for line in lines:
        depth = (len(line) - len(line.lstrip(" "))) // 4
        text = line.strip()
        if depth == 0 and re.match(r"^1\.\.\d+$", text) and suites_planned is None:
            suites_planned = int(text[3:])
            continue
        m = re.match(r"^#\s*Subtest:\s*(\S+)", text)
        if m and depth == 1:
            suite = program(tier.name, m.group(1))
            continue
        status, name = classify(text)
        if not status:
            continue
        if depth == 0:
            suites_done += 1
            suite = None
        elif depth == 1:
            tier.add(status, name)
            if suite is not None:
                suite.add(status, text)
    if suites_planned is None:
        return
    if suites_done < suites_planned:
        problems.append(f"{tier.name}: {suites_planned} suites planned, only "
                        f"{suites_done} reported (a suite crashed or hung; "
                        f"see {path})")
        tier.add("fail", "kunit suites incomplete")


def parse_results_port(results, tiers, problems, path):
    current = None
    seen_done = False
    section = []
    for line in results:
        if line.startswith("### tier "):
            current = tiers.get(line.split()[2])
        elif line.startswith("### run "):
            section = []
        elif line.startswith("### exit ") and current:
            _, _, tier, name, rc = line.split()
            finish_program(current, name, int(rc), section, problems, path)
        elif line.startswith("### done"):
            seen_done = True
        elif line.startswith("###"):
            current = None if line.startswith("### kmemleak") else current
        else:
            section.append(line)
    return seen_done


def finish_program(tier, name, rc, lines, problems, path):
    """One test program's TAP; a crash or bad exit is a failure too."""
    before = (tier.failed, tier.total())
    prog = program(tier.name, name)
    prog.rc = rc
    parse_plain_tap(lines, tier, [], name, prog)
    failed_now = tier.failed - before[0]
    counted = tier.total() - before[1]
    if rc == 4 and counted == 0:
        tier.add("skip", name)
        prog.results += 1
        prog.reasons.append(prog.whole_skip or "exit status 4 without a reason")
    elif rc == 4 and prog.passed:
        # A skip status after passes would hide that the rest never ran
        tier.add("fail", f"{name} (exit status 4 after {prog.passed} passes)")
    elif rc not in (0, 4) and failed_now == 0:
        tier.add("fail", f"{name} (exit status {rc})")
    if tier.failed > before[0]:
        why = "; ".join(tier.failures[before[0] - tier.failed:])
        problems.append(f"{tier.name}: {name} failed ({why}); its output, "
                        f"from {path}:\n  " +
                        "\n  ".join(lines[-40:]))


# Sanitizer reports in a host program's output fail it whatever its TAP says
SANITIZER_RE = re.compile(r"ERROR: (AddressSanitizer|LeakSanitizer|"
                          r"UndefinedBehaviorSanitizer)|runtime error: ")
EXIT_RE = re.compile(r"^# exit status (\d+)\s*$")


def check_host_program(path, lines, tier, problems, name=None):
    """The exit status check.sh appended, and no sanitizer report."""
    if name is None:
        name = re.sub(r"\.tap$", "", path.rsplit("/", 1)[-1])
    prog = program(tier.name, name)
    statuses = [int(m.group(1)) for m in map(EXIT_RE.match, lines) if m]
    prog.rc = statuses[-1] if statuses else None
    if prog.rc is None:
        why = "no exit status recorded (the program did not finish)"
    elif prog.rc != 0:
        why = f"exit status {prog.rc}"
    else:
        why = None
    reports = [l for l in lines if SANITIZER_RE.search(l)]
    if reports and not why:
        why = "sanitizer report: " + reports[0].strip()
    if why:
        tier.add("fail", f"{name}: {why}")
        problems.append(f"{tier.name}: {name}: {why}")
    return prog


# The distro lane's checks that run on this machine, against its root:
# TAP file name -> program name in the manifest.
DISTRO_HOST_PROGRAMS = {"kernel-hook.tap": "distro/kernel_hook_test.sh"}


def parse_distro_tap(path, tier, problems):
    """A host-side program of the distro lane: its TAP and the exit
    status the lane appended, judged as a guest program's are."""
    base = path.rsplit("/", 1)[-1]
    name = DISTRO_HOST_PROGRAMS.get(base, "distro/" + base)
    lines = read_lines(path)
    if lines is None:
        problems.append(f"distro: {name} did not run (no {path})")
        return
    statuses = [int(m.group(1)) for m in map(EXIT_RE.match, lines) if m]
    rc = statuses[-1] if statuses else None
    if rc is None:
        problems.append(f"distro: {name} did not finish, in {path}")
        return
    finish_program(tier, name, rc, lines, problems, path)


def read_manifest(path):
    """{(tier, program): (cases, [allowed skip reason prefixes])}

    The distro tier runs every selftests and e2e program again, named
    TIER/PROGRAM, with the same cases, except those on a "debug-only
    TIER/PROGRAM REASON" line; its own programs have lines of their own.
    The kunit-7.3 tier runs every KUnit suite again, on the 7.3 port's
    kernel, with the same cases unless a kunit-7.3 line says otherwise.
    """
    out = {}
    debug_only = set()
    lines = read_lines(path)
    if lines is None:
        raise SystemExit(f"{path}: no such test manifest")
    for raw in lines:
        line = "" if raw.lstrip().startswith("#") else raw.strip()
        if not line:
            continue
        parts = line.split(None, 3)
        if parts[0] == "debug-only" and len(parts) >= 3:
            debug_only.add(parts[1])
            continue
        if len(parts) < 3:
            raise SystemExit(f"{path}: bad line: {raw}")
        reasons = [r.strip() for r in parts[3].split("|")] if len(parts) > 3 else []
        out[(parts[0], parts[1])] = (int(parts[2]), [r for r in reasons if r])
    for (tier, name), entry in list(out.items()):
        if tier == "kunit":
            out.setdefault(("kunit-7.3", name), entry)
        rel = f"{tier}/{name}"
        if tier in DISTRO_RERUNS and rel not in debug_only:
            out[("distro", rel)] = entry
    unknown = debug_only - {f"{t}/{n}" for t, n in out}
    if unknown:
        raise SystemExit(f"{path}: debug-only names no program: "
                         + ", ".join(sorted(unknown)))
    return out


def check_manifest(manifest, tiers_run, problems):
    """Every program listed ran, fully, and skipped only where allowed."""
    for key, prog in sorted(PROGRAMS.items()):
        if prog.tier in tiers_run and key not in manifest:
            problems.append(f"{prog.tier}: {prog.name} is not in the test "
                            f"manifest (scripts/test-manifest), with "
                            f"{prog.results} cases")
    for (tier, name), (cases, allowed) in sorted(manifest.items()):
        if tier not in tiers_run:
            continue
        prog = PROGRAMS.get((tier, name))
        if prog is None or not prog.results:
            problems.append(f"{tier}: {name} did not run (it is in the "
                            f"test manifest with {cases} cases)")
            continue
        for reason in prog.reasons:
            if not any(reason == "" if a == "<empty>" else
                       reason and reason.startswith(a) for a in allowed):
                problems.append(f"{tier}: {name}: a skip whose reason is not "
                                f"allowed for it: \"{reason}\"")
        whole = prog.whole_skip is not None and prog.results == 1
        if not whole and prog.results != cases:
            problems.append(f"{tier}: {name} reported {prog.results} cases, "
                            f"the test manifest says {cases}")


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return h


BASE_IMAGE_RE = re.compile(r"^# base image (\S+): (\d+) bytes, fnv1a64 ([0-9a-f]+)")


def check_seed_images(results, corpus, names, problems):
    """The campaign's base images equal the fuzzer's seeds, byte for byte."""
    seen = {}
    for line in results:
        m = BASE_IMAGE_RE.match(line.strip())
        if m:
            seen[m.group(1)] = int(m.group(3), 16)
    for name in names:
        try:
            with open(f"{corpus}/{name}.img", "rb") as f:
                want = fnv1a64(f.read())
        except OSError as e:
            problems.append(f"seed image {name}: {e}")
            continue
        if name not in seen:
            problems.append(f"e2e: the mutation campaign printed no hash of "
                            f"its base image {name}")
        elif seen[name] != want:
            problems.append(f"e2e: base image {name} (fnv1a64 {seen[name]:016x}) "
                            f"differs from fuzz/corpus/{name}.img ({want:016x}): "
                            f"run make -C fuzz corpus, or fix the seed generator")


def check_fuzz_figure(lines, problems):
    """A fuzzer run that executed nothing tested nothing."""
    for line in lines:
        m = re.match(r"^fuzz: (\d+) execs", line.strip())
        if m:
            if int(m.group(1)) == 0:
                problems.append("host: the fuzzer ran 0 inputs")
            return
    problems.append("host: the fuzzer printed no \"fuzz: N execs\" line")


def kmemleak_reports(results):
    out, inside = [], False
    for line in results:
        if line.startswith("### kmemleak"):
            inside = True
        elif line.startswith("### end kmemleak"):
            inside = False
        elif inside and line.strip():
            out.append(line)
    return [l for l in out if "unreferenced object" in l], out


# One-line figures some test programs print ("fuzz: ...", "mutation: ...")
FIGURE_RE = re.compile(r"^(fuzz|mutation): \d+ ")


def figures(lines):
    return [l.strip() for l in lines if FIGURE_RE.match(l.strip())]


# "# <case>: N hostile images: R refused, A accepted": a KUnit sweep of
# one kind of image record through the real restore code on fake GPUs
SWEEP_RE = re.compile(r"#\s*(\w+): (\d+) hostile images: (\d+) refused, "
                      r"(\d+) accepted")


def sweep_kind(case):
    """The record kind a sweep's case name says: gt_test_hostile_gpu_records
    is gpu, test_bos_hostile_records is bos."""
    kind = re.sub(r"^(kfd_criu_|[a-z]t_)?test_", "", case)
    kind = re.sub(r"_records$", "", kind)
    return re.sub(r"^hostile_|_hostile$", "", kind) or case


def sweep_figure(console, problems):
    """One line of the KUnit hostile-record sweeps, split by record kind."""
    kinds, tried, refused = [], 0, 0
    for line in console:
        m = SWEEP_RE.search(line)
        if not m:
            continue
        n, r, a = (int(g) for g in m.group(2, 3, 4))
        kind = sweep_kind(m.group(1))
        if r + a != n:
            problems.append(f"kunit sweep {kind}: {r} refused and {a} "
                            f"accepted of {n} images")
        kinds.append(f"{kind} {n}")
        tried += n
        refused += r
    if not kinds:
        return []
    return [f"hostile records on fake GPUs: {tried} tried, {refused} refused, "
            f"{tried - refused} accepted ({', '.join(sorted(kinds))})"]


def console_splats(console):
    hits = []
    for i, line in enumerate(console):
        if SPLAT_RE.search(line):
            hits.append("\n  ".join(console[i:i + 25]))
    return hits


def check_kunit73(path, tier, problems):
    """The 7.3 kernel: its KUnit suites, and no splat."""
    console = read_lines(path)
    if console is None:
        problems.append("kunit-7.3 VM: no console log (QEMU did not start?)")
        return
    parse_ktap(console, tier, problems, path)
    for splat in console_splats(console):
        problems.append(f"kernel splat on the 7.3 kernel's console, in "
                        f"{path}:\n  " + splat)
    if not any("kfdcriu-probe-ok" in l for l in console):
        tail = "\n  ".join(console[-30:])
        problems.append("kunit-7.3 VM: the guest did not reach /init after "
                        f"KUnit (hang, panic or timeout); the last lines of "
                        f"{path}:\n  " + tail)


def check_distro_lane(args, tiers, problems):
    """The stock kernel's run: its TAP, that it finished, no splat."""
    check_stock_lane("distro", args.distro_console, args.distro_results,
                     tiers, problems)


def check_stock_lane(lane, console_path, results_path, tiers, problems):
    """A stock-kernel lane's VM (distro: Debian 12, debian13: Debian 13):
    its TAP, that the guest finished, no splat on its console."""
    console = read_lines(console_path) if console_path else None
    results = read_lines(results_path)
    if console is None:
        problems.append(f"{lane} VM: no console log (QEMU did not start?)")
    else:
        for splat in console_splats(console):
            problems.append(f"kernel splat on the {lane} lane's console, in "
                            f"{console_path}:\n  " + splat)
    done = parse_results_port(results or [], tiers, problems, results_path)
    if not done:
        tail = "\n  ".join((console or [])[-30:])
        problems.append(f"{lane} VM: the guest did not finish its tests "
                        "(hang, panic or timeout); the last lines of "
                        f"{console_path}:\n  " + tail)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host-tap", action="append", default=[],
                    help="TAP of one host test program (repeatable)")
    ap.add_argument("--console")
    ap.add_argument("--results")
    ap.add_argument("--distro-console",
                    help="kernel log of the distro lane's VM")
    ap.add_argument("--distro-results",
                    help="results port of the distro lane's VM")
    ap.add_argument("--distro-tap", action="append", default=[],
                    help="TAP of a host-side check of the distro lane "
                         "(repeatable)")
    ap.add_argument("--debian13-console",
                    help="kernel log of the Debian 13 lane's VM")
    ap.add_argument("--debian13-results",
                    help="results port of the Debian 13 lane's VM")
    ap.add_argument("--kunit73-console",
                    help="kernel log of the 7.3 KUnit VM")
    ap.add_argument("--expect", default=",".join(TIERS),
                    help="tiers that must have run (comma separated)")
    ap.add_argument("--manifest",
                    help="the list of test programs (scripts/test-manifest)")
    ap.add_argument("--corpus", help="fuzz/corpus, for --seed-images")
    ap.add_argument("--seed-images", default="",
                    help="base images of the campaign that must equal "
                         "CORPUS/NAME.img (comma separated)")
    args = ap.parse_args()

    tiers = {t: Tier(t) for t in TIERS}
    problems = []
    figure_lines = []

    for path in args.host_tap:
        host = read_lines(path) or []
        figure_lines += figures(host)
        failed = tiers["host"].failed
        prog = check_host_program(path, host, tiers["host"], problems)
        parse_plain_tap(host, tiers["host"], problems, path, prog)
        if tiers["host"].failed > failed or not host:
            problems.append(f"host: {path}:\n  " + "\n  ".join(host[-40:]))
        if prog.name == "host-fuzz":
            check_fuzz_figure(host, problems)

    console = read_lines(args.console) if args.console else None
    results = read_lines(args.results) if args.results else None
    if args.console is not None:
        if console is None:
            problems.append("VM: no console log (QEMU did not start?)")
        else:
            parse_ktap(console, tiers["kunit"], problems, args.console)
            figure_lines += sweep_figure(console, problems)
            for splat in console_splats(console):
                problems.append(f"kernel splat on the console, in {args.console}:\n  "
                                + splat)
    if args.results is not None:
        figure_lines += figures(results or [])
        done = parse_results_port(results or [], tiers, problems, args.results)
        if not done:
            tail = "\n  ".join((console or [])[-30:])
            problems.append("VM: the guest did not finish its tests (hang, "
                            f"panic or timeout); the last lines of {args.console or 'the console log'}:\n  "
                            + tail)
        leaks, report = kmemleak_reports(results or [])
        if done and any("kmemleak: not available" in l for l in report):
            problems.append("kmemleak: not available in the guest; the "
                            "leak check did not run")
        if args.seed_images and "e2e" in args.expect.split(","):
            check_seed_images(results or [], args.corpus,
                              args.seed_images.split(","), problems)
        if leaks:
            problems.append(f"kmemleak: {len(leaks)} leaked objects, in {args.results}:\n  " +
                            "\n  ".join(kmemleak_reports(results)[1][:60]))

    if args.kunit73_console is not None:
        check_kunit73(args.kunit73_console, tiers["kunit-7.3"], problems)
    if args.distro_results is not None:
        check_distro_lane(args, tiers, problems)
    for path in args.distro_tap:
        parse_distro_tap(path, tiers["distro"], problems)
    if args.debian13_results is not None:
        check_stock_lane("debian13", args.debian13_console,
                         args.debian13_results, tiers, problems)

    expected = [t for t in args.expect.split(",") if t]
    for name in expected:
        if tiers[name].total() == 0:
            problems.append(f"{name}: the tier did not run at all")
    if args.manifest:
        check_manifest(read_manifest(args.manifest), expected, problems)

    for p in problems:
        print("FAIL: " + p)
    for line in figure_lines:
        print(line)
    for t in TIERS:
        print(tiers[t].summary())
    total = [sum(getattr(t, a) for t in tiers.values())
             for a in ("passed", "failed", "skipped")]
    print(f"{total[0]} passed, {total[1]} failed, {total[2]} skipped")
    return 1 if problems or total[1] else 0


if __name__ == "__main__":
    sys.exit(main())
