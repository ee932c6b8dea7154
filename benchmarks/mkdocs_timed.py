"""`mkdocs build` in this process, timing the project's own part of it.

Usage: python benchmarks/mkdocs_timed.py ROOT REPORT.json

The whole process is what the benchmark times; this script adds to it only a clock around
each hook of the improvements plugin, and around importing the plugin (which loads the
project's models), so that the report can say how much of a site build is the project's.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

START, START_CPU = time.perf_counter(), time.process_time()
root, report = Path(sys.argv[1]), Path(sys.argv[2])
# The project's share, as wall time and as CPU time (on a shared machine the wall clock also
# counts waiting for a core).
own = own_cpu = 0.0

t0, c0 = time.perf_counter(), time.process_time()
from generator.site import plugin as site  # noqa: E402  (timed on purpose: the plugin's import is the project's cost)

own += time.perf_counter() - t0
own_cpu += time.process_time() - c0


def _timed(method: Any) -> Any:
    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        global own, own_cpu
        t, c = time.perf_counter(), time.process_time()
        try:
            return method(*args, **kwargs)
        finally:
            own += time.perf_counter() - t
            own_cpu += time.process_time() - c

    return wrapper


for name in dir(site.ImprovementsPlugin):
    if name.startswith("on_") and name in vars(site.ImprovementsPlugin):
        setattr(site.ImprovementsPlugin, name, _timed(getattr(site.ImprovementsPlugin, name)))

from mkdocs.__main__ import cli  # noqa: E402

os.chdir(root)
try:
    cli(["build", "--quiet"], standalone_mode=False)
finally:
    whole, whole_cpu = time.perf_counter() - START, time.process_time() - START_CPU
    report.write_text(json.dumps({"own": own, "in_process": whole, "own_cpu": own_cpu, "in_process_cpu": whole_cpu}))
