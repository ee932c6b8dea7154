"""The serving stack as pydantic models: the model, the hardware and the engine.

campaign.yaml says them for the whole campaign; a record's `setup` may say its own (the same
model on other GPUs, or served by another engine).
"""

from __future__ import annotations

from pydantic import Field

from generator.model.result import Count, NonEmpty, Strict

Detail = str | int | float | bool


class ModelInfo(Strict):
    name: NonEmpty
    parameters: str | None = None
    architecture: str | None = None
    details: dict[str, Detail] = Field(default_factory=dict)


class Hardware(Strict):
    gpu: NonEmpty
    # Leave out when the source does not say how many GPUs: pages then say "not recorded".
    count: Count | None = None
    architecture: str | None = None
    interconnect: str | None = None
    details: dict[str, Detail] = Field(default_factory=dict)


class Engine(Strict):
    name: NonEmpty
    # Leave out when not recorded: pages then say so instead of guessing.
    version: str | None = None
    # The container image the engine runs in, with its tag or digest (lmsysorg/sglang:v0.5.9-cu129).
    image: NonEmpty | None = None
    note: str | None = None
