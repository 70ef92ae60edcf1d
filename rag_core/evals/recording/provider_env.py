"""The environment a case's subject runs in: the user's own, the same in every mode.

The harness never points a program at another endpoint: an SDK, or a framework over one,
sends other bytes when its base URL changes (a cache key only for the provider's own host,
usage in streams only without a custom endpoint, another transport altogether), so a golden
recorded that way would not be what the program sends in production. Recording against the
emulator, recording live and replaying all run the program with the endpoints its environment
names; the emulator answers in-process, at the layer the cassette already intercepts
(``recorder.py``).

Two kinds of variable are set, and only where the user's environment has none, in every mode
alike (so a module-level client is built the same way whichever mode imported it first):

- a dummy key per provider: SDKs refuse to build a client without one, and a replay or an
  emulated recording never sends it anywhere; for AWS a dummy key pair and a region, since boto3
  signs every request (SigV4) and cannot sign without them, set only where the environment names
  no credentials or profile of its own (so botocore stops at the environment and never reads
  ~/.aws/credentials, starts an SSO login or asks the EC2 metadata endpoint);
- the switches that keep frameworks from side effects a test run must not have: exporting traces
  of the run (with a real key, when the shell has one), writing telemetry settings into the
  home folder, answering from a disk cache instead of calling the provider, fetching a price
  table from the network at import.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
from contextlib import contextmanager
from typing import Iterator

from rag_core.providers import PROVIDERS
from rag_core.providers.bedrock import PROFILE_VARIABLES, REGION_VARIABLES

# per provider, the key variables its SDKs read (the first is the one set when none is)
KEY_VARIABLES = {provider.name: provider.key_variables for provider in PROVIDERS}
DUMMY_KEY = "rag-core-replay-key"
# boto3 signs for a region: set only where none is, and no profile is named (its config has one)
DUMMY_REGION = "us-east-1"

# framework switches (variable, value, why); the user's own setting wins
QUIET = (
    ("OPENAI_AGENTS_DISABLE_TRACING", "1", "the OpenAI Agents SDK exports a trace of every run to the provider"),
    ("HAYSTACK_TELEMETRY_ENABLED", "False", "Haystack sends telemetry and writes its settings under ~/.haystack"),
    ("LITELLM_LOCAL_MODEL_COST_MAP", "True", "LiteLLM fetches its price table from the network at import (and "
     "swaps it in from a background thread when a retry succeeds)"),
    ("LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS", "True", "LiteLLM fetches Anthropic's beta headers during a call"),
    ("ANONYMIZED_TELEMETRY", "False", "Chroma sends product telemetry"),
    ("AWS_EC2_METADATA_DISABLED", "true", "botocore asks the EC2 metadata endpoint (169.254.169.254) for "
     "credentials when a named profile holds none"),
)


# DSPy would write its disk cache under ~/.dspy_cache: pointed at a folder of this process's own
# (it is turned off once a case imports DSPy, ``forget_answers``; this covers what runs before)
DSPY_CACHE = "DSPY_CACHEDIR"


def forget_answers() -> None:
    """Turn off, for good, the caches in which frameworks keep the answers they were given, if
    such a framework is imported (none is imported here): DSPy answers a request it has seen
    from its memory or disk cache and sends nothing. A case's program must ask its model every
    time it runs: a replay would otherwise pin no traffic, and runs at once (``--concurrency``)
    would share answers, one repeat taking another's answer while that one is under way, which
    no clearing between runs can prevent. Called once a case's target is imported; idempotent."""
    import sys

    dspy = sys.modules.get("dspy")
    if dspy is None or not hasattr(dspy, "configure_cache"):
        return
    cache = vars(dspy).get("cache")  # None while not built: reading dspy.cache would build the default one
    if cache is not None and not getattr(cache, "enable_memory_cache", True) and not getattr(
            cache, "enable_disk_cache", True):
        return
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)


def planned(environ: dict[str, str], scratch: str) -> dict[str, str]:
    """The variables to set for a case (none is ever unset or replaced), ``scratch`` a folder of
    this process's own; a pure function."""
    changes: dict[str, str] = {}
    if DSPY_CACHE not in environ:
        changes[DSPY_CACHE] = os.path.join(scratch, "dspy-cache")
    for provider in PROVIDERS:
        if not any(environ.get(variable) for variable in provider.key_variables):
            dummies = provider.dummies(DUMMY_KEY)
            changes.update({variable: value for variable, value in dummies.items() if not environ.get(variable)})
    if not any(environ.get(variable) for variable in (*REGION_VARIABLES, *PROFILE_VARIABLES)):
        changes.update(dict.fromkeys(REGION_VARIABLES, DUMMY_REGION))
    for variable, value, _ in QUIET:
        if variable not in environ:
            changes[variable] = value
    return changes


@functools.cache
def _scratch() -> str:
    folder = tempfile.mkdtemp(prefix="rag-core-case-env-")
    atexit.register(shutil.rmtree, folder, True)
    return folder


@contextmanager
def provider_environment() -> Iterator[None]:
    """The case's environment for as long as it runs; afterwards what was there before."""
    changes = planned(dict(os.environ), _scratch())
    try:
        os.environ.update(changes)
        yield
    finally:
        for variable in changes:
            os.environ.pop(variable, None)
