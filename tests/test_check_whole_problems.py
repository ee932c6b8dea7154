"""Each of `check`'s rules, read whole: the place, the code, the message and the hint a user gets.

Other tests find a problem by its code and a fragment of its words; a rule that pointed at the
wrong column, lost its hint or dropped one of the texts it reads passed them (a mutation run
over `checks/` said so, issue 35). Here small records break the rules, each on a line of its
own, and the whole list `check --format json` prints is compared, field by field.
"""

from __future__ import annotations

from pathlib import Path

from conftest import FIXTURES, run_cli

ZWSP = "\u200b"  # a zero-width space: on the page nothing, to bash a character

RECORD = f"""\
title: X
tier: 1
status: proposed
hypothesis: h
setup:
  base_command: "python -m sglang.launch_server; rm -rf /"
  engine: {{name: sglang, image: "lmsysorg/sglang:v0.5.9{ZWSP}"}}
change:
  inside: ["pip install flashinfer\\nrm x", "echo {"0123456789" * 7}{ZWSP}xyz{"0123456789" * 4}"]
  image: "lmsysorg/sglang:dev{ZWSP}"
  flags: [{{flag: --served-model-name, value: "glm{ZWSP}5"}}, "--enable-metrics", "--host 0.0.0.0|tee"]
  before: ["nvidia-smi -pm 1{ZWSP}"]
  base_command: "python -m sglang.launch_server && true"
  env: {{"A;touch x": "1", B: "2{ZWSP}", C: "ab{ZWSP}{"c" * 57}", D: "ab{ZWSP}{"d" * 58}"}}
references:
  - {{title: protocol-relative, url: "//example.com/page"}}
  - {{title: up, url: "a/../.."}}
  - {{title: slash, url: "../notes.txt/"}}
results:
  - label: r
    run: sglang-serving-c32-0000000000
    baseline_from: {{result: no-such-label}}
  - label: p
    paired: true
    metrics: {{ttft_mean: [1, 2, 3], output_throughput: [5, 6, 7]}}
    baseline: {{output_throughput: [5, 6]}}
variants:
  - label: two GPUs
    outcome: diagnostic
    setup: {{note: two of the eight GPUs}}
    results:
      - label: own setup
        concurrency: 1024
        paired: true
        metrics: {{output_throughput: [5, 6, 7]}}
"""

WORDS_HINT = (
    "quote it ('...') if it is text for the program; a command to run first belongs in `before:`, "
    "and a flag written as a mapping passes its `value` as one argument, exactly as written"
)
LINK_HINT = "link a page under docs/ relative to docs/improvements/, or give a full https:// URL"
UNSEEN = "which a reader cannot see"
SHOWN = "printed for a shell, what the page shows would not be what runs"


def _problem(line: int, col: int, code: str, message: str, hint: str | None) -> dict[str, object]:
    return {
        "path": "improvements/01-x.yaml",
        "line": line,
        "col": col,
        "code": code,
        "message": message,
        "hint": hint,
        "severity": "error",
    }


