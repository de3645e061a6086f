#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host-tier tests of scripts/coverage.py, on a made-up tree; prints TAP.

Builds a tiny tree as the test kernel's looks to the script: one file we
add (with a KUnit test file it includes), one upstream file a patch adds a
function to, compiled with gcc's coverage and run, and the counters packed
as the guest packs them (a gzipped tar of the absolute paths, in base64).
Checks which lines and functions count, what is listed as never run, and
that missing, empty, truncated or foreign counters fail the report.
"""

import base64
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

sys.dont_write_bytecode = True

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "coverage.py")
KFD = "drivers/gpu/drm/amd/amdkfd"

NEW_C = """int kfd_new_hit(int x)
{
	return x + 1;
}

int kfd_new_cold(int x)
{
	if (x > 3)
		return x * 2;
	return x - 2;
}

#include "tests/kfd_new_test.c"
"""

NEW_TEST_C = """int kfd_new_test_case(int x)
{
	return x * 7;
}
"""

OLD_PRISTINE_C = """int kfd_old_upstream(int x)
{
	return x - 1;
}
"""

OLD_FINAL_C = OLD_PRISTINE_C + """
int kfd_old_added(int x)
{
	return x + 3;
}
"""

MAIN_C = """int kfd_new_hit(int x);
int kfd_old_added(int x);

int main(int argc, char **argv)
{
	(void)argv;
	if (argc > 1)
		return 0;
	return kfd_new_hit(argc) + kfd_old_added(argc) == 0;
}
"""

TESTS = []


def case(fn):
    TESTS.append(fn)
    return fn


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


class Tree:
    """top/ (kernel/, backport/6.12/), ksrc/, pristine/, built and run once."""

    def __init__(self, base, run_args=()):
        self.top = os.path.join(base, "top")
        self.ksrc = os.path.join(base, "ksrc")
        self.pristine = os.path.join(base, "pristine")
        self.out = os.path.join(base, "out")
        self.data = os.path.join(base, "gcov.b64")
        for root in (os.path.join(self.top, "kernel"), self.ksrc):
            write(os.path.join(root, KFD, "kfd_new.c"), NEW_C)
            write(os.path.join(root, KFD, "tests/kfd_new_test.c"), NEW_TEST_C)
        write(os.path.join(self.pristine, KFD, "kfd_old.c"), OLD_PRISTINE_C)
        write(os.path.join(self.ksrc, KFD, "kfd_old.c"), OLD_FINAL_C)
        write(os.path.join(self.top, "backport", "6.12", "0001-x.patch"),
              f"--- a/{KFD}/kfd_old.c\n+++ b/{KFD}/kfd_old.c\n")
        write(os.path.join(self.ksrc, "main.c"), MAIN_C)
        objs = []
        for name in ("kfd_new", "kfd_old"):
            obj = f"{KFD}/{name}.o"
            self.cc("--coverage", "-c", f"{KFD}/{name}.c", "-o", obj)
            objs.append(obj)
        self.cc("-c", "main.c", "-o", "main.o")
        self.cc("--coverage", "-o", "prog", "main.o", *objs)
        subprocess.run([os.path.join(self.ksrc, "prog"), *run_args],
                       cwd=self.ksrc, check=False)

    def cc(self, *args):
        subprocess.run(["gcc", "-O0", *args], cwd=self.ksrc, check=True)

    def gcda(self):
        return sorted(os.path.join(self.ksrc, KFD, f)
                      for f in os.listdir(os.path.join(self.ksrc, KFD))
                      if f.endswith(".gcda"))

    def pack(self, files=None, text=None, version=None):
        """The guest's format: ./<absolute path> in a tar.gz, base64,
        and ./proc-version when @version is given."""
        if text is None:
            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode="w:gz") as tar:
                for f in self.gcda() if files is None else files:
                    tar.add(f, arcname="." + f)
                if version is not None:
                    ver = os.path.join(self.ksrc, "proc-version")
                    write(ver, version)
                    tar.add(ver, arcname="./proc-version")
            text = base64.encodebytes(buf.getvalue()).decode()
            text = text.replace("\n", "\r\n")   # the guest's tty adds \r
        write(self.data, text)

    def report(self):
        out = subprocess.run(
            [sys.executable, SCRIPT, "--data", self.data, "--ksrc",
             self.ksrc, "--pristine", self.pristine, "--top", self.top,
             "--out", self.out],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            check=False)
        return out.returncode, out.stdout, out.stderr

    def check_build(self):
        out = subprocess.run(
            [sys.executable, SCRIPT, "--check-build", "--ksrc", self.ksrc,
             "--top", self.top],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            check=False)
        return out.returncode, out.stdout

    def uncovered(self):
        with open(os.path.join(self.out, "uncovered.txt"),
                  encoding="utf-8") as f:
            return f.read()


def last_line(text):
    return text.strip().splitlines()[-1] if text.strip() else ""


@case
def counts_our_lines_and_functions(base):
    """The new file whole, the patched file's added function only."""
    t = Tree(base)
    t.pack()
    rc, out, err = t.report()
    expect(rc == 0, f"exit {rc}: {err}")
    # kfd_new_hit and kfd_old_added ran; kfd_new_cold did not. Neither
    # kfd_old_upstream (upstream) nor the test file's function counts.
    expect("2 of 3 functions" in out, f"functions: {out}")
    expect(last_line(out).startswith("coverage: ") and
           last_line(out).endswith("% lines, 66% functions"),
           f"last line: {last_line(out)}")
    un = t.uncovered()
    expect("function kfd_new_cold (line 6)" in un, un)
    expect("8-10" in un and " 3" not in un, un)
    expect("kfd_old_upstream" not in un and "kfd_old.c" not in un, un)
    expect("kfd_new_test" not in out + un, "the KUnit test file counted")


