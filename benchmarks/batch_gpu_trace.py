#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""Where the GPU's time went in a batch run, from Nsight Systems' cuda_gpu_trace report (CSV):
host-to-device copies, kernels, device-to-host copies, and how much of the run the GPU was busy (the union of
all its operations' intervals, over the first-to-last GPU operation and over the run's wall time).

    batch_gpu_trace.py TRACE.csv [WALL_SECONDS]"""
import csv
import sys


def main():
    path = sys.argv[1]
    wall = float(sys.argv[2]) if len(sys.argv) > 2 else None
    spans, totals = [], {"H2D": 0.0, "kernels": 0.0, "D2H": 0.0, "other copies": 0.0}
    with open(path, newline="") as f:
        rows = [line for line in f if not line.startswith(("Processing", "NOTICE", "WARNING"))]
    for row in csv.DictReader(rows):
        start, duration = float(row["Start (ns)"]), float(row["Duration (ns)"])
        name = row.get("Name", "")
        spans.append((start, start + duration))
        # nsys names copies "[CUDA memcpy HtoD]" (older) or "[CUDA memcpy Host-to-Device]" (newer).
        if "HtoD" in name or "Host-to-Device" in name:
            totals["H2D"] += duration
        elif "DtoH" in name or "Device-to-Host" in name:
            totals["D2H"] += duration
        elif name.startswith("[CUDA"):
            totals["other copies"] += duration
        else:
            totals["kernels"] += duration
    if not spans:
        print("gpu trace: no GPU operations recorded")
        return
    spans.sort()
    busy, (current_start, current_end) = 0.0, spans[0]
    for start, end in spans[1:]:
        if start > current_end:
            busy += current_end - current_start
            current_start, current_end = start, end
        else:
            current_end = max(current_end, end)
    busy += current_end - current_start
    active = spans[-1][1] - spans[0][0]
    print("gpu trace: " + ", ".join(f"{k} {v / 1e9:.2f} s" for k, v in totals.items())
          + f" ({len(spans)} operations)")
    line = f"gpu busy: {busy / 1e9:.2f} s = {100 * busy / active:.0f}% of the {active / 1e9:.2f} s from first to last GPU op"
    if wall:
        line += f", {100 * busy / 1e9 / wall:.0f}% of the run's {wall:.2f} s wall"
    print(line)


if __name__ == "__main__":
    main()