EXPECTED = [
    # The setup's base command is split into words like any command; `;` there is an operator.
    _problem(
        6,
        17,
        "shell-syntax",
        "`setup.base_command`: bash reads `;` at character 31 as an operator, not as part of a word; "
        "the printed command would pass it to the program as text",
        WORDS_HINT,
    ),
    # The setup's image is printed for a shell too.
    _problem(
        7,
        33,
        "invisible-character",
        f"`setup.engine.image` holds U+200B (ZERO WIDTH SPACE), {UNSEEN}, at character 23 of "
        f"`lmsysorg/sglang:v0.5.9\\u200b`: {SHOWN}",
        "delete it (retype the text around it)",
    ),
    # A step inside the container, like one before it, is one line.
    _problem(
        9,
        12,
        "shell-syntax",
        "`change.inside[0]` holds a line break (character 23): a step is one line",
        "write each command as its own step, in order",
    ),
    # A long text is shown by the 20 characters either side of what hides.
    _problem(
        9,
        44,
        "invisible-character",
        f"`change.inside[1]` holds U+200B (ZERO WIDTH SPACE), {UNSEEN}, at character 76 of "
        f"`01234567890123456789\\u200bxyz0123456789012345`: {SHOWN}",
        "delete it (retype the text around it)",
    ),
    # The change's image, a flag's value in the mapping form, an environment value: each at its place.
    _problem(
        10,
        10,
        "invisible-character",
        f"`change.image` holds U+200B (ZERO WIDTH SPACE), {UNSEEN}, at character 20 of "
        f"`lmsysorg/sglang:dev\\u200b`: {SHOWN}",
        "delete it (retype the text around it)",
    ),
    _problem(
        11,
        46,
        "invisible-character",
        f"`change.flags[0].value` holds U+200B (ZERO WIDTH SPACE), {UNSEEN}, at character 4 of `glm\\u200b5`: {SHOWN}",
        "delete it (retype the text around it)",
    ),
    # A flag in the string form is words; a flag without a value before it is passed over.
    _problem(
        11,
        76,
        "shell-syntax",
        "`change.flags[2]`: bash reads `|` at character 8 as an operator, not as part of a word; "
        "the printed command would pass it to the program as text",
        WORDS_HINT,
    ),
    _problem(
        12,
        12,
        "invisible-character",
        f"`change.before[0]` holds U+200B (ZERO WIDTH SPACE), {UNSEEN}, at character 17 of "
        f"`nvidia-smi -pm 1\\u200b`: {SHOWN}",
        "delete it (retype the text around it)",
    ),
    _problem(
        13,
        17,
        "shell-syntax",
        "`change.base_command`: bash reads `&&` at character 32 as an operator, not as part of a word; "
        "the printed command would pass it to the program as text",
        WORDS_HINT,
    ),
    # At the name, not at its value.
    _problem(
        14,
        9,
        "invalid-value",
        "environment name 'A;touch x' is not a shell identifier",
        "a name is letters, digits and underscores, not starting with a digit; "
        "printed before the command, any other would run as shell code",
    ),
    _problem(
        14,
        30,
        "invisible-character",
        f"`change.env.B` holds U+200B (ZERO WIDTH SPACE), {UNSEEN}, at character 2 of `2\\u200b`: {SHOWN}",
        "delete it (retype the text around it)",
    ),
    # Sixty characters are shown whole; from sixty-one, the twenty either side (from the start here).
    _problem(
        14,
        39,
        "invisible-character",
        f"`change.env.C` holds U+200B (ZERO WIDTH SPACE), {UNSEEN}, at character 3 of `ab\\u200b{'c' * 57}`: {SHOWN}",
        "delete it (retype the text around it)",
    ),
    _problem(
        14,
        106,
        "invisible-character",
        f"`change.env.D` holds U+200B (ZERO WIDTH SPACE), {UNSEEN}, at character 3 of `ab\\u200b{'d' * 19}`: {SHOWN}",
        "delete it (retype the text around it)",
    ),
    # `//example.com/page` names a host: an outside link, never checked (references[0]).
    # Back up to the docs folder itself: inside the site, and not a page of it.
    _problem(
        17,
        22,
        "invalid-value",
        "`references[1].url` `a/../..` points at `docs`, which is not a page or file of the site "
        "(the strict build refuses it)",
        LINK_HINT,
    ),
    # A file of the site named as a folder.
    _problem(
        18,
        25,
        "invalid-value",
        "`references[2].url` `../notes.txt/` points at `docs/notes.txt`, which is not a page or file of "
        "the site (the strict build refuses it)",
        LINK_HINT,
    ),
    # Nothing was imported: no id to suggest.
    _problem(
        21,
        10,
        "unknown-run",
        "no imported run has id `sglang-serving-c32-0000000000`",
        "import the file with `improvements import FILE --record SLUG`",
    ),
    # Nothing near the label: the labels there are.
    _problem(
        22,
        29,
        "unknown-result",
        "the campaign baseline has no result labelled `no-such-label`",
        "the campaign baseline's results are labelled: `concurrency 1024`, `single stream`",
    ),
    # The first metric has no baseline to pair with; the second has, with other repetitions.
    # (The variant on a setup of its own is not paired with the campaign baseline's 1240.)
    _problem(
        24,
        5,
        "invalid-value",
        "result `p` is `paired: true` but `output_throughput` has 3 repetition(s) here and 2 in its "
        "baseline; paired repetitions are matched by position",
        "give both sides the same repetitions in the same order, or remove `paired: true`",
    ),
]


def test_every_rule_gives_its_whole_problem(minimal: Path) -> None:
    (minimal / "docs").mkdir()
    (minimal / "docs" / "notes.txt").write_text("a file of the site, not a folder\n")
    (minimal / "improvements" / "01-x.yaml").write_text(RECORD, encoding="utf-8")
    res = run_cli("check", "--root", str(minimal), "--format", "json")
    assert res.returncode == 1, res.stderr
    # The variant's result has no baseline: a warning, which other tests read.
    assert [p for p in res.json() if p["severity"] == "error"] == EXPECTED  # type: ignore[union-attr, index]


