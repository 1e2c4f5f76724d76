#!/usr/bin/env python3
"""Runs a command and prints, as the last line of stderr, its exit status,
wall time and the peak resident memory of its largest process (the
kernel's own accounting): `MEASURE rc=0 wall_s=12.3 peak_rss_mib=456`.
The benchmark scripts read that line.

usage: measure.py COMMAND [ARG ...]
"""
import resource
import subprocess
import sys
import time

t = time.monotonic()
rc = subprocess.call(sys.argv[1:])
wall = time.monotonic() - t
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"MEASURE rc={rc} wall_s={wall:.1f} peak_rss_mib={rss:.0f}", file=sys.stderr)
sys.exit(rc)
