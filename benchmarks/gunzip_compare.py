#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""The gunzip stage's reference and verdict (benchmarks/device.sh gunzip), for one .nii.gz.

Times rapidgzip (PyPI; the two-stage parallel method ours also follows) reading FILE into memory on each thread
count, checks its bytes against the size and CRC-32 that svdlrGunzipBenchmark printed for libdeflate's output, and
then applies the rule our decoder is kept by: it stays only if it saves at least 0.2 s on that file against the
best library the tools could link instead (libdeflate or ISA-L, one thread each). Whichever decoder runs, the rest
of the tool's read is the same, so what the read gains or loses end to end is the decoders' difference; the tool's
own read (its "steps:" line: read + checks) is printed beside it, and rapidgzip's margin is given as a reference.

  gunzip_compare.py FILE.gz --benchmark BENCHMARK.log [--tool-log TOOL.log ...] [--threads 1,2,4,8,16] [--repeat 3]
"""

import argparse
import os
import re
import sys
import time
import zlib

KEEP_MARGIN_S = 0.2  # the rule: ours must beat the best library by this much end to end
ROW = re.compile(r"^(libdeflate|isa-l|ours), +(\d+) threads?: +([\d.]+) s")
REFERENCE = re.compile(r"^reference: (\d+) bytes, CRC-32 ([0-9a-f]{8})")
STEPS = re.compile(r"steps: +read ([\d.]+) s, checks ([\d.]+) s")


def benchmark_rows(log):
    """(bytes, crc) of libdeflate's output and {(decoder, threads): seconds} from svdlrGunzipBenchmark's output."""
    reference, rows = None, {}
    with open(log) as f:
        for line in f:
            if match := REFERENCE.match(line):
                reference = int(match[1]), int(match[2], 16)
            elif (match := ROW.match(line)) and "DIFFER" not in line:
                rows[(match[1], int(match[2]))] = float(match[3])
    return reference, rows


def tool_read_seconds(logs):
    """The fastest read + checks of the tool's runs (their "steps:" lines), or None."""
    times = []
    for log in logs:
        with open(log) as f:
            times += [float(m[1]) + float(m[2]) for m in map(STEPS.search, f) if m]
    return min(times) if times else None


def time_rapidgzip(path, threads, repeat, reference):
    """{threads: seconds} of rapidgzip reading `path` into memory, best of `repeat`; prints one line each."""
    try:
        import rapidgzip
    except ImportError:
        print("rapidgzip: not installed (gpu_bundle.sh puts its wheel into whl/)")
        return {}
    size, crc = reference
    seconds = {}
    for n in threads:
        best, same = float("inf"), True
        for _ in range(repeat):
            start = time.perf_counter()
            with rapidgzip.open(path, parallelization=n) as f:
                data = f.read()
            best = min(best, time.perf_counter() - start)
            same = same and len(data) == size and zlib.crc32(data) == crc
            del data
        flag = "" if same else " -- BYTES DIFFER FROM LIBDEFLATE'S"
        print(f"rapidgzip,  {n:2d} thread{'s:' if n > 1 else ': '} {best:.3f} s, {size / 1e6 / best:.0f} MB/s{flag}")
        if same:
            seconds[n] = best
    return seconds


def verdict(name, rows, rapid, tool_read):
    """The rule's answer for one file, in one line."""
    ours = [(threads, s) for (decoder, threads), s in rows.items() if decoder == "ours" and threads <= os.cpu_count()]
    libraries = [(s, decoder) for (decoder, _), s in rows.items() if decoder != "ours"]
    if not ours or not libraries:
        return f"verdict {name}: incomplete (no row for ours or for a library)"
    threads, ours_s = max(ours)  # what the tool runs: every core
    library_s, library = min(libraries)
    saving = library_s - ours_s
    keep = "KEEP ours" if saving >= KEEP_MARGIN_S else f"DROP ours for {library}"
    line = (f"verdict {name}: ours {ours_s:.3f} s on {threads} threads, best library {library} {library_s:.3f} s: "
            f"ours saves {saving:+.3f} s (rule: keep ours only if >= {KEEP_MARGIN_S} s) -> {keep}")
    if tool_read is not None:
        line += f"; the tool's read + checks {tool_read:.3f} s, {tool_read + saving:.3f} s with {library}"
    if rapid:
        rapid_threads, rapid_s = min(rapid.items(), key=lambda item: item[1])
        line += f"; rapidgzip's best {rapid_s:.3f} s on {rapid_threads} thread(s) ({rapid_s - ours_s:+.3f} s against ours)"
    return line


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file")
    parser.add_argument("--benchmark", required=True, help="svdlrGunzipBenchmark's output for FILE")
    parser.add_argument("--tool-log", nargs="*", default=[], help="the tool's output reading FILE (its steps: line)")
    parser.add_argument("--threads", default="1,2,4,8,16")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    reference, rows = benchmark_rows(args.benchmark)
    if reference is None:
        print(f"verdict {os.path.basename(args.file)}: no reference in {args.benchmark}")
        return 1
    rapid = time_rapidgzip(args.file, [int(n) for n in args.threads.split(",")], args.repeat, reference)
    print(verdict(os.path.basename(args.file), rows, rapid, tool_read_seconds(args.tool_log)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