def test_a_chain_into_a_circle_is_reported_where_the_circle_is(minimal: Path) -> None:
    # a -> b -> c -> b: the circle is b and c; a only leads into it.
    imp = minimal / "improvements"
    for number, slug, successor in ((1, "a", "b"), (2, "b", "c"), (3, "c", "b")):
        body = f"title: {slug}\ntier: 1\nstatus: superseded\nhypothesis: h\nsuperseded_by: {successor}\n"
        (imp / f"{number:02d}-{slug}.yaml").write_text(body)
    res = run_cli("check", "--root", str(minimal), "--format", "json")
    assert res.returncode == 1, res.stderr
    hint = "a record is replaced by a newer one, which is not itself replaced by the first"
    assert res.json() == [
        {**_problem(5, 16, "invalid-value", f"superseded_by goes round in a circle: {ring}", hint), "path": path}
        for path, ring in (("improvements/02-b.yaml", "b -> c -> b"), ("improvements/03-c.yaml", "c -> b -> c"))
    ]


def test_names_of_other_records_and_blockers_that_do_not_resolve(minimal: Path) -> None:
    body = (
        "title: X\ntier: 1\nstatus: superseded\nhypothesis: h\nrelated: [zzzzzzzz, x, prefix-caches]\n"
        "superseded_by: qqqqqqqq\nblockers:\n  - ref: nothing-like-it\nbuilds_on: [x]\n"
    )
    (minimal / "improvements" / "01-x.yaml").write_text(body)
    (minimal / "improvements" / "02-prefix-cache.yaml").write_text(
        "title: P\ntier: 1\nstatus: proposed\nhypothesis: h\n"
    )
    res = run_cli("check", "--root", str(minimal), "--format", "json")
    assert res.returncode == 1, res.stderr
    slug_hint = "slugs are the part of a file name after the number"
    assert res.json() == [
        _problem(5, 11, "unknown-slug", "no record has slug `zzzzzzzz`", slug_hint),
        _problem(5, 21, "unknown-slug", "a record cannot be related to itself", None),
        _problem(5, 24, "unknown-slug", "no record has slug `prefix-caches`", "did you mean `prefix-cache`?"),
        _problem(6, 16, "unknown-slug", "no record has slug `qqqqqqqq`", slug_hint),
        _problem(8, 10, "unknown-blocker", "no blocker has id `nothing-like-it`", "give the shared blocker an `id`"),
        _problem(9, 13, "unknown-slug", "a record cannot build on itself", None),
    ]


def test_a_run_measured_on_another_model_is_a_warning_at_its_run(minimal: Path) -> None:
    (minimal / "improvements" / "01-x.yaml").write_text("title: X\ntier: 1\nstatus: proposed\nhypothesis: h\n")
    imported = run_cli(
        "import", "--root", str(minimal), str(FIXTURES / "provenance" / "deepseek-h200-decode.jsonl"), "--record", "01"
    )
    assert imported.returncode == 0, imported.stderr
    [run_file] = (minimal / "results" / "runs").glob("*.json")
    res = run_cli("check", "--root", str(minimal), "--format", "json")
    assert res.returncode == 0, res.stderr
    label = "random 1/1024, concurrency 32"
    assert [p for p in res.json() if p["code"] == "other-setup"] == [  # type: ignore[union-attr, index]
        {
            **_problem(
                7,
                8,
                "other-setup",
                f"result `{label}` names run `{run_file.stem}`, and the file's model `deepseek-ai/DeepSeek-V3` is not "
                "the campaign's model `GLM-5-NVFP4` (the file's `server_info.served_model_name`)",
                "import the file into the campaign it was measured for, or say in the result's `note` why it "
                "belongs here",
            ),
            "severity": "warning",
        }
    ]


VARIANTS = """\
title: V
tier: 1
status: proposed
hypothesis: h
sweep: {parameter: --chunked-prefill-size, metric: ttft_mean}
decided_by: {metric: output_throughput, result: no-such}
blockers:
  - ref: shared-blockr
variants:
  - label: "4096"
    value: 4096
    outcome: diagnostic
    results:
      - label: a
        metrics: {output_throughput: 1}
  - label: "8192"
    value: 8192
    outcome: rejected
    results:
      - label: a
        source: /etc/passwd
        metrics: {output_throughput: 1}
      - label: a
        metrics: {output_throughput: 2}
  - label: again
    value: 8192
    outcome: rejected
    results:
      - label: b
        metrics: {output_throughput: 3, total_throughput: 4}
  - label: again
    value: 16384
    outcome: retained
    results:
      - label: e
        metrics: {output_throughput: 5}
  - label: last
    value: 32768
    outcome: retained
    results:
      - label: f
        metrics: {output_throughput: 6}
"""

