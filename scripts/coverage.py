#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""coverage.py - how much of our kernel code the test VM executed

Usage: scripts/coverage.py [--data FILE] [--ksrc DIR] [--pristine DIR]
                           [--top DIR] [--out DIR]
       scripts/coverage.py --check-build [--ksrc DIR] [--top DIR]

The debug kernel profiles our objects with gcov (scripts/build-kernel.sh
names them), and the guest sends their counters at the end of its check
run, after KUnit at boot and every selftests and e2e program, as a
gzipped tar in base64 on its third serial port (build/vm/gcov.b64).

This script unpacks them beside the objects' .gcno notes, has gcov turn
each into JSON and counts, for "our code":
  - every line and function of each file we add (kernel/ in this
    repository, without the KUnit tests themselves);
  - the lines our patches add to upstream files (their difference from
    the pristine copy), and the functions that start on such a line.
It prints one row per file and the line

  coverage: N% lines, N% functions

and writes the table (summary.txt) and, per file, each function that never
ran and each range of lines that never ran (uncovered.txt) to the output
directory. Exit 1 when there are no counters, or none for one of our
objects: a coverage figure must not quietly lose a file. Counters whose
build stamp is not their notes' fail with both stamps, and with the build
number of the kernel the guest ran when it is not the tree's.

