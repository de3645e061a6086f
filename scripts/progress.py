#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Run a long step of "make check" or "make demo" and show how far it got.

Runs COMMAND with its output in a log file and follows the logs the step
writes. On a terminal one line updates in place every second; otherwise
(CI logs) a plain line is printed every --interval seconds (default 30).

kbuild  COMMAND is a kernel build (kbuild's quiet output) writing to
        --output: objects compiled out of --total expected, time elapsed
        and an estimate of the time left. When it fails, the compiler's
        error (or the log's last lines) is printed with the log's name.
        With --follow, the objects are counted in that file instead, for
        a step whose build log is not its output (DKMS's make.log).
vm      COMMAND runs the test VM: the phase read from --console (boot,
        KUnit suites) and from --results (the guest's "### progress"
        lines: which test programs run, how many are done).

Exits with COMMAND's status (130 when interrupted).
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import time

# kbuild's quiet lines ("  CC      init/main.o") and, with V=1, the
# compiler's own command line; one object each.
OBJECT_RE = re.compile(r"^  (?:CC|AS)(?: \[M\])?\s+\S+\.o$|\s-c\s+-o\s+\S+\.o\s")
QUIET_RE = re.compile(r"^  ([A-Z][A-Z0-9_]*(?: \[M\])?)\s+(\S+)$")
ERROR_RE = re.compile(r"\berror\b|\bError \d+|undefined reference|"
                      r"Segmentation fault|\bKilled\b", re.IGNORECASE)
TS_RE = re.compile(r"^\[\s*\d+\.\d+\]\s?")
RESULT_RE = re.compile(r"^(?:not )?ok\b")


def duration(seconds):
    """Format SECONDS as "45s" or "3m05s"."""
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    return f"{seconds // 60}m{seconds % 60:02d}s"


class LogFollower:
    """Hand out the complete lines appended to a file since the last call."""

    def __init__(self, path):
        self.path = path
        self.offset = 0
        self.partial = b""

    def new_lines(self):
        try:
            with open(self.path, "rb") as f:
                if os.fstat(f.fileno()).st_size < self.offset:
                    self.offset, self.partial = 0, b""
                f.seek(self.offset)
                data = f.read()
        except (FileNotFoundError, TypeError):
            return []
        self.offset += len(data)
        lines = (self.partial + data).split(b"\n")
        self.partial = lines.pop()
        return [l.decode(errors="replace").rstrip("\r") for l in lines]


class KbuildProgress:
    """Objects compiled against the number a build is expected to compile."""

    def __init__(self, total):
        self.total = total
        self.objects = 0
        self.last_step = ""

    def feed(self, line):
        if OBJECT_RE.search(line):
            self.objects += 1
        m = QUIET_RE.match(line)
        if m:
            self.last_step = f"{m.group(1)} {m.group(2)}"

    def describe(self, elapsed):
        done, total = self.objects, self.total
        if total and done < total:
            text = (f"{done} of ~{total} objects ({100 * done // total}%), "
                    f"{duration(elapsed)} elapsed")
            # The first objects (and the tree's preparation) say little
            # about the rate.
            if done >= 20 and elapsed >= 10:
                text += f", about {duration(elapsed * (total - done) / done)} left"
            return text
        text = f"{done} objects, {duration(elapsed)} elapsed"
        if total and self.last_step:
            text += f", now {self.last_step}"
        return text

    def final(self, elapsed):
        return f"{self.objects} objects compiled, {duration(elapsed)}"


def failure_excerpt(lines, limit=30):
    """The lines of a failed kbuild log that say why, kbuild's own
    progress lines left out: from just before the first error on, or the
    last lines when nothing looks like an error."""
    kept = [l for l in lines if not QUIET_RE.match(l) and
            not re.match(r"^make(\[\d+\])?: (Entering|Leaving) directory", l)]
    first = next((i for i, l in enumerate(kept) if ERROR_RE.search(l)), None)
    if first is None:
        return kept[-limit:]
    start = first
    # gcc names the file and function on the lines before the error.
    while start > 0 and first - start < 4 and \
            re.search(r"In function|In file included|^\s+from |: note:", kept[start - 1]):
        start -= 1
    excerpt = kept[start:start + limit]
    tail = [l for l in kept[start + limit:] if re.search(r"\*\*\*", l)]
    return excerpt + tail[-3:]


class VmProgress:
    """Phase of a VM run: boot, KUnit at boot, then the guest's tests."""

    def __init__(self):
        self.kernel = False
        self.kunit_planned = None
        self.kunit_done = 0
        self.kunit_suite = ""
        self.plan = None
        self.running = []
        self.done = 0
        self.failed = []
        self.collecting = False
        self.finished = False

    def feed_console(self, line):
        line = TS_RE.sub("", line)
        text = line.strip()
        depth = (len(line) - len(line.lstrip(" "))) // 4
        if "Linux version" in line:
            self.kernel = True
        elif depth == 0 and self.kunit_planned is None and re.match(r"^1\.\.\d+$", text):
            self.kunit_planned = int(text[3:])
        elif depth == 0 and RESULT_RE.match(text):
            self.kunit_done += 1
        elif depth == 1 and text.startswith("# Subtest: "):
            self.kunit_suite = text[len("# Subtest: "):]

    def feed_results(self, line):
        words = line.split()
        if words[:2] == ["###", "progress"] and len(words) >= 4:
            self.progress(words[2], words[3:])
        elif line.startswith("### begin"):
            self.collecting = True
        elif line.startswith("### done"):
            self.finished = True

    def progress(self, what, args):
        if what == "plan":
            self.plan = int(args[0])
        elif what == "start" and len(args) >= 2:
            self.running.append(f"{args[0]}/{args[1]}")
        elif what == "end" and len(args) >= 3:
            name = f"{args[0]}/{args[1]}"
            if name in self.running:
                self.running.remove(name)
            self.done += 1
            if args[2] not in ("0", "4"):
                self.failed.append(name)

    def phase(self):
        if self.finished:
            return "the guest finished"
        if self.plan is not None or self.running or self.done:
            text = f"{self.done} of {self.plan or '?'} test programs done"
            if self.failed:
                text += f" ({len(self.failed)} failed: {', '.join(self.failed)})"
            if self.collecting:
                return text + ", collecting results and scanning for leaks"
            if self.running:
                text += ", running " + ", ".join(self.running)
            return text
        if self.kunit_planned is not None:
            text = f"KUnit at boot: {self.kunit_done} of {self.kunit_planned} suites done"
            if self.kunit_suite and self.kunit_done < self.kunit_planned:
                text += f", running {self.kunit_suite}"
            return text
        return "booting the kernel" if self.kernel else "starting QEMU"

    # The time first: the names of the programs running may not fit.
    def describe(self, elapsed):
        return f"{duration(elapsed)}, {self.phase()}"

    def final(self, elapsed):
        return f"{duration(elapsed)}, {self.phase()}"


class Display:
    """One line that updates in place on a terminal; on anything else a
    plain line every INTERVAL seconds."""

    def __init__(self, stream, label, interval, tty=None):
        self.stream = stream
        self.label = label
        self.interval = interval
        self.tty = stream.isatty() if tty is None else tty
        self.last = None
        self.shown = False

    def width(self):
        """Columns of the terminal; a pty nobody sized reports 0."""
        try:
            columns = os.get_terminal_size(self.stream.fileno()).columns
        except (OSError, ValueError, AttributeError):
            columns = 0
        return columns if columns >= 20 else 80

    def update(self, text, now):
        line = f"{self.label}: {text}"
        if self.tty:
            self.stream.write("\r" + line[:self.width() - 1] + "\033[K")
            self.shown = True
        elif self.last is None or now - self.last >= self.interval:
            self.stream.write(line + "\n")
            self.last = now
        self.stream.flush()

    def finish(self, text):
        line = f"{self.label}: {text}"
        if self.tty and self.shown:
            self.stream.write("\r\033[K")
        self.stream.write(line + "\n")
        self.stream.flush()


def alive(proc):
    return proc.poll() is None


def follow(args, proc, display):
    """Update DISPLAY from the logs until PROC exits."""
    start = time.monotonic()
    if args.mode == "kbuild":
        state = KbuildProgress(args.total)
        feeds = [(LogFollower(args.follow or args.output), state.feed)]
    else:
        state = VmProgress()
        feeds = [(LogFollower(args.console), state.feed_console),
                 (LogFollower(args.results), state.feed_results)]
    while True:
        running = alive(proc)
        for follower, feed in feeds:
            for line in follower.new_lines():
                feed(line)
        now = time.monotonic()
        if not running:
            display.finish(state.final(now - start))
            return
        display.update(state.describe(now - start), now)
        time.sleep(args.poll)


def report_failure(args, rc):
    if args.mode != "kbuild":
        return
    path = args.output
    if args.follow and os.path.exists(args.follow):
        path = args.follow
    log = LogFollower(path).new_lines()
    print(f"{args.label} failed (exit status {rc}); from {path}:", file=sys.stderr)
    for line in failure_excerpt(log):
        print("  " + line, file=sys.stderr)
    print(f"(the whole log: {path})", file=sys.stderr)


def interrupted(signum, frame):
    global caught_signal
    caught_signal = signum
    raise KeyboardInterrupt


caught_signal = signal.SIGINT


def die_of_signal(signum):
    """Die of SIGNUM so that the calling shell stops too: bash carries on
    after a child that merely exited 130."""
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    return 128 + signum


def parse_args(argv):
    ap = argparse.ArgumentParser(
        usage="%(prog)s {kbuild,vm} --output FILE [options] -- COMMAND [ARG...]",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=("kbuild", "vm"))
    ap.add_argument("--output", required=True,
                    help="file that receives COMMAND's output (truncated first)")
    ap.add_argument("--label", default="progress", help="prefix of each line")
    ap.add_argument("--total", type=int, default=0,
                    help="kbuild: objects the build is expected to compile (0: unknown)")
    ap.add_argument("--follow",
                    help="kbuild: the build log to count objects in, when "
                         "it is not COMMAND's output")
    ap.add_argument("--console", help="vm: the kernel console log")
    ap.add_argument("--results", help="vm: the guest's results port log")
    ap.add_argument("--interval", type=float, default=30,
                    help="seconds between lines when not on a terminal")
    ap.add_argument("--poll", type=float, default=1, help=argparse.SUPPRESS)
    ap.add_argument("command", nargs="+", help="the step to run (after --)")
    return ap.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    display = Display(sys.stderr, args.label, args.interval)
    # A kill of this process must not leave the step running unseen.
    signal.signal(signal.SIGINT, interrupted)
    signal.signal(signal.SIGTERM, interrupted)
    with open(args.output, "wb") as out:
        proc = subprocess.Popen(args.command, stdin=subprocess.DEVNULL,
                                stdout=out, stderr=subprocess.STDOUT)
    try:
        try:
            follow(args, proc, display)
        except (OSError, ValueError, IndexError) as e:
            # A broken display must not break the step it shows.
            print(f"{args.label}: no progress shown ({e}); waiting", file=sys.stderr)
        rc = proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        proc.wait()
        display.finish("interrupted")
        return die_of_signal(caught_signal)
    if rc:
        report_failure(args, rc)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
