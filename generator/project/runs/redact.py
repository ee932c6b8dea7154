"""Secrets out of benchmark files before anything is written.

SGLang's `server_info` dumps the server's arguments, `api_key` and `admin_api_key` among them,
in clear text; captured launch commands carry `--api-key X`; a URL may carry `user:password@`.
One set of rules walks every string of a parsed file (keys, values, list items, text nested
in text) and the raw copy kept as evidence; the guide (docs/guide/results.md) lists them:

- a value under a secret name (`api_key`, `*_key`, `*_token`, `authorization`, `password`...);
- a name/value entry whose name is secret (`{"name": "HF_TOKEN", "value": ...}`);
- in an argument list, the item after a secret flag (`["--api-key", "sk-..."]`);
- in text: `--flag value`, `--flag=value` and a value on the next line after its flag;
  `name: value`, `name=value`, `"name": "value"` and `'name': 'value'` (headers such as
  `Authorization: Basic ...`, environment entries, a dict's repr); `Bearer <token>`; the
  `user:password@` of a URL and secret query parameters (`?token=...`).

The name test works on the words of a name, not on substrings: `hf_token` and `api_key` are
secrets, `total_output_tokens` (a count) and `tokenizer_path` are not. A blunt substring match
on "token" would wipe out the token counts that are the benchmark's results. Regular
expressions are hand-written here because no maintained library redacts arbitrary JSON and
shell text by name; the known scanners look for token shapes, which misses `--api-key hunter2`.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

REDACTED = "<redacted>"

_SECRET_WORDS = frozenset(
    {
        "token",
        "secret",
        "secrets",
        "password",
        "passwd",
        "pwd",
        "passphrase",
        "apikey",
        "credential",
        "credentials",
        "authorization",
        "cookie",
    }
)
_KEY_OWNERS = frozenset({"api", "admin", "access", "private", "secret", "auth"})
# Fields of a name/value entry (Kubernetes env lists, header lists): the name says whether the value is secret.
_ENTRY_NAMES = ("name", "key", "env", "variable", "header")
_ENTRY_VALUES = ("value", "val", "secret")


def _words(name: str) -> list[str]:
    # camelCase -> camel_case, then split on anything that is not a letter or digit
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return [w for w in re.split(r"[^a-z0-9]+", spaced.lower()) if w]


@functools.lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """Whether a key, flag, header or variable name holds a secret (`api_key`, `--hf-token`, `X-API-Key`)."""
    words = _words(name)
    if any(w in _SECRET_WORDS for w in words):
        return True
    if len(words) > 1 and words[-1] in ("key", "keys", "auth"):
        return True  # *_key, X-API-Key, api_keys, proxy_auth
    # "key" inside a name only counts when something says whose key it is: api_key_file.
    return any(w == "key" and i > 0 and words[i - 1] in _KEY_OWNERS for i, w in enumerate(words))


def _holds_secret(key: str, value: Any) -> bool:
    """Booleans, nulls and empty strings are not secrets; nor are numbers under a "token" name.

    `eos_token_id: 2` is a token id, while `password: 1234` is a password.
    """
    if value is None or isinstance(value, bool):
        return False
    if isinstance(value, str):
        return value != "" and value != REDACTED
    if isinstance(value, int | float):
        return any(w in _SECRET_WORDS - {"token"} or w in ("key", "keys") for w in _words(key))
    return bool(value)


_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _text_holds_secret(name: str, value: str) -> bool:
    """The same test as `_holds_secret`, for a value written as text (quoted or not)."""
    inner = value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"" else value
    if inner in ("", REDACTED) or inner.startswith(REDACTED):
        return False
    if value == inner and inner.lower() in ("true", "false", "null", "none"):
        return False
    if value == inner and _NUMBER.fullmatch(inner):
        return _holds_secret(name, 0)
    return True


# scheme://user:password@host: the userinfo part of any URL, wherever it appears in a value.
_URL_USERINFO = re.compile(r"(?i)\b(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<userinfo>[^\s/@'\"<>]+)@")
# ?token=...&api_key=...: a query parameter ends at & or #.
_QUERY = re.compile(r"(?<=[?&;])(?P<name>[A-Za-z_][\w.-]*)=(?P<value>[^&#\s'\"<>]*)")
# --flag value, --flag=value, and the value on the next line (after a `\` continuation or not;
# in a JSON file's text the line break is the two characters `\n`), and the next item of a
# list written out as text (`"--api-key", "sk-..."`).
_FLAG = re.compile(
    r"(?<![^\s'\"=(\[,])(?P<name>--?[A-Za-z][A-Za-z0-9_-]*)"
    r"(?P<sep>=|\"\s*,\s*\"|'\s*,\s*'|(?:[ \t]|\\?\r?\n|(?:\\\\)?\\n)+)(?P<value>'[^']*'|\"[^\"]*\"|[^\s'\"]+)"
)
# A quoted value, or an unquoted one with the scheme word of an Authorization header before it.
_VALUE = (
    r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'"
    r"|(?i:(?:basic|bearer|token|digest|negotiate|apikey)[ \t]+)?[^\s,;'\"{}\[\]()]+"
)
# name: value, name=value, "name": "value", 'name': 'value' (headers, environment, YAML, a dict's repr)
_KEY_VALUE = re.compile(
    r"(?<![\w.-])(?P<q>['\"]?)(?P<name>[A-Za-z_][\w.-]*)(?P=q)(?P<sep>[ \t]*(?::|=)\s*)(?P<value>" + _VALUE + ")"
)
_BEARER_WORD = re.compile("[Bb][Ee][Aa][Rr][Ee][Rr]")
_BEARER = re.compile(r"(?i)\b(bearer)\s+(?!<redacted>)[A-Za-z0-9._~+/=-]+")


def redact_text(text: str) -> tuple[str, int]:
    """`text` with secret flag, header, variable, URL and bearer values replaced; and how many were."""
    # Each rule runs only on text that holds its marker: a kept copy may be hundreds of megabytes,
    # and most strings of a benchmark file (its keys, numbers as text) hold none.
    if ":" not in text and "=" not in text and "-" not in text and _BEARER_WORD.search(text) is None:
        return text, 0
    count = 0

    def userinfo(m: re.Match[str]) -> str:
        nonlocal count
        if m["userinfo"] == REDACTED:
            return m.group(0)
        count += 1
        return f"{m['scheme']}{REDACTED}@"

    def query_param(m: re.Match[str]) -> str:
        nonlocal count
        if not is_secret_name(m["name"]) or not _text_holds_secret(m["name"], m["value"]):
            return m.group(0)
        count += 1
        return f"{m['name']}={REDACTED}"

    def flag(m: re.Match[str]) -> str:
        nonlocal count
        value = m["value"]
        if not is_secret_name(m["name"]) or value.startswith(("-", "\\")) or not _text_holds_secret(m["name"], value):
            return m.group(0)
        count += 1
        return f"{m['name']}{m['sep']}{REDACTED}"

    def key_value(m: re.Match[str]) -> str:
        nonlocal count
        name, value = m["name"], m["value"]
        if not is_secret_name(name) or not _text_holds_secret(name, value):
            return m.group(0)
        count += 1
        quote = value[0] if value[0] in "'\"" else ""
        return f"{m['q']}{name}{m['q']}{m['sep']}{quote}{REDACTED}{quote}"

    def bearer(m: re.Match[str]) -> str:
        nonlocal count
        count += 1
        return f"{m.group(1)} {REDACTED}"

    # The markers again after each rule: a replacement may add or remove one (`<redacted>`).
    if "://" in text:
        text = _URL_USERINFO.sub(userinfo, text)
    if "=" in text:
        text = _QUERY.sub(query_param, text)
    if "-" in text:
        text = _FLAG.sub(flag, text)
    if ":" in text or "=" in text:
        text = _KEY_VALUE.sub(key_value, text)
    if _BEARER_WORD.search(text):
        text = _BEARER.sub(bearer, text)
    return text, count


def redact(data: Any, path: str = "", secret_name: str | None = None) -> tuple[Any, list[str]]:
    """A copy of `data` with secrets replaced, and the paths of what was replaced (`server_info.api_key`).

    `secret_name` is set inside a value held under a secret name (`api_keys: [...]`): there
    every string is a secret, and numbers follow the same rule as at the top.
    """
    if isinstance(data, dict):
        return _redact_dict(data, path, secret_name)
    if isinstance(data, list):
        return _redact_list(data, path, secret_name)
    if secret_name is not None and _holds_secret(secret_name, data):
        return REDACTED, [path or "(value)"]
    if isinstance(data, str):
        text, n = redact_text(data)
        return text, [path or "(text)"] if n else []
    return data, []


def _redact_dict(data: dict[Any, Any], path: str, secret_name: str | None) -> tuple[Any, list[str]]:
    found: list[str] = []
    out: dict[Any, Any] = {}
    entry = next((data[k] for k in _ENTRY_NAMES if isinstance(data.get(k), str) and is_secret_name(data[k])), None)
    for key, value in data.items():
        shown = key
        if isinstance(key, str):
            shown, n = redact_text(key)
            if n:
                found.append(f"{path}.{shown}" if path else shown)
        where = f"{path}.{shown}" if path else str(shown)
        inner_secret = secret_name
        if isinstance(key, str) and is_secret_name(key):
            inner_secret = key
        elif entry is not None and key in _ENTRY_VALUES:
            inner_secret = entry
        out[shown], inner = redact(value, where, inner_secret)
        found += inner
    return out, found


def _redact_list(data: list[Any], path: str, secret_name: str | None) -> tuple[Any, list[str]]:
    found: list[str] = []
    items: list[Any] = []
    after_flag: str | None = None
    for i, value in enumerate(data):
        where = f"{path}[{i}]"
        if after_flag is not None and isinstance(value, str) and not value.startswith("-"):
            # ["--api-key", "sk-..."]: an argument list keeps a flag's value in the next item.
            item, inner = redact(value, where, after_flag)
        else:
            item, inner = redact(value, where, secret_name)
        items.append(item)
        found += inner
        after_flag = _bare_flag(value, pair=len(data) == 2)
    return items, found


def _bare_flag(value: Any, *, pair: bool) -> str | None:
    """The name when `value` is a secret flag or header name on its own (`--api-key`, `Authorization:`).

    A bare name (`"HF_TOKEN"`) counts only as the first of a pair: `["HF_TOKEN", "hf_..."]`.
    """
    if not isinstance(value, str):
        return None
    m = re.fullmatch(r"(--?)?([A-Za-z][\w.-]*)(:?)", value.strip())
    if m is None or not (m.group(1) or m.group(3) or pair) or not is_secret_name(m.group(2)):
        return None
    return m.group(2)


def redact_spans(text: str, spans: list[tuple[int, int, Any]]) -> tuple[list[tuple[int, int, Any]], list[str], str]:
    """The JSON values of `text` (each `(start, end, value)`) without their secrets.

    Returns each value cleaned, with the line and column it starts at; what was redacted, by
    line; and the copy of `text` to keep as evidence (`KeptCopy`, for values read one at a time).
    """
    kept = KeptCopy(text)
    cleaned = [kept.clean(start, end, obj) for start, end, obj in spans]
    notes, stored = kept.finish()
    return cleaned, notes, stored


class KeptCopy:
    """The copy of a JSON or JSON lines file to keep as evidence, built one value at a time.

    Only a value that held a secret is written again in that copy, the rest stays byte for byte;
    every value's text is then read once more as text, so what the object walk cannot see is
    caught by the same rules. Value by value rather than the whole text at once: no rule's match
    can reach past a JSON value's closing bracket, and the text pass over a 100,000-line file
    held a piece for every `key: value` in it (hundreds of megabytes).
    """

    def __init__(self, text: str) -> None:
        self._text = text
        self._notes: list[str] = []
        self._more = 0
        # (start, end, new text) of each value whose kept text differs from the file's.
        self._changed: list[tuple[int, int, str]] = []
        # Lines are counted from the value before, not from the top: counted from the top for
        # each of 100,000 values, an import was quadratic in the file's length.
        self._line, self._line_start, self._counted = 1, 0, 0

    def clean(self, start: int, end: int, obj: Any) -> tuple[int, int, Any]:
        """`obj` (the value at text[start:end]) without its secrets, with its line and column."""
        text = self._text
        self._line += text.count("\n", self._counted, start)
        self._line_start = max(self._line_start, text.rfind("\n", self._counted, start) + 1)
        self._counted = start
        line, col = self._line, start - self._line_start + 1
        clean, found = redact(obj)
        piece = json.dumps(clean, ensure_ascii=False) if found else text[start:end]
        piece, more = redact_text(piece)
        if found or more:
            self._changed.append((start, end, piece))
        self._notes += [f"line {line}: {p}" for p in found]
        self._more += more
        return line, col, clean

    def finish(self) -> tuple[list[str], str]:
        """What was redacted (by line, then how many more in the text), and the copy to keep."""
        notes = list(self._notes)
        if self._more:
            notes.append(f"{self._more} more secret value(s) in the text")
        if not self._changed:
            return notes, self._text
        out: list[str] = []
        pos = 0
        for start, end, piece in self._changed:
            out += [self._text[pos:start], piece]
            pos = end
        out.append(self._text[pos:])
        return notes, "".join(out)


# A log is redacted a piece at a time: a server's log can be gigabytes, and read whole it was
# held three times over (bytes, text, the redacted text).
_PIECE = 1 << 22
# A piece ends after a line that cannot lend its end to the next line's secret: not blank, and
# not ending in a flag, a `name:` or `name=`, a scheme word or a `\` continuation (the rules
# above take a value from the next line after those).
_OPEN_END = re.compile(rb"(?:--?[A-Za-z][\w-]*|[:=,\\]|(?i:bearer|basic|token|digest|negotiate|apikey))[ \t\r]*\Z")


def _piece_end(buf: bytes) -> int | None:
    """Where a piece of `buf` may end (after a newline), or None to read on."""
    end = len(buf)
    for _ in range(64):
        nl = buf.rfind(b"\n", 0, end)
        if nl < 0:
            break
        start = buf.rfind(b"\n", 0, nl) + 1
        line = buf[start:nl]
        if line.strip() and not _OPEN_END.search(line):
            return nl + 1
        end = nl
    # No safe place in a piece this long (a log of one endless line): cut at a newline anyway.
    if len(buf) >= 16 * _PIECE:
        nl = buf.rfind(b"\n")
        return nl + 1 if nl >= 0 else len(buf)
    return None


def redact_file(path: Path) -> int:
    """Redact the text file at `path` in place, by the rules of `redact_text`; how many values were.

    Bytes that are not UTF-8 are kept as they are (decoded and encoded with surrogateescape).
    The file is replaced atomically, and only when something was redacted.
    """
    import os
    import tempfile

    from generator.base.fsio import TMP_PREFIX

    count = 0
    fd, name = tempfile.mkstemp(prefix=TMP_PREFIX, dir=path.parent)
    try:
        with open(path, "rb") as src, os.fdopen(fd, "wb") as out:
            carry = b""
            while True:
                data = src.read(_PIECE)
                buf = carry + data
                cut = _piece_end(buf) if data else len(buf)
                if cut:
                    text, n = redact_text(buf[:cut].decode("utf-8", errors="surrogateescape"))
                    out.write(text.encode("utf-8", errors="surrogateescape"))
                    count += n
                    buf = buf[cut:]
                carry = buf
                if not data:
                    break
            if count:
                out.flush()
                os.fsync(out.fileno())
        if count:
            os.chmod(name, path.stat().st_mode & 0o7777)
            os.replace(name, path)
    finally:
        if os.path.exists(name):
            os.unlink(name)
    return count
