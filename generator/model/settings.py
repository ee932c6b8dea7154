"""The names of a run's settings, written once: what importers fill, mappings may name,
`import` range-checks and matching compares all read these tuples."""

from __future__ import annotations

# Settings that define a run, in the order pages list them. Matching and comparability read
# these names; importers fill what their format records and leave the rest out.
SETTING_ORDER: tuple[str, ...] = (
    "engine",
    "engine_version",
    "model",
    "gpu_count",
    "tp_size",
    "dp_size",
    "pp_size",
    "ep_size",
    "dataset",
    "input_len",
    "output_len",
    "range_ratio",
    "num_prompts",
    "max_concurrency",
    "batch_size",
    "request_rate",
    "burstiness",
    "client",
    "backend",
    "label",
    "tag",
    "run_name",
    "date",
)
# The parallel layout: how many GPUs, split how.
LAYOUT = ("gpu_count", "tp_size", "dp_size", "pp_size", "ep_size")
# Settings that count something: a length may be 0 (a prefill-only run), the others start at 1.
LENGTHS = ("input_len", "output_len")
COUNTS = ("max_concurrency", "batch_size", "num_prompts", *LAYOUT)
# Settings that are any finite number.
NUMBERS = ("range_ratio", "burstiness")
# What an `import_formats:` mapping may fill: the settings above (`client` is the importer's
# own name, never a column), `concurrency` (the configured limit, just before
# `max_concurrency`), and how the run was made (`Run.launch`, `Run.started`).
MAPPED_SETTINGS: tuple[str, ...] = (
    *(
        name
        for key in SETTING_ORDER
        if key != "client"
        for name in (("concurrency", key) if key == "max_concurrency" else (key,))
    ),
    "launch",
    "started",
)
