"""The example golden case ``rag-core init`` writes: one that runs where it is written.

Where the agent core can run (the agent extra's packages importable, an openai SDK it supports),
the example is a rag_core agent doing agentic RAG over a two-document corpus. Where it cannot (a
project that installed the harness alone to pin the agent it has), the example is a plain openai
SDK tool loop, written as OpenAI's function-calling guide writes it, pinned through its traffic as
a ``target:`` case; it runs on openai 1.x, 2.x and 3.x. With no openai SDK at all no example could
run, and ``choose`` says what to install instead.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from dataclasses import dataclass, field

from rag_core._optional import release

# the modules of the agent extra (pyproject.toml): the agent-core example runs where all import
AGENT_CORE_MODULES = ("openai", "certifi", "numpy", "threadpoolctl", "bm25s", "tqdm", "Stemmer", "bs4")
# the plain example's client (``OpenAI()``, Chat Completions tools) is openai 1.x's
OLDEST_PLAIN_OPENAI = (1, 0, 0)

AGENT_CASE = """\
# yaml-language-server: $schema=case.schema.json
# A golden case, hand-written: what the agent is, what it is asked, what the emulator answers while recording,
# and optional checks. Beside it, example_agentic_rag.golden.yaml is machine-written: the exact
# system prompt, tools and request bodies the agent sends. Review that file like code.
id: example_agentic_rag
model: {api: openai-responses, id: gpt-5.2}    # or openai-chat, gemini
agent:                                          # Agent(...) options, or "package.module:factory"
  search_knowledge: true
  markdown: true
  instructions: [Include sources in your response.]
knowledge: {corpus: example}                    # fixtures/corpora/example.yaml
input: How do I make pad thai?
emulate:                                        # what the emulator answers, one item per model call
  - tool_calls: [{name: search_knowledge_base, arguments: {query: pad thai}}]
  - text: Soak the rice noodles, then fry them with tamarind and fish sauce (source pad_thai).
expect:
  output: {contains: tamarind}
"""

AGENT_CORPUS = """\
# The documents of the example case's knowledge base.
- name: pad_thai
  content: Pad thai. Soak rice noodles in warm water, fry garlic and tofu, add the noodles with
    tamarind paste, fish sauce and palm sugar, then toss with bean sprouts and peanuts.
  meta_data: {source: recipes.md}
- name: green_curry
  content: Green curry. Fry green curry paste in coconut cream until fragrant, add chicken,
    coconut milk, Thai eggplant and fish sauce, and finish with Thai basil.
  meta_data: {source: recipes.md}
"""

SDK_CASE = """\
# yaml-language-server: $schema=case.schema.json
# A golden case, hand-written: which agent runs (any callable: here the plain openai SDK loop in
# evals/example_agent.py), what it is asked, what the emulator answers while recording, and optional
# checks. Beside it, example_sdk_agent.golden.yaml is machine-written from the agent's traffic: the
# exact system prompt, tools and request bodies it sends. Review that file like code.
id: example_sdk_agent
target: evals.example_agent:answer              # point it at your own agent: "package.module:function"
requires: [openai]
input: How do I make pad thai?
emulate:                                        # what the emulator answers, one item per model call
  - tool_calls: [{name: lookup_recipe, arguments: {dish: pad thai}}]
  - text: Soak the rice noodles, then fry them with tamarind and fish sauce.
expect:
  output: {contains: tamarind}
  tool_calls: {calls: [{name: lookup_recipe, arguments: {dish: pad thai}}]}