VARIANT_DECIDES = """\
title: W
tier: 1
status: proposed
hypothesis: h
decided_by: {metric: output_throughput, variant: one, result: zzz}
variants:
  - label: one
    outcome: rejected
    results:
      - label: c
        metrics: {output_throughput: 1}
        baseline: {output_throughput: 1}
      - label: d
        metrics: {output_throughput: 2}
        baseline: {output_throughput: 1}
"""


def test_variants_their_results_and_what_decides_them(minimal: Path) -> None:
    imp = minimal / "improvements"
    (imp / "01-v.yaml").write_text(VARIANTS)
    blocker = "  - {id: shared-blocker, title: w, status: open}\n"
    blocker = f"title: S\ntier: 1\nstatus: blocked\nhypothesis: h\nblockers:\n{blocker}"
    (imp / "02-s.yaml").write_text(blocker)
    (imp / "03-w.yaml").write_text(VARIANT_DECIDES)
    # A variant's result, named with its variant: found.
    (imp / "04-ok.yaml").write_text(VARIANT_DECIDES.replace("result: zzz", "result: c"))
    res = run_cli("check", "--root", str(minimal), "--format", "json")
    assert res.returncode == 1, res.stderr
    v = "improvements/01-v.yaml"
    assert [p for p in res.json() if p["severity"] == "error"] == [  # type: ignore[union-attr, index]
        {
            **_problem(
                5,
                52,
                "invalid-value",
                "no variant measures `ttft_mean`, the metric the sweep's chart plots",
                "the variants measure: `output_throughput`, `total_throughput`",
            ),
            "path": v,
        },
        {
            **_problem(
                6,
                49,
                "unknown-result",
                "`decided_by` names result `no-such`, not among the record's own results",
                "the results are labelled: none; a variant's result needs `variant`",
            ),
            "path": v,
        },
        {
            **_problem(8, 10, "unknown-blocker", "no blocker has id `shared-blockr`", "did you mean `shared-blocker`?"),
            "path": v,
        },
        # A variant's results are checked as a record's are: their sources and their labels.
        {
            **_problem(
                21,
                17,
                "path-outside",
                "source `/etc/passwd` leaves results/",
                "give a path under results/, such as results/runs/x.json",
            ),
            "path": v,
        },
        {**_problem(23, 16, "duplicate-label", "label `a` is already used by result 1", None), "path": v},
        # The diagnostic variant may share a value; two candidates may not.
        {
            **_problem(
                26,
                12,
                "invalid-value",
                "variant `again` has the value of variant `8192`",
                "each candidate variant is one value of the setting: merge the two, or correct the value; a run "
                "beside the values (an isolation run at the retained value) is `outcome: diagnostic` or has its "
                "own `setup`, and may share the value or leave `value` out",
            ),
            "path": v,
        },
        # A variant's label once, and one variant retained.
        {**_problem(31, 12, "duplicate-label", "label `again` is already used by variant 3", None), "path": v},
        {
            **_problem(
                39,
                14,
                "invalid-value",
                "variant `last` is retained, and so is `again`",
                "a record retains one variant; split the others into records of their own",
            ),
            "path": v,
        },
        {
            **_problem(
                5,
                63,
                "unknown-result",
                "`decided_by` names result `zzz`, not among variant `one`'s results",
                "the results are labelled: `c`, `d`",
            ),
            "path": "improvements/03-w.yaml",
        },
    ]


