#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""Checks of "kfdcrit decode --format json" output, for tests/run-tests.sh.

Usage:
  kc_json.py schema FIELDS JSON...    each JSON parses, is schema 1, each
                                      record's fields are exactly those of
                                      its type in FIELDS, in that order, and
                                      each "data" hex (--data) matches its
                                      byte count and FNV-1a 64 hash
  kc_json.py agree VERDICTS CHECKS KFDCRIT [--allow]
                                      kc_fuzz_verdict's errnos (VERDICTS) and
                                      "kfdcrit check DIR"'s lines (CHECKS)
                                      agree on every image; with --allow,
                                      except where the image has one of the
                                      documented differences of the fuzz
                                      target's model (decoded with KFDCRIT)

The JSON round trip goes through "kfdcrit encode" (tests/run-tests.sh).
"""
import errno
import json
import os
import re
import subprocess
import sys


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def load_fields(path):
    fields = {}
    with open(path) as f:
        for line in f:
            line = line.split("#")[0].split()
            if not line:
                continue
            fields[line[0]] = [(n, int(s)) for n, s in
                               (x.split(":") for x in line[1:])]
    return fields


def load_json(path):
    with open(path) as f:
        return json.load(f)


def check_schema(fields, doc):
    if doc.get("schema") != 1:
        return "schema is not 1"
    for key in ("file", "size", "header", "records", "complete",
                "trailing_bytes", "error"):
        if key not in doc:
            return "no key " + key
    for rec in doc["records"]:
        want = [] if rec["skipped"] else [n for n, _ in fields[rec["type"]]]
        if list(rec["fields"]) != want:
            return "record at %d: fields %s, schema %s" % (
                rec["offset"], list(rec["fields"]), want)
    return None


def check_hashes(doc):
    for rec in doc["records"]:
        data = rec["data"]
        if not data:
            continue
        raw = bytes.fromhex(data["hex"])
        if len(raw) != data["bytes"] or "%016x" % fnv1a64(raw) != data["fnv1a64"]:
            return "record at %d: data does not match its size or hash" % rec["offset"]
    return None


def divergence(doc):
    """The fuzz target validates each GPU record as it arrives (RESTORE
    validates them once the metadata is read, so a reader error later in
    the stream wins)."""
    for rec in doc["records"]:
        f = rec["fields"]
        if rec["type"] == "GPU" and (f["gpu_id"] == 0 or
                                     not 1 <= f["num_xcc"] <= 16 or
                                     f["flags"] & ~1):
            return True
    return False


def check_files(fields, paths):
    for path in paths:
        doc = load_json(path)
        err = check_schema(fields, doc) or check_hashes(doc)
        if err:
            return "%s: %s" % (path, err)
    return None


def check_verdicts(lines):
    """The errno of each stream in "kfdcrit check DIR" output, by name."""
    got = {}
    for line in lines:
        m = re.match(r"(\S+?): (ok, .*|offset .*: (\w+))$", line.strip())
        if m:
            got[os.path.basename(m.group(1))] = (
                0 if m.group(3) is None else getattr(errno, m.group(3), -1))
    return got


def agree(verdicts, checks, kfdcrit, allow):
    with open(checks) as f:
        text = f.read()
    if "Sanitizer" in text or "runtime error" in text:
        print("# sanitizer report in " + checks)
        return 1
    got = check_verdicts(text.splitlines())
    total = differ = allowed = 0
    with open(verdicts) as f:
        for line in f:
            want, path = line.split(None, 1)
            path = path.strip()
            name = os.path.basename(path)
            total += 1
            if got.get(name) == int(want):
                continue
            if allow:
                out = subprocess.run([kfdcrit, "decode", "--format", "json", path],
                                     capture_output=True, text=True).stdout
                if divergence(json.loads(out)):
                    allowed += 1
                    continue
            print("# %s: fuzz model %s, kfdcrit check %s" % (path, want, got.get(name)))
            differ += 1
    print("# %s: %d images, %d differ, %d documented differences" %
          (os.path.dirname(verdicts), total, differ, allowed))
    return 0 if total and not differ else 1


def main(argv):
    if len(argv) >= 4 and argv[1] == "schema":
        err = check_files(load_fields(argv[2]), argv[3:])
    elif len(argv) in (5, 6) and argv[1] == "agree":
        return agree(argv[2], argv[3], argv[4], argv[5:] == ["--allow"])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    if err:
        print(err)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