"""

SDK_AGENT = '''\
"""An example agent to pin: a tool loop on the openai SDK, as OpenAI's function-calling guide
writes it. fixtures/goldens/example_sdk_agent.yaml pins it through its traffic; point that case's
target: at your own agent, written as your code writes it."""

import json

from openai import OpenAI

client = OpenAI()  # the key and endpoint from the environment (OPENAI_API_KEY, OPENAI_BASE_URL)

RECIPES = {
    "pad thai": "Soak rice noodles in warm water, fry garlic and tofu, add the noodles with tamarind paste, "
                "fish sauce and palm sugar.",
    "green curry": "Fry green curry paste in coconut cream, add chicken, coconut milk and Thai eggplant, "
                   "finish with Thai basil.",
}

tools = [
    {
        "type": "function",
        "function": {
            "name": "lookup_recipe",
            "description": "Look up how a Thai dish is made.",
            "parameters": {
                "type": "object",
                "properties": {"dish": {"type": "string", "description": "The dish's name, e.g. pad thai."}},
                "required": ["dish"],
                "additionalProperties": False,
            },
            "strict": True,
        },
    }
]


def lookup_recipe(dish):
    return RECIPES.get(dish.strip().lower(), f"No recipe for {dish}.")


def answer(question):
    messages = [
        {"role": "system", "content": "You are a Thai cooking assistant. Look a dish up before you answer."},
        {"role": "user", "content": question},
    ]
    for _ in range(5):
        completion = client.chat.completions.create(model="gpt-5.2", messages=messages, tools=tools)
        message = completion.choices[0].message
        if not message.tool_calls:
            return message.content
        messages.append({
            "role": "assistant",
            "content": message.content,
            "tool_calls": [
                {"id": call.id, "type": "function",
                 "function": {"name": call.function.name, "arguments": call.function.arguments}}
                for call in message.tool_calls
            ],
        })
        for call in message.tool_calls:
            result = lookup_recipe(**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    raise RuntimeError("no answer after 5 model calls")
'''


@dataclass(frozen=True)
class Example:
    """An example case and the files beside it; ``extras`` are what CI installs rag-core with."""

    case_id: str
    files: dict[str, str]
    extras: str
    notes: list[str] = field(default_factory=list)


AGENT_EXAMPLE = Example("example_agentic_rag", {"fixtures/goldens/example_agentic_rag.yaml": AGENT_CASE,
                                                "fixtures/corpora/example.yaml": AGENT_CORPUS}, "harness,agent")
SDK_EXAMPLE = Example("example_sdk_agent", {"fixtures/goldens/example_sdk_agent.yaml": SDK_CASE,
                                            "evals/example_agent.py": SDK_AGENT}, "harness")


class NoExample(Exception):
    """No example case could run here; the message says what to install."""


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent that fails to import; a module without a spec
        return False


def _openai_release() -> tuple[int, ...] | None:
    if not _importable("openai"):
        return None
    try:
        return release(importlib.metadata.version("openai"))
    except importlib.metadata.PackageNotFoundError:
        return None


def agent_core_missing() -> list[str]:
    """What the agent core lacks here: modules that do not import, or an openai older than it takes."""
    from rag_core.providers.openai import OLDEST_OPENAI

    missing = [module for module in AGENT_CORE_MODULES if not _importable(module)]
    openai = _openai_release()
    if openai is not None and openai < OLDEST_OPENAI:
        missing.append(f"openai>={'.'.join(map(str, OLDEST_OPENAI))}")
    return missing


def choose() -> Example:
    """The example that runs here: the agent core's, else the plain openai SDK loop; NoExample when
    neither can run."""
    missing = agent_core_missing()
    if not missing:
        return AGENT_EXAMPLE
    openai = _openai_release()
    if openai is not None and openai >= OLDEST_PLAIN_OPENAI:
        note = (f"The example case pins a plain openai SDK agent (evals/example_agent.py) through its traffic: the agent "
                f"core is not installed here (missing: {', '.join(missing)}; pip install 'rag-core[agent]' brings it).")
        return Example(SDK_EXAMPLE.case_id, SDK_EXAMPLE.files, SDK_EXAMPLE.extras, [note])
    raise NoExample("no example case could run: it needs the agent core (pip install 'rag-core[agent]') or, for a "
                    "plain agent, the openai SDK (pip install openai), and neither is installed; install one, then run "
                    "rag-core init again")