def test_what_each_status_needs(minimal: Path) -> None:
    imp = minimal / "improvements"
    head = "tier: 1\nhypothesis: h\n"
    (imp / "01-a.yaml").write_text(f"title: A\n{head}status: rejected\n")
    # The blocker it names is shared and resolved: none is open.
    (imp / "02-b.yaml").write_text(f"title: B\n{head}status: blocked\nblockers:\n  - ref: fixed-upstream\n")
    (imp / "03-c.yaml").write_text(f"title: C\n{head}status: proposed\nsuperseded_by: a\n")
    blocker = "blockers:\n  - {id: fixed-upstream, title: t, status: resolved}\n"
    (imp / "04-d.yaml").write_text(f"title: D\n{head}status: proposed\n{blocker}")
    (imp / "05-e.yaml").write_text(f"title: E\n{head}status: superseded\n")
    res = run_cli("check", "--root", str(minimal), "--format", "json")
    assert res.returncode == 1, res.stderr
    assert res.json() == [
        {
            **_problem(
                4,
                9,
                "status-rule",
                "status `rejected` needs a `verdict` and at least one result",
                "measure it first, or keep the status `in-progress`",
            ),
            "path": "improvements/01-a.yaml",
        },
        {
            **_problem(
                4,
                9,
                "status-rule",
                "status `blocked` needs an open blocker",
                "add a blocker with `status: open`, or change the status",
            ),
            "path": "improvements/02-b.yaml",
        },
        {
            **_problem(
                5,
                1,
                "status-rule",
                "`superseded_by` is set, but the status is `proposed`",
                "set the status to `superseded`, or remove `superseded_by`",
            ),
            "path": "improvements/03-c.yaml",
        },
        {
            **_problem(
                4,
                9,
                "status-rule",
                "status `superseded` needs `superseded_by`",
                "name the slug of the record that replaces this one",
            ),
            "path": "improvements/05-e.yaml",
        },
    ]


SWEEP = """\
title: B
tier: 1
status: adopted
verdict: v
hypothesis: h
sweep: {parameter: --mem-fraction-static, result: decode}
variants:
  - label: low
    value: 0.8
    outcome: rejected
    results:
      - label: prefill
        metrics: {output_throughput: 1}
        baseline: {output_throughput: 1}
  - label: auto
    value: auto
    outcome: rejected
    results:
      - label: batch
        metrics: {output_throughput: 1}
        baseline: {output_throughput: 1}
  - label: unknown
    outcome: rejected
    results:
      - label: batch
        metrics: {output_throughput: 1}
        baseline: {output_throughput: 1}
"""


def test_a_sweep_and_its_variants(minimal: Path) -> None:
    imp = minimal / "improvements"
    (imp / "01-a.yaml").write_text(
        "title: A\ntier: 1\nstatus: proposed\nhypothesis: h\nsweep: {parameter: --cuda-graph-max-bs}\n"
    )
    (imp / "02-b.yaml").write_text(SWEEP)
    res = run_cli("check", "--root", str(minimal), "--format", "json")
    assert res.returncode == 1, res.stderr
    b = "improvements/02-b.yaml"
    assert res.json() == [
        {
            **_problem(5, 1, "invalid-value", "`sweep` needs `variants`, one per value", "add a variant per value"),
            "path": "improvements/01-a.yaml",
        },
        {
            **_problem(
                3,
                9,
                "status-rule",
                "status `adopted` with variants needs one variant with `outcome: retained`",
                "mark the configuration that was adopted as retained",
            ),
            "path": b,
        },
        {
            **_problem(
                6,
                1,
                "invalid-value",
                "a sweep's values are all numbers or all text, not both",
                "quote the numbers, or write the text values as numbers",
            ),
            "path": b,
        },
        {
            **_problem(
                6,
                51,
                "unknown-result",
                "no variant has a result labelled `decode`",
                "the variants' results are labelled: `batch`, `prefill`",
            ),
            "path": b,
        },
        {
            **_problem(
                22,
                5,
                "missing-field",
                "variant `unknown` of a sweep needs `value`: the setting of `--mem-fraction-static` it ran",
                None,
            ),
            "path": b,
        },
    ]


ADOPTED = """\
title: A
tier: 1
status: adopted
verdict: v
hypothesis: h
change: {flags: ["--enable-metrics"]}
variants:
  - label: v1
    outcome: retained
    results:
      - label: r1
        metrics: {output_throughput: 2}
        baseline: {output_throughput: 1}
"""

BUILDS_ON = """\
title: B
tier: 1
status: proposed
hypothesis: h
builds_on: [zzzz, a, a]
results:
  - label: own
    metrics: {output_throughput: 2}
    baseline_from: {record: b, result: own}
  - label: other
    metrics: {output_throughput: 2}
    baseline_from: {record: a, variant: v2, result: r1}
  - label: third
    metrics: {output_throughput: 2}
    baseline_from: {record: a, variant: v1, result: r9}
"""