@case
def nothing_run_is_zero(base):
    """A program that ran none of our code: 0%, every function listed."""
    t = Tree(base, run_args=("skip",))
    t.pack()
    rc, out, err = t.report()
    expect(rc == 0, f"exit {rc}: {err}")
    expect(last_line(out) == "coverage: 0% lines, 0% functions",
           f"last line: {last_line(out)}")
    un = t.uncovered()
    expect("function kfd_new_hit" in un and "function kfd_old_added" in un,
           un)


@case
def no_counters_fail(base):
    """No file, or an empty one (the guest never got there)."""
    t = Tree(base)
    rc, _, err = t.report()
    expect(rc == 1 and "no coverage counters" in err, f"no file: {rc} {err}")
    t.pack(text="")
    rc, _, err = t.report()
    expect(rc == 1 and "no coverage counters" in err, f"empty: {rc} {err}")


@case
def a_missing_object_fails(base):
    """Counters for one of our two objects only."""
    t = Tree(base)
    t.pack(files=[f for f in t.gcda() if "kfd_old" not in f])
    rc, _, err = t.report()
    expect(rc == 1 and "no counters for" in err and "kfd_old" in err,
           f"{rc} {err}")


@case
def truncated_counters_fail(base):
    """The guest stopped halfway through its base64."""
    t = Tree(base)
    t.pack()
    with open(t.data, encoding="utf-8") as f:
        text = f.read()
    t.pack(text=text[:len(text) // 2])
    rc, _, err = t.report()
    expect(rc == 1 and "unreadable" in err, f"{rc} {err}")


@case
def counters_of_another_build_fail(base):
    """Counters whose object has no notes in this tree."""
    t = Tree(base)
    t.pack()
    os.remove(os.path.join(t.ksrc, KFD, "kfd_new.gcno"))
    rc, _, err = t.report()
    expect(rc == 1 and "kfd_new.gcno" in err, f"{rc} {err}")


@case
def counters_of_another_compile_fail(base):
    """Counters from another compile of an object, or another kernel."""
    t = Tree(base)
    t.pack()
    # kfd_new compiled again: new notes and object, the counters are old
    t.cc("--coverage", "-c", f"{KFD}/kfd_new.c", "-o", f"{KFD}/kfd_new.o")
    rc, _, err = t.report()
    expect(rc == 1 and "counters of" in err and "kfd_new" in err and
           "another build" in err and "agree" in err, f"{rc} {err}")
    t = Tree(os.path.join(base, "2"))
    write(os.path.join(t.ksrc, ".version"), "7\n")
    t.pack(version="Linux version 6.12.57 (amdkfd-criu@build) #7 SMP\n")
    rc, _, err = t.report()
    expect(rc == 0, f"the same build: {rc} {err}")
    t.pack(version="Linux version 6.12.57 (amdkfd-criu@build) #6 SMP\n")
    rc, _, err = t.report()
    expect(rc == 1 and "kernel build #6" in err and "#7" in err,
           f"{rc} {err}")


@case
def check_build_finds_mismatched_notes(base):
    """--check-build: each object's notes must be from its own compile."""
    t = Tree(base)
    rc, out = t.check_build()
    expect(rc == 0 and not out.strip(), f"{rc} {out}")
    # Notes of a later compile beside the object of an earlier one
    obj = os.path.join(t.ksrc, KFD, "kfd_old.o")
    shutil.copyfile(obj, obj + ".keep")
    t.cc("--coverage", "-c", f"{KFD}/kfd_old.c", "-o", f"{KFD}/kfd_old.o")
    os.replace(obj + ".keep", obj)
    rc, out = t.check_build()
    expect(rc == 1 and out.split() == [f"{KFD}/kfd_old"], f"{rc} {out}")


def main():
    if not shutil.which("gcc") or not shutil.which("gcov"):
        print("1..0 # SKIP gcc and gcov are needed")
        return 4
    print(f"1..{len(TESTS)}")
    failed = 0
    for i, fn in enumerate(TESTS, 1):
        with tempfile.TemporaryDirectory() as base:
            try:
                fn(base)
                print(f"ok {i} - {fn.__doc__.strip().splitlines()[0]}")
            except (AssertionError, subprocess.CalledProcessError) as e:
                failed += 1
                print(f"# {e}")
                print(f"not ok {i} - {fn.__doc__.strip().splitlines()[0]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
