"""The base of every part of a file written by hand (a golden case, a retrieval suite): a key it
does not know is an error, never ignored."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
