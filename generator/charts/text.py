"""Text measurement, fitting and number formatting for the SVG charts.

Label widths are estimated from a hand-written advance-width table of DejaVu Sans, the font
the charts declare first: real font metrics need a font library (matplotlib, fontTools,
Pillow), which is the weight these charts exist to avoid. DejaVu Sans is among the widest
common sans-serif faces, so text measured with it fits in the narrower fallbacks too.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from generator.model.quantity import fmt_number, fmt_percent

ELLIPSIS = "…"

# Advance widths in 1/1000 em of DejaVu Sans (Book), read once from the font's hmtx table.
_ASCII = (
    "318 401 460 838 636 950 780 275 390 390 500 838 318 361 318 337 "  # space ! " # $ % & ' ( ) * + , - . /
    "636 636 636 636 636 636 636 636 636 636 337 337 838 838 838 531 "  # 0-9 : ; < = > ?
    "1000 684 686 698 770 632 575 775 752 295 295 656 557 863 748 787 "  # @ A-O
    "603 787 695 635 611 732 684 989 685 611 685 390 337 390 838 500 "  # P-Z [ \ ] ^ _
    "500 613 635 550 635 615 352 635 634 278 278 579 278 974 634 612 "  # ` a-o
    "635 635 411 521 392 634 592 818 592 592 525 636 337 636 838"  # p-z { | } ~
)
_WIDTHS: dict[str, int] = {chr(32 + i): int(w) for i, w in enumerate(_ASCII.split())}
_WIDTHS.update({"…": 1000, "–": 500, "—": 1000, "−": 838, "±": 838, "×": 838, "·": 318, "≤": 838, "≥": 838})
# Bold text (chart headings) is measured as Book text this much larger: DejaVu Sans Bold's
# advances run about 8-10% wider than Book's (a 690 px Book estimate rendered 748 px bold).
BOLD = 1.12
# Anything else: the mean width of DejaVu's Latin letters, a full em for wide (CJK) characters.
_OTHER = 620
_WIDE = 1000


@lru_cache(maxsize=4096)
def _char_width(ch: str) -> int:
    known = _WIDTHS.get(ch)
    if known is not None:
        return known
    if unicodedata.combining(ch):
        return 0
    return _WIDE if unicodedata.east_asian_width(ch) in ("W", "F") else _OTHER


# Printable ASCII by code point, for the common case measured in C (map) rather than per character.
_ASCII_WIDTHS = tuple(_WIDTHS.get(chr(i), _OTHER) for i in range(128))


def text_width(text: str, size: float) -> float:
    """Estimated rendered width in px of `text` at font size `size` px."""
    if text.isascii():
        return sum(map(_ASCII_WIDTHS.__getitem__, map(ord, text))) * size / 1000
    return sum(map(_char_width, text)) * size / 1000


def fit(text: str, width: float, size: float) -> str:
    """`text` on one line, cut with an ellipsis so it is at most `width` px wide."""
    text = " ".join(text.split())
    if text_width(text, size) <= width:
        return text
    budget = width - text_width(ELLIPSIS, size)
    used = 0.0
    for i, ch in enumerate(text):
        used += _char_width(ch) * size / 1000
        if used > budget:
            return text[:i].rstrip() + ELLIPSIS
    return text


def one_line(text: str) -> str:
    return " ".join(text.split())


def chart_id(value: str) -> str:
    """A valid, stable XML id prefix from the caller's chart id (no random parts)."""
    cleaned = re.sub(r"[^A-Za-z0-9_-]+", "-", value).strip("-")
    return cleaned if cleaned[:1].isalpha() else f"chart-{cleaned}"


def px(value: float) -> str:
    """A coordinate with one decimal at most: short, and the same bytes on every machine."""
    text = f"{value:.1f}"
    if text.endswith(".0"):
        text = text[:-2]
    return "0" if text == "-0" else text


def number(value: float) -> str:
    return fmt_number(value)


def percent(value: float) -> str:
    return fmt_percent(value)


def signed(value: float) -> str:
    """A tick or delta with its sign, in the pages' number format."""
    text = fmt_number(value)
    return f"+{text}" if value > 0 else text


def signed_percent_tick(value: float) -> str:
    return f"{signed(value)}%"
