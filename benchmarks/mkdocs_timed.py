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

START = time.perf_counter()
root, report = Path(sys.argv[1]), Path(sys.argv[2])
own = 0.0

t0 = time.perf_counter()
from generator.site import plugin as site  # noqa: E402  (timed on purpose: the plugin's import is the project's cost)

own += time.perf_counter() - t0


def _timed(method: Any) -> Any:
    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        global own
        t = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            own += time.perf_counter() - t

    return wrapper


for name in dir(site.ImprovementsPlugin):
    if name.startswith("on_") and name in vars(site.ImprovementsPlugin):
        setattr(site.ImprovementsPlugin, name, _timed(getattr(site.ImprovementsPlugin, name)))

from mkdocs.__main__ import cli  # noqa: E402

os.chdir(root)
try:
    cli(["build", "--quiet"], standalone_mode=False)
finally:
    whole = time.perf_counter() - START
    report.write_text(json.dumps({"own": own, "in_process": whole}))
