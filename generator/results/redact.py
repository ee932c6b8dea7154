"""Secrets out of benchmark files before anything is written.

SGLang's `server_info` dumps the server's arguments, `api_key` and `admin_api_key` among them,
in clear text; captured launch commands carry `--api-key X`; a URL may carry `user:password@`.
Values under secret-looking keys, values of secret-looking flags and URL credentials are
replaced, in the parsed data and in the raw copy kept as evidence.

The key test works on the words of a name, not on substrings: `hf_token` and `api_key` are
secrets, `total_output_tokens` (a count) and `tokenizer_path` are not. A blunt substring match
on "token" would wipe out the token counts that are the benchmark's results.
"""

from __future__ import annotations

import re
from typing import Any

REDACTED = "<redacted>"

_SECRET_WORDS = frozenset(
    {"token", "secret", "secrets", "password", "passwd", "pwd", "apikey", "credential", "credentials"}
)
_KEY_OWNERS = frozenset({"api", "admin", "access", "private", "secret", "auth"})


def _words(name: str) -> list[str]:
    # camelCase -> camel_case, then split on anything that is not a letter or digit
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return [w for w in re.split(r"[^a-z0-9]+", spaced.lower()) if w]


def is_secret_name(name: str) -> bool:
    """Whether a key, flag or variable name holds a secret (`api_key`, `--hf-token`, `OPENAI_API_KEY`)."""
    words = _words(name)
    if any(w in _SECRET_WORDS for w in words):
        return True
    # "key" only counts when something says whose key it is: api_key, admin_api_key, access_key.
    return any(w == "key" and i > 0 and words[i - 1] in _KEY_OWNERS for i, w in enumerate(words))


# --flag value, --flag=value, NAME=value (environment), Bearer <token>
_FLAG = re.compile(
    r"(?<![^\s'\"=(])(?P<name>--?[A-Za-z][A-Za-z0-9_-]*)(?P<sep>=|[ \t]+)(?P<value>'[^']*'|\"[^\"]*\"|[^\s'\"]+)"
)
_ENV = re.compile(r"\b(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>'[^']*'|\"[^\"]*\"|[^\s'\"]+)")
_BEARER = re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]+")
# scheme://user:password@host: the userinfo part of any URL, wherever it appears in a value.
_URL_USERINFO = re.compile(r"(?i)\b(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<userinfo>[^\s/@'\"<>]+)@")


def redact_text(text: str) -> tuple[str, int]:
    """`text` with secret flag, variable and bearer values replaced; and how many were."""
    count = 0

    def flag(m: re.Match[str]) -> str:
        nonlocal count
        if not is_secret_name(m["name"]) or m["value"].startswith("-"):
            return m.group(0)
        count += 1
        return f"{m['name']}{m['sep']}{REDACTED}"

    def env(m: re.Match[str]) -> str:
        nonlocal count
        if not is_secret_name(m["name"]) or m["value"] == REDACTED:
            return m.group(0)
        count += 1
        return f"{m['name']}={REDACTED}"

    def bearer(m: re.Match[str]) -> str:
        nonlocal count
        count += 1
        return f"{m.group(1)} {REDACTED}"

    def userinfo(m: re.Match[str]) -> str:
        nonlocal count
        if m["userinfo"] == REDACTED:
            return m.group(0)
        count += 1
        return f"{m['scheme']}{REDACTED}@"

    text = _URL_USERINFO.sub(userinfo, text)
    text = _FLAG.sub(flag, text)
    text = _ENV.sub(env, text)
    text = _BEARER.sub(bearer, text)
    return text, count


def redact(data: Any, path: str = "") -> tuple[Any, list[str]]:
    """A copy of `data` with secrets replaced, and the dotted paths of what was replaced."""
    found: list[str] = []
    if isinstance(data, dict):
        out: dict[Any, Any] = {}
        for key, value in data.items():
            where = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and is_secret_name(key) and _holds_secret(key, value):
                out[key] = REDACTED
                found.append(where)
                continue
            out[key], inner = redact(value, where)
            found += inner
        return out, found
    if isinstance(data, list):
        items: list[Any] = []
        for i, value in enumerate(data):
            item, inner = redact(value, f"{path}[{i}]")
            items.append(item)
            found += inner
        return items, found
    if isinstance(data, str):
        text, n = redact_text(data)
        if n:
            found.append(path or "(text)")
        return text, found
    return data, found


def _holds_secret(key: str, value: Any) -> bool:
    """Booleans, nulls and empty strings are not secrets; nor are numbers under a "token" name.

    `eos_token_id: 2` is a token id, while `password: 1234` is a password.
    """
    if value is None or isinstance(value, bool):
        return False
    if isinstance(value, str):
        return value != "" and value != REDACTED
    if isinstance(value, int | float):
        return any(w in _SECRET_WORDS - {"token"} or w == "key" for w in _words(key))
    return bool(value)