def test_what_a_record_builds_on_and_takes_its_baseline_from(minimal: Path) -> None:
    (minimal / "improvements" / "01-a.yaml").write_text(ADOPTED)
    (minimal / "improvements" / "02-b.yaml").write_text(BUILDS_ON)
    res = run_cli("check", "--root", str(minimal), "--format", "json")
    assert res.returncode == 1, res.stderr
    b = "improvements/02-b.yaml"
    adopted_hint = "name the slug of an adopted record whose change is in this one's baseline"
    assert [p for p in res.json() if p["severity"] == "error"] == [  # type: ignore[union-attr, index]
        {**_problem(5, 13, "unknown-slug", "no record has slug `zzzz`", adopted_hint), "path": b},
        {**_problem(5, 22, "invalid-value", "`a` is named twice in `builds_on`", "name each record once"), "path": b},
        {
            **_problem(9, 40, "unknown-result", "a result cannot be its own baseline", "name another result"),
            "path": b,
        },
        {
            **_problem(
                12, 41, "unknown-result", "record `a` has no variant labelled `v2`", "its variants are labelled: `v1`"
            ),
            "path": b,
        },
        {
            **_problem(
                15,
                53,
                "unknown-result",
                "variant `v1` of record `a` has no result labelled `r9`",
                "its results are labelled: `r1`",
            ),
            "path": b,
        },
    ]


VARIANT_TEXTS = """\
title: V
tier: 1
status: proposed
hypothesis: h
variants:
  - label: one
    outcome: rejected
    change: {flags: ["--host 0.0.0.0;true"]}
    setup: {base_command: "python -m sglang.launch_server|tee"}
    results:
      - label: typed
        run: sglang-serving-c32-0000000000
        metrics: {output_throughput: 5}
"""


def test_the_campaigns_shell_texts_and_a_variants_own(minimal: Path) -> None:
    campaign = minimal / "improvements" / "campaign.yaml"
    text = campaign.read_text()
    image = "engine:\n  name: SGLang\n"
    env = "baseline:\n  label: TP8, flashinfer_cutlass, max-running-requests 1024\n"
    assert image in text and env in text
    text = text.replace(image, f'{image}  image: "lmsysorg/sglang:v0.5.9{ZWSP}"\n', 1)
    campaign.write_text(text.replace(env, f'{env}  env: {{NCCL_DEBUG: "INFO{ZWSP}"}}\n', 1))
    (minimal / "improvements" / "01-v.yaml").write_text(VARIANT_TEXTS)
    res = run_cli("check", "--root", str(minimal), "--format", "json")
    assert res.returncode == 1, res.stderr
    c = "improvements/campaign.yaml"
    v = "improvements/01-v.yaml"
    assert res.json() == [
        {
            **_problem(
                8,
                22,
                "shell-syntax",
                "`variants[0].change.flags[0]`: bash reads `;` at character 8 as an operator, not as part of a word; "
                "the printed command would pass it to the program as text",
                WORDS_HINT,
            ),
            "path": v,
        },
        {
            **_problem(
                9,
                27,
                "shell-syntax",
                "`variants[0].setup.base_command`: bash reads `|` at character 31 as an operator, not as part of a "
                "word; the printed command would pass it to the program as text",
                WORDS_HINT,
            ),
            "path": v,
        },
        {
            **_problem(
                12,
                14,
                "unknown-run",
                "no imported run has id `sglang-serving-c32-0000000000`",
                "import the file with `improvements import FILE --record SLUG`",
            ),
            "path": v,
        },
        # A run's numbers come from its file: typed ones beside it would be a second source.
        {
            **_problem(
                13,
                9,
                "invalid-value",
                "result `typed` names run `sglang-serving-c32-0000000000` and also types `metrics`",
                "an imported run's numbers and its baseline's come from the run files; remove the typed ones",
            ),
            "path": v,
        },
        {
            **_problem(
                50,
                10,
                "invisible-character",
                f"`engine.image` holds U+200B (ZERO WIDTH SPACE), {UNSEEN}, at character 23 of "
                f"`lmsysorg/sglang:v0.5.9\\u200b`: {SHOWN}",
                "delete it (retype the text around it)",
            ),
            "path": c,
        },
        {
            **_problem(
                57,
                21,
                "invisible-character",
                f"`baseline.env.NCCL_DEBUG` holds U+200B (ZERO WIDTH SPACE), {UNSEEN}, at character 5 of "
                f"`INFO\\u200b`: {SHOWN}",
                "delete it (retype the text around it)",
            ),
            "path": c,
        },
    ]
