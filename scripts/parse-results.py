#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the logs of one "make check" run into the per-tier summary.

Reads the host tier's TAP, the VM console (kernel log with KUnit's KTAP)
and the guest's results port (framed TAP of the selftests and e2e tiers),
prints failures with the log lines that explain them, then one line per
tier, "TIER: N passed, N failed, N skipped", and a final total line.
Exits 1 when anything failed or an expected tier did not run at all.
"""

import argparse
import re
import sys

TIERS = ("host", "kunit", "selftests", "e2e")
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


def read_lines(path):
    try:
        with open(path, errors="replace") as f:
            return [l.rstrip("\r\n") for l in f]
    except FileNotFoundError:
        return None


def parse_plain_tap(lines, tier, problems, what):
    """Count TAP results; fewer results than the plan is a failure."""
    planned, counted = None, 0
    for line in lines:
        text = line.strip()
        m = re.match(r"^1\.\.(\d+)", text)
        if m and planned is None:
            planned = int(m.group(1))
        status, name = classify(text)
        if status:
            tier.add(status, name)
            counted += 1
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
    for line in lines:
        depth = (len(line) - len(line.lstrip(" "))) // 4
        text = line.strip()
        if depth == 0 and re.match(r"^1\.\.\d+$", text) and suites_planned is None:
            suites_planned = int(text[3:])
            continue
        status, name = classify(text)
        if not status:
            continue
        if depth == 0:
            suites_done += 1
        elif depth == 1:
            tier.add(status, name)
    if suites_planned is None:
        return
    if suites_done < suites_planned:
        problems.append(f"kunit: {suites_planned} suites planned, only "
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
    parse_plain_tap(lines, tier, [], name)
    failed_now = tier.failed - before[0]
    counted = tier.total() - before[1]
    if rc == 4 and counted == 0:
        tier.add("skip", name)
    elif rc not in (0, 4) and failed_now == 0:
        tier.add("fail", f"{name} (exit status {rc})")
    if tier.failed > before[0]:
        problems.append(f"{tier.name}: {name} failed; its output, from {path}:\n  " +
                        "\n  ".join(lines[-40:]))


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


def console_splats(console):
    hits = []
    for i, line in enumerate(console):
        if SPLAT_RE.search(line):
            hits.append("\n  ".join(console[i:i + 25]))
    return hits


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host-tap", action="append", default=[],
                    help="TAP of one host test program (repeatable)")
    ap.add_argument("--console")
    ap.add_argument("--results")
    ap.add_argument("--expect", default=",".join(TIERS),
                    help="tiers that must have run (comma separated)")
    args = ap.parse_args()

    tiers = {t: Tier(t) for t in TIERS}
    problems = []
    figure_lines = []

    for path in args.host_tap:
        host = read_lines(path) or []
        figure_lines += figures(host)
        failed = tiers["host"].failed
        parse_plain_tap(host, tiers["host"], problems, path)
        if tiers["host"].failed > failed or not host:
            problems.append(f"host: {path}:\n  " + "\n  ".join(host[-40:]))

    console = read_lines(args.console) if args.console else None
    results = read_lines(args.results) if args.results else None
    if args.console is not None:
        if console is None:
            problems.append("VM: no console log (QEMU did not start?)")
        else:
            parse_ktap(console, tiers["kunit"], problems, args.console)
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
        leaks, _ = kmemleak_reports(results or [])
        if leaks:
            problems.append(f"kmemleak: {len(leaks)} leaked objects, in {args.results}:\n  " +
                            "\n  ".join(kmemleak_reports(results)[1][:60]))

    for name in filter(None, args.expect.split(",")):
        if tiers[name].total() == 0:
            problems.append(f"{name}: the tier did not run at all")

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
