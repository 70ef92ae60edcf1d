"""The providers' own environment variables while a case builds and runs its agent.

A factory builds clients the case's ``model:`` does not cover (a Cohere embedder and reranker,
a Gemini embedder), written the way a user's program writes them: no ``base_url``, no
``api_key``. Each SDK reads its endpoint and key from its usual variables, so the harness sets
those for the length of the case:

- recording against the emulator: every endpoint points at the emulator and every key is a
  dummy (a real key in the environment never leaves for the emulator);
- replaying: endpoints are the providers' defaults (cassettes match on method and path, and a
  proxy prefix in the user's environment would change the path) and a missing key gets a dummy
  (the SDKs refuse to build a client without one; vcrpy answers every call);
- recording live: the user's environment as it is.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Iterator

# the variable each SDK reads its endpoint from, and what follows the emulator's address
ENDPOINTS = {"OPENAI_BASE_URL": "/v1", "CO_API_URL": "", "GOOGLE_GEMINI_BASE_URL": ""}
# per provider, the key variables its SDK reads (the first is the one we set)
KEYS = (("OPENAI_API_KEY",), ("CO_API_KEY", "COHERE_API_KEY"), ("GEMINI_API_KEY", "GOOGLE_API_KEY"))
DUMMY_KEY = "rag-core-replay-key"


def planned(emulator_url: str | None, recording: bool, environ: dict[str, str]) -> dict[str, str | None]:
    """The variables to change (``None``: unset) for a case; a pure function of its inputs."""
    if recording and emulator_url is None:
        return {}
    changes: dict[str, str | None] = {}
    for variable, suffix in ENDPOINTS.items():
        if emulator_url is not None:
            changes[variable] = emulator_url + suffix
        elif variable in environ:
            changes[variable] = None
    for group in KEYS:
        present = [v for v in group if environ.get(v)]
        if emulator_url is not None:
            for variable in present or group[:1]:
                changes[variable] = DUMMY_KEY
        elif not present:
            changes[group[0]] = DUMMY_KEY
    return changes


@contextmanager
def provider_environment(emulator_url: str | None, recording: bool) -> Iterator[None]:
    changes = planned(emulator_url, recording, dict(os.environ))
    saved = {variable: os.environ.get(variable) for variable in changes}
    try:
        for variable, value in changes.items():
            _set(variable, value)
        yield
    finally:
        for variable, value in saved.items():
            _set(variable, value)


def _set(variable: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(variable, None)
    else:
        os.environ[variable] = value
