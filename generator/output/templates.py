"""The templates' Jinja environment: the shipped templates or a campaign's overrides.

A campaign's `templates/NAME` replaces the shipped template of that name (sandboxed, since it is
text from the repository); the shipped ones are compiled once and kept. A template that fails is
a positioned problem (`template_problem`), never a traceback.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from pathlib import Path
from types import CodeType

import jinja2
from jinja2.bccache import Bucket
from jinja2.sandbox import SandboxedEnvironment

from generator.base import incremental
from generator.base.problems import Problem
from generator.model.quantity import fmt_number, fmt_percent, fmt_value
from generator.views.markdown import (
    TemplateFailure,
    cell,
    code,
    code_block,
    finalize,
    inline,
    link,
    linked,
    paragraphs,
)

PACKAGE_TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


class _PathOutside(jinja2.TemplateNotFound):
    pass


class _Loader(jinja2.BaseLoader):
    """A campaign's `templates/NAME` if present (inside the repository), else the shipped one."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
        if "/" in template or "\\" in template or template.startswith("."):
            raise jinja2.TemplateNotFound(template)
        override = self.root / "templates" / template
        path = PACKAGE_TEMPLATES / template
        if override.exists() or override.is_symlink():
            real = override.resolve()
            if not real.is_relative_to(self.root.resolve()):
                raise _PathOutside(str(override))
            path = override
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise jinja2.TemplateNotFound(f"{template}: {exc}") from None
        return source, str(path), lambda: False


def _has_overrides(root: Path) -> bool:
    folder = root / "templates"
    try:
        return folder.is_dir() and any(folder.iterdir())
    except OSError:
        return True


# The shipped templates' compiled code in this process, by Jinja's bucket key: (source checksum,
# code). The one process-wide table of the package, and on purpose: it holds package code, like
# Python's own table of imported modules, keyed so that a changed source is compiled again, and
# a process that builds many times (`serve`, the mkdocs plugin's rebuilds, the test suite) would
# otherwise compile every template for every build (it was two fifths of the test suite's time).
_COMPILED: dict[str, tuple[str, CodeType]] = {}


class _CompiledTemplates(jinja2.BytecodeCache):
    """Compiled templates from this process's table, else the user's cache folder, else Jinja."""

    def __init__(self, disk: jinja2.BytecodeCache | None) -> None:
        self.disk = disk

    def load_bytecode(self, bucket: Bucket) -> None:
        hit = _COMPILED.get(bucket.key)
        if hit is not None and hit[0] == bucket.checksum:
            bucket.code = hit[1]
            return
        if self.disk is not None:
            self.disk.load_bytecode(bucket)
            if bucket.code is not None:
                _COMPILED[bucket.key] = (bucket.checksum, bucket.code)

    def dump_bytecode(self, bucket: Bucket) -> None:
        if bucket.code is not None:
            _COMPILED[bucket.key] = (bucket.checksum, bucket.code)
        if self.disk is not None:
            self.disk.dump_bytecode(bucket)


def _bytecode_cache(root: Path) -> jinja2.BytecodeCache:
    """The shipped templates compiled once, not in every process (a fifth of a rebuild's time).

    Compiled templates are code, like the build cache's pickles, so they live beside them in
    the user's own cache folder (see generator.base.incremental), never in a repository; each entry is
    checked against its template's source by Jinja.
    """
    folder = incremental.cache_folder(root)
    if folder is None:
        return _CompiledTemplates(None)
    try:
        (folder / "jinja").mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError:
        return _CompiledTemplates(None)
    return _CompiledTemplates(jinja2.FileSystemBytecodeCache(str(folder / "jinja")))


def environment(root: Path) -> jinja2.Environment:
    # Sandboxed when the campaign has templates/: an override template is text from the
    # repository, like a record, and must not reach Python (`cycler.__init__.__globals__.os.system(...)`)
    # at build time. The shipped templates are the package's own code; without overrides they
    # render unsandboxed, since the sandbox's check of every attribute was a third of a page's time.
    overrides = _has_overrides(root)
    kind = SandboxedEnvironment if overrides else jinja2.Environment
    env = kind(
        bytecode_cache=None if overrides else _bytecode_cache(root),
        loader=_Loader(root),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        finalize=finalize,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
    )
    env.filters.update(
        inline=inline,
        cell=cell,
        paragraphs=paragraphs,
        code=code,
        code_block=code_block,
        link=link,
        linked=linked,
        number=fmt_number,
        percent=fmt_percent,
        value=fmt_value,
    )
    return env


def _shown_template(root: Path, name: str) -> str:
    # Not `rel`: it resolves symlinks, and a template is named where the user put it.
    override = root / "templates" / name
    return f"templates/{name}" if override.exists() or override.is_symlink() else f"generator/templates/{name}"


def template_problem(root: Path, name: str, exc: BaseException) -> Problem:
    shown = _shown_template(root, name)
    if isinstance(exc, _PathOutside):
        return Problem(
            shown,
            1,
            1,
            "path-outside",
            f"template `{shown}` resolves outside the repository",
            "keep override templates as regular files under templates/",
        )
    line = 1
    if isinstance(exc, jinja2.TemplateSyntaxError) and exc.lineno:
        line = exc.lineno
        if exc.name:
            shown = _shown_template(root, exc.name)
    else:
        # Jinja rewrites tracebacks so that template frames carry the template's own lines.
        for frame in reversed(traceback.extract_tb(exc.__traceback__)):
            frame_name = Path(frame.filename).name
            if frame_name.endswith(".j2") and frame.lineno:
                line = frame.lineno
                shown = _shown_template(root, frame_name)
                break
    message = getattr(exc, "message", None) or str(exc)
    if not isinstance(exc, jinja2.TemplateError | TemplateFailure):
        message = f"{type(exc).__name__}: {message}"
    return Problem(
        shown,
        line,
        1,
        "bad-template",
        f"template `{name}`: {message}",
        "the shipped templates in generator/templates/ use every variable a page has",
    )
