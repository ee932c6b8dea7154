"""Why a record (or a variant) came out as it did: the metrics its write-up says decided it
(`decided_by`, one mapping or a list) and the result it leads with (`headline`).

Apart from `record` so that the record's model stays within the size a module may have; the
record model imports these, nothing here imports it.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from generator.model.result import Finite, MetricName, NonEmpty, Strict


class DecidedBy(Strict):
    """The metric that decided the record, as its write-up says it ("rejected: TTFT +38% at 124K").

    Shown beside the decision and checked against the numbers of the result it names.
    """

    metric: MetricName
    # The result the deciding number is read on: the record's own, or that of `variant`.
    result: NonEmpty
    variant: NonEmpty | None = None
    # The change as the write-up states it, in percent with the number's own sign (+38 for a
    # TTFT that rose 38%); `check` warns when the computed or reported change says otherwise.
    change: Finite | None = None
    note: str | None = None


# One metric that decided, or several (a list): "rejected because TTFT and ITL regressed".
DecidedByMany = DecidedBy | Annotated[list[DecidedBy], Field(min_length=1)]


def deciders_of(value: DecidedByMany | None) -> tuple[DecidedBy, ...]:
    """`decided_by` as a tuple, whichever form it was written in."""
    if value is None:
        return ()
    return (value,) if isinstance(value, DecidedBy) else tuple(value)


class Headline(Strict):
    """The result the author leads with ("124K C=2, -38.2%"): the one the record is ranked on."""

    result: NonEmpty
    note: str | None = None
