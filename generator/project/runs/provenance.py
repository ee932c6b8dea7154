"""What a benchmark file states about where it was measured, and where that contradicts the campaign.

The importers keep what defines a run (`settings`); this keeps what a reader needs to trust
the number: the model and tokenizer the server loaded, the client's backend, the engine's
version, the server's launch command and the date, each with the key it was read from. Only
what the file itself says: nothing is inferred from names or defaults.
"""

from __future__ import annotations

import re
from typing import Any

from generator.model.campaign import Campaign
from generator.project.runs.run import Run

# name -> the keys that hold it, first found wins: (vLLM, SGLang's server_info, ...).
_TOP_KEYS: dict[str, tuple[str, ...]] = {
    "backend": ("backend",),
    "model": ("model_id", "model"),
    "tokenizer": ("tokenizer_id", "tokenizer"),
    "date": ("date",),
}
_SERVER_KEYS: dict[str, tuple[str, ...]] = {
    "model": ("served_model_name", "model_path"),
    "tokenizer": ("tokenizer_path",),
    "engine_version": ("version",),
    "server_args": ("launch_command",),
}
# Longer than this is not a fact to show beside a number (a nested dump flattened to text).
_MAX_TEXT = 4000

LABELS: dict[str, str] = {
    "engine": "engine",
    "engine_version": "engine version",
    "engine_commit": "engine commit",
    "image": "container image",
    "model": "model",
    "tokenizer": "tokenizer",
    "backend": "client backend",
    "date": "date",
    "hardware": "hardware",
    "server_args": "server arguments",
}


def _text(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        value = " ".join(value)
    if isinstance(value, int | float | str):
        text = str(value).strip()
        return text if text and len(text) <= _MAX_TEXT else None
    return None


def _server_info(obj: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    info = obj.get("server_info")
    if not isinstance(info, dict):
        return "", {}
    # Prefill/decode disaggregation reports per role; the decode side serves the tokens.
    if "model_path" not in info and isinstance(info.get("decode"), list) and info["decode"]:
        first = info["decode"][0]
        return ("server_info.decode[0]", first) if isinstance(first, dict) else ("", {})
    return "server_info", info


def fill(run: Run, obj: Any) -> None:
    """Fill `run.provenance` from the (already redacted) object the run was read from."""
    if not isinstance(obj, dict):
        # A console block: its `Backend:` line is the only such fact it prints.
        backend = run.settings.get("backend")
        if isinstance(backend, str):
            run.provenance["backend"], run.provenance_keys["backend"] = backend, "Backend"
        _engine(run, "Backend")
        return
    prefix, info = _server_info(obj)
    for name, keys in _SERVER_KEYS.items():
        for key in keys:
            value = _text(info.get(key))
            if value is not None:
                run.provenance[name], run.provenance_keys[name] = value, f"{prefix}.{key}"
                break
    for name, keys in _TOP_KEYS.items():
        for key in keys:
            value = _text(obj.get(key))
            if value is not None and name not in run.provenance:
                run.provenance[name], run.provenance_keys[name] = value, key
                break
    _engine(run, "server_info" if info else run.provenance_keys.get("backend", "the format"))


def _engine(run: Run, key: str) -> None:
    # Said by the file's format or backend (bench_one_batch runs in-process; server_info is SGLang's).
    engine = run.settings.get("engine")
    if isinstance(engine, str):
        run.provenance["engine"], run.provenance_keys["engine"] = engine, key


def _words(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def _model_matches(campaign_model: str, file_model: str) -> bool:
    # A path or hub id names the model in its last parts (zai-org/GLM-5-NVFP4,
    # /models/models--zai-org--GLM-5-NVFP4/snapshots/<hash>/): compared without case or punctuation.
    want = _words(campaign_model)
    return bool(want) and want in _words(file_model)


def mismatches(campaign: Campaign, run: Run) -> list[tuple[str, str]]:
    """(the file's key, what differs) where the file names another model or engine than the campaign."""
    out: list[tuple[str, str]] = []
    model = run.provenance.get("model")
    if model is not None and not _model_matches(campaign.model.name, model):
        out.append(
            (
                run.provenance_keys.get("model", "model"),
                f"the file's model `{model}` is not the campaign's model `{campaign.model.name}`",
            )
        )
    engine = run.provenance.get("engine")
    if engine is not None and _words(engine) != _words(campaign.engine.name):
        out.append(
            (
                run.provenance_keys.get("engine", "engine"),
                f"the file's engine `{engine}` is not the campaign's engine `{campaign.engine.name}`",
            )
        )
    return out