--check-build checks the tree alone, after a build: the notes of each of
our objects must carry the build stamp its object carries. It prints the
objects that do not, one per line, and exits 1 if there are any.
"""

import argparse
import base64
import binascii
import gzip
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AMD = "drivers/gpu/drm/amd/"


class Fail(Exception):
    pass


def our_new_files(top):
    """Files kernel/ adds under the amd tree, the KUnit tests left out."""
    files = set()
    base = os.path.join(top, "kernel")
    for root, _, names in os.walk(os.path.join(base, AMD)):
        for name in names:
            path = os.path.relpath(os.path.join(root, name), base)
            if name.endswith((".c", ".h")) and "/tests/" not in path:
                files.add(path)
    return files


def patched_files(top):
    """Upstream files under the amd tree that the 6.12 backport changes.

    The debug lane, whose kernel make coverage reads, boots 6.12.
    """
    files = set()
    pdir = os.path.join(top, "backport", "6.12")
    for name in sorted(os.listdir(pdir)):
        if not name.endswith(".patch"):
            continue
        with open(os.path.join(pdir, name), encoding="utf-8") as f:
            for line in f:
                if line.startswith("+++ b/" + AMD):
                    path = line[len("+++ b/"):].strip()
                    # The backport's diff of our new files: those are
                    # measured whole, their tests not at all
                    if os.path.exists(os.path.join(top, "kernel", path)):
                        continue
                    if path.endswith((".c", ".h")):
                        files.add(path)
    return files


def added_lines(pristine, final):
    """Line numbers in @final that are not in @pristine (GNU diff)."""
    out = subprocess.run(
        ["diff", "--old-line-format=", "--unchanged-line-format=",
         "--new-line-format=%dn\n", pristine, final],
        stdout=subprocess.PIPE, text=True, check=False)
    if out.returncode > 1:
        raise Fail(f"diff {pristine} {final} failed")
    return {int(n) for n in out.stdout.split()}


def stamp(path):
    """The build stamp of a .gcno or .gcda file (after magic and version)."""
    with open(path, "rb") as f:
        head = f.read(12)
    return head[8:12].hex() if len(head) == 12 else None


def objects_of(top):
    """Our objects in the tree, by path without .o: what the build profiles."""
    return sorted({os.path.splitext(p)[0]
                   for p in our_new_files(top) | patched_files(top)
                   if p.endswith(".c")})


def check_build(ksrc, top):
    """The objects whose notes are not from the compile that made them."""
    bad = []
    for obj in objects_of(top):
        notes = os.path.join(ksrc, obj + ".gcno")
        try:
            with open(os.path.join(ksrc, obj + ".o"), "rb") as f:
                code = f.read()
            mine = stamp(notes)
        except OSError:
            bad.append(obj)
            continue
        if mine is None or bytes.fromhex(mine) not in code:
            bad.append(obj)
    return bad


def kernel_build(text):
    """The build number (#N) in a /proc/version line, or None."""
    m = re.search(r" #(\d+)", text)
    return int(m.group(1)) if m else None


def unpack(data, dest):
    """Decodes the guest's base64 tar into @dest; returns the .gcda paths."""
    try:
        with open(data, "rb") as f:
            raw = base64.b64decode(f.read(), validate=False)
    except OSError as e:
        raise Fail(f"no coverage counters: {e.strerror}: {data}") from e
    except binascii.Error as e:
        raise Fail(f"coverage counters unreadable ({e}): {data}") from e
    if not raw:
        raise Fail(f"no coverage counters: {data} is empty "
                   "(did the guest finish, and is CONFIG_GCOV_KERNEL on?)")
    try:
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r:gz") as tar:
            members = [m for m in tar.getmembers()
                       if m.isfile() and (m.name.endswith(".gcda") or
                                          m.name.endswith("proc-version"))]
            for m in members:
                m.name = os.path.normpath(m.name).lstrip("/")
                if m.name.startswith(".."):
                    raise Fail(f"a counter file outside the tar: {m.name}")
                tar.extract(m, dest)
    except (tarfile.TarError, OSError, EOFError, gzip.BadGzipFile) as e:
        raise Fail(f"coverage counters unreadable ({e}): {data}") from e
    return [m.name for m in members if m.name.endswith(".gcda")]


def object_path(gcda):
    """The object's path in the tree, from the guest's absolute path."""
    i = gcda.rfind("/" + AMD)
    if i < 0:
        return None
    return gcda[i + 1:-len(".gcda")]


def tree_note(ksrc, obj):
    """Whether the tree's object and notes agree, for a stamp mismatch."""
    try:
        with open(os.path.join(ksrc, obj + ".o"), "rb") as f:
            agree = bytes.fromhex(stamp(os.path.join(ksrc, obj + ".gcno"))) \
                in f.read()
    except (OSError, TypeError, ValueError):
        return "; the tree has no object for it"
    return "; in the tree, object and notes " + ("agree" if agree else
                                                  "disagree too")


def check_kernel(ksrc, work):
    """Fails when the guest ran another kernel build than the tree's."""
    try:
        with open(os.path.join(work, "gcda", "proc-version"),
                  encoding="utf-8", errors="replace") as f:
            guest = kernel_build(f.read())
        with open(os.path.join(ksrc, ".version"), encoding="utf-8") as f:
            tree = int(f.read().strip())
    except (OSError, ValueError):
        return
    if guest is not None and guest != tree:
        raise Fail(f"the guest ran kernel build #{guest}, the tree holds "
                   f"build #{tree}: the counters are from another kernel")


def run_gcov(ksrc, obj, gcda_file, work):
    """gcov's JSON for one object, its notes and counters side by side."""
    notes = os.path.join(ksrc, obj + ".gcno")
    if not os.path.exists(notes):
        raise Fail(f"no {obj}.gcno in the tree: the counters are from "
                   "another build")
    if stamp(notes) != stamp(gcda_file):
        raise Fail(f"the counters of {obj} are from another build of it "
                   f"(counters {stamp(gcda_file)}, notes {stamp(notes)}"
                   f"{tree_note(ksrc, obj)})")
    stem = os.path.join(work, obj.replace("/", "_"))
    shutil.copyfile(notes, stem + ".gcno")
    shutil.copyfile(gcda_file, stem + ".gcda")
    out = subprocess.run(["gcov", "--json-format", "--stdout",
                          stem + ".gcda"], cwd=ksrc, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, check=False)
    if out.returncode:
        raise Fail(f"gcov failed on {obj}: {out.stderr.strip()}")
    return [json.loads(line) for line in out.stdout.splitlines() if line]


class FileCov:
    """Counts of one source file, merged over every object that has it."""

    def __init__(self, path, lines_of_interest=None):
        self.path = path
        self.only = lines_of_interest   # None: every line
        self.lines = {}                 # line number -> hit
        self.functions = {}             # (start line, name) -> hit

    def wants(self, line):
        return self.only is None or line in self.only

    def add(self, entry):
        for ln in entry.get("lines", []):
            n = ln["line_number"]
            if self.wants(n):
                self.lines[n] = self.lines.get(n, False) or ln["count"] > 0
        for fn in entry.get("functions", []):
            key = (fn["start_line"], fn["name"])
            if self.wants(fn["start_line"]):
                hit = fn["execution_count"] > 0
                self.functions[key] = self.functions.get(key, False) or hit

    def counts(self):
        return (sum(self.lines.values()), len(self.lines),
                sum(self.functions.values()), len(self.functions))


def pct(hit, total):
    return 100 * hit // total if total else 100


def ranges(numbers):
    """[3, 4, 5, 9] -> "3-5, 9"."""
    out, start, prev = [], None, None
    for n in sorted(numbers):
        if start is None:
            start = prev = n
        elif n == prev + 1:
            prev = n
        else:
            out.append(f"{start}-{prev}" if prev != start else f"{start}")
            start = prev = n
    if start is not None:
        out.append(f"{start}-{prev}" if prev != start else f"{start}")
    return ", ".join(out)


def collect(args, work):
    new = our_new_files(args.top)
    patched = patched_files(args.top) - new
    files = {p: FileCov(p) for p in new}
    for p in patched:
        files[p] = FileCov(p, added_lines(os.path.join(args.pristine, p),
                                          os.path.join(args.ksrc, p)))
    seen = set()
    gcdas = unpack(args.data, os.path.join(work, "gcda"))
    check_kernel(args.ksrc, work)
    for gcda in gcdas:
        obj = object_path(gcda)
        if obj is None:
            continue
        seen.add(os.path.normpath(obj))
        for doc in run_gcov(args.ksrc, obj, os.path.join(work, "gcda", gcda),
                            work):
            for entry in doc.get("files", []):
                path = os.path.normpath(entry["file"])
                if path in files:
                    files[path].add(entry)
    missing = sorted(os.path.splitext(p)[0] for p in new | patched
                     if p.endswith(".c") and
                     os.path.splitext(p)[0] not in seen)
    if missing:
        raise Fail("no counters for " + ", ".join(missing) +
                   " (not profiled, or not built into the test kernel)")
    return files


def report(files, out_dir):
    rows, uncovered = [], []
    totals = [0, 0, 0, 0]
    for path in sorted(files):
        cov = files[path]
        lh, lt, fh, ft = cov.counts()
        if not lt and not ft:
            continue
        totals = [a + b for a, b in zip(totals, (lh, lt, fh, ft))]
        kind = "new" if cov.only is None else "added"
        rows.append(f"{path[len(AMD):]:<42} {kind:<5} "
                    f"{lh:>5}/{lt:<5} {pct(lh, lt):>3}%  "
                    f"{fh:>4}/{ft:<4} {pct(fh, ft):>3}%")
        cold = [n for n, hit in cov.lines.items() if not hit]
        fns = sorted(k for k, hit in cov.functions.items() if not hit)
        if cold or fns:
            uncovered.append(f"{path}:")
            uncovered += [f"  function {name} (line {line})"
                          for line, name in fns]
            if cold:
                uncovered.append(f"  lines {ranges(cold)}")
    lh, lt, fh, ft = totals
    head = f"{'file':<42} {'kind':<5} {'lines':>11}  {'functions':>14}"
    line = f"coverage: {pct(lh, lt)}% lines, {pct(fh, ft)}% functions"
    detail = (f"our code: {lh} of {lt} lines, {fh} of {ft} functions "
              "executed in the test VM")
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "summary.txt"), "w",
              encoding="utf-8") as f:
        f.write("\n".join([head] + rows + [detail, line]) + "\n")
    with open(os.path.join(out_dir, "uncovered.txt"), "w",
              encoding="utf-8") as f:
        f.write("\n".join(uncovered) + "\n")
    print("\n".join([head] + rows + [detail, line]))


def main():
    build = os.path.join(TOP, "build")
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.path.join(build, "vm", "gcov.b64"))
    ap.add_argument("--ksrc", default=os.path.join(build, "linux"))
    ap.add_argument("--pristine", default=os.path.join(build, "pristine"))
    ap.add_argument("--top", default=TOP)
    ap.add_argument("--out", default=os.path.join(build, "coverage"))
    ap.add_argument("--check-build", action="store_true")
    args = ap.parse_args()
    if args.check_build:
        bad = check_build(args.ksrc, args.top)
        for obj in bad:
            print(obj)
        return 1 if bad else 0
    try:
        with tempfile.TemporaryDirectory() as work:
            report(collect(args, work), args.out)
    except Fail as e:
        print(f"coverage: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
