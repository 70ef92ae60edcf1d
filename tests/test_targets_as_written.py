"""Meta-tests: agents pinned as their authors write them. The program runs in the same
environment when it is recorded against the emulator and when it is replayed, sends what it
sends in production, and cannot reach the network while a case runs."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import socket
import subprocess
import sys
import textwrap
import threading

import pytest

pytest_plugins = ["pytester"]

import openai  # noqa: E402,F401  (imported before pytester's in-process runs; see test_harness.py)
import vcr  # noqa: E402,F401

from tests.golden_project import UNUSED_PLUGINS_OPTIONS, project  # noqa: E402,F401  (project: a fixture)

AGENTS = '''
import functools
import os
import socket

from openai import AsyncOpenAI, AzureOpenAI, OpenAI


class _Lazy:
    """A client built on first use (test_module_level_clients... builds one at import instead)."""

    def __init__(self, kind):
        self.kind = kind

    @functools.cached_property
    def built(self):
        return self.kind(max_retries=0)

    def __getattr__(self, name):
        return getattr(self.built, name)


client = _Lazy(OpenAI)
async_client = _Lazy(AsyncOpenAI)


def cache_keyed(question, context=None):
    """Sends a field only to the provider's own host, as the OpenAI Agents SDK does."""
    extra = {"prompt_cache_key": "recipes"} if str(client.base_url).startswith("https://api.openai.com") else {}
    return client.responses.create(model="gpt-5.2", input=question, **extra).output_text


async def awaited(question, context=None):
    response = await async_client.responses.create(model="gpt-5.2", input=question)
    return response.output_text


async def streamed(question, context=None):
    stream = await async_client.responses.create(model="gpt-5.2", input=question, stream=True)
    async for event in stream:
        if event.type == "response.output_text.delta":
            yield event.delta


def generated(question, context=None):
    for event in client.responses.create(model="gpt-5.2", input=question, stream=True):
        if event.type == "response.output_text.delta":
            yield event.delta


class Text(str):
    """An answer type of the kind LangChain returns (AIMessage.text)."""


def subclassed(question, context=None):
    return Text(client.responses.create(model="gpt-5.2", input=question).output_text)


def numeric(question, context=None):
    client.responses.create(model="gpt-5.2", input=question)
    return 42


def retried(question, context=None):
    first = client.responses.create(model="gpt-5.2", input=question)
    again = client.responses.create(model="gpt-5.2", input=question)  # the same request again, as a retry sends it
    assert again.output_text == first.output_text
    return client.responses.create(model="gpt-5.2", input=question + " Thanks!").output_text


def azure(question, context=None):
    """A client that reads its own variables: the emulator answers it where it sends."""
    azure_client = AzureOpenAI(api_version="2024-10-21", max_retries=0,
                               azure_endpoint=os.environ.get("AZURE_OPENAI_ENDPOINT", "https://recipes.openai.azure.com"))
    response = azure_client.chat.completions.create(model="recipes-gpt", messages=[{"role": "user", "content": question}])
    return response.choices[0].message.content


def own_socket(question, context=None):
    """A transport the harness cannot intercept; the library swallows the error and carries on."""
    try:
        socket.create_connection(("telemetry.example.com", 443), timeout=2)
    except OSError:
        pass
    return client.responses.create(model="gpt-5.2", input=question).output_text


def idle(question, context=None):
    return "No call needed."


def quitter(question, context=None):
    raise SystemExit(3)
'''

NOISY_IMPORT = '''
import urllib.request

try:  # a price table fetched at import, as LiteLLM does; a failure is swallowed
    urllib.request.urlopen("https://prices.example.com/table.json", timeout=2)
except Exception:
    pass

from openai import OpenAI

# built at import, as SDK and framework docs write it: it needs a key in the environment then
client = OpenAI(max_retries=0)


def agent(question, context=None):
    return client.responses.create(model="gpt-5.2", input=question).output_text
'''

CASE = """
id: {id}
target: {target}
{inputs}
emulate:
{script}
"""


def _case(project, case_id, target, script=("text: Soak the noodles.",), turns=("How do I make pad thai?",),
          extra=""):
    inputs = f"input: {turns[0]}" if len(turns) == 1 else "turns:\n" + "".join(f"  - {t}\n" for t in turns)
    lines = "\n".join(f"  - {{{turn}}}" for turn in script)
    text = CASE.format(id=case_id, target=target, inputs=inputs, script=lines) + textwrap.dedent(extra)
    (project.path / "fixtures" / "goldens" / f"{case_id}.yaml").write_text(text)


@pytest.fixture
def agents(project, monkeypatch):
    for name in ("OPENAI_API_KEY", "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    (project.path / "agents_as_written.py").write_text(AGENTS)
    for path in (project.path / "fixtures" / "goldens").glob("*.yaml"):
        path.unlink()  # only this file's cases
    return project


def _installed_or_skip(*modules: str) -> None:
    """Skip unless ``modules`` are installed. Installed is enough: the sessions the test starts
    import them, which this process need not (the frameworks take seconds to import)."""
    missing = [module for module in modules if importlib.util.find_spec(module) is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")


def _record_and_replay(project, case_id, monkeypatch):
    recorded = project.runpytest("evals", "--case", case_id, "--record-mode=once", "--emulator")
    recorded.assert_outcomes(passed=1)
    monkeypatch.setenv("CI", "true")
    replayed = project.runpytest("evals", "--case", case_id)
    replayed.assert_outcomes(passed=1)
    monkeypatch.delenv("CI")
    return (project.path / "fixtures" / "goldens" / f"{case_id}.golden.yaml").read_text()


def test_what_is_recorded_is_what_the_program_sends_to_the_provider_and_replays(agents, monkeypatch):
    _case(agents, "cache_keyed", "agents_as_written:cache_keyed")
    golden = _record_and_replay(agents, "cache_keyed", monkeypatch)
    # the program believed it talked to the provider's own host, in recording and in replay
    assert "prompt_cache_key: recipes" in golden
    cassette = (agents.path / "cassettes" / "cache_keyed.yaml").read_text()
    assert "uri: https://api.openai.com/v1/responses" in cassette and "127.0.0.1" not in cassette


def test_module_level_clients_and_their_import_see_the_cases_environment(agents, monkeypatch):
    (agents.path / "noisy_agent.py").write_text(NOISY_IMPORT)
    _case(agents, "noisy", "noisy_agent:agent")
    recorded = agents.runpytest("evals", "--record-mode=once", "--emulator")
    recorded.assert_outcomes(passed=1)
    # the import's own network call was refused (and said), not sent
    recorded.stdout.fnmatch_lines(["*while its module was imported, the network guard refused name resolution of "
                                   "prices.example.com*"])
    monkeypatch.setenv("CI", "true")
    replayed = agents.runpytest("evals")
    replayed.assert_outcomes(passed=1)
    replayed.stdout.fnmatch_lines(["*the network guard refused name resolution of prices.example.com*"])


def test_a_module_that_fails_at_import_is_one_clear_error(agents):
    (agents.path / "broken_agent.py").write_text("import os\n\nraise RuntimeError('no config file')\n")
    _case(agents, "broken", "broken_agent:agent")
    result = agents.runpytest("evals", "--record-mode=once", "--emulator")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*broken.yaml: target: importing 'broken_agent' failed at broken_agent.py:3: "
                                 "RuntimeError: no config file"])
    assert "Traceback" not in result.stdout.str()


@pytest.mark.parametrize("target", ["awaited", "streamed", "generated"])
def test_async_and_streaming_targets_pin_their_traffic(agents, monkeypatch, target):
    _case(agents, target, f"agents_as_written:{target}", turns=("How do I make pad thai?", "And tom yum?"),
          script=("text: Soak the noodles.", "text: Boil lemongrass."))
    golden = _record_and_replay(agents, target, monkeypatch)
    assert "- How do I make pad thai?\n- And tom yum?\n" in golden  # both turns' requests were sent
    assert "output:\n  equals: Boil lemongrass." in golden


def test_a_str_subclass_answer_is_text_and_a_number_is_named(agents, monkeypatch):
    _case(agents, "subclassed", "agents_as_written:subclassed")
    assert "output:\n  equals: Soak the noodles." in _record_and_replay(agents, "subclassed", monkeypatch)
    _case(agents, "numeric", "agents_as_written:numeric")
    result = agents.runpytest("evals", "--case", "numeric", "--record-mode=once", "--emulator")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*numeric.yaml: target: the target returned a int, not text*"])
    assert not (agents.path / "cassettes" / "numeric.yaml").exists()


def test_a_retried_request_gets_the_same_answer_and_uses_no_turn(agents, monkeypatch):
    _case(agents, "retried", "agents_as_written:retried", script=("text: Soak the noodles.", "text: You're welcome."))
    assert "output:\n  equals: You're welcome." in _record_and_replay(agents, "retried", monkeypatch)


def test_clients_reading_other_variables_are_answered_where_they_send(agents, monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-key-0123456789abcdef0123456789abcdef")
    _case(agents, "azure", "agents_as_written:azure")
    _record_and_replay(agents, "azure", monkeypatch)
    cassette = (agents.path / "cassettes" / "azure.yaml").read_text()
    assert "uri: https://recipes.openai.azure.com/openai/deployments/recipes-gpt/chat/completions" in cassette
    assert "azure-key-0123456789abcdef" not in cassette + (agents.path / "fixtures" / "goldens" / "azure.golden.yaml").read_text()


def test_a_client_the_harness_cannot_intercept_fails_the_case_naming_it(agents):
    _case(agents, "own_socket", "agents_as_written:own_socket")
    result = agents.runpytest("evals", "--record-mode=once", "--emulator")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "recording failed, nothing was written" in out
    assert "it reached for the network, which is closed while a case runs: name resolution of telemetry.example.com" in out
    assert "agents_as_written" in out  # where the call came from
    assert not (agents.path / "cassettes" / "own_socket.yaml").exists()


def test_a_subject_that_makes_no_call_or_leaves_turns_unused_fails_unless_it_says_so(agents, monkeypatch):
    _case(agents, "idle", "agents_as_written:idle")
    result = agents.runpytest("evals", "--case", "idle", "--record-mode=once", "--emulator")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*agents_as_written:idle made no provider call, so the case pins nothing*"])
    _case(agents, "idle", "agents_as_written:idle", script=(), extra="expect: {usage: {max_rounds: 0}}\n")
    (agents.path / "fixtures" / "goldens" / "idle.yaml").write_text(
        (agents.path / "fixtures" / "goldens" / "idle.yaml").read_text().replace("emulate:\n", "emulate: []\n"))
    _record_and_replay(agents, "idle", monkeypatch)

    _case(agents, "long_script", "agents_as_written:cache_keyed", script=("text: Soak the noodles.", "text: Unused."))
    result = agents.runpytest("evals", "--case", "long_script", "--record-mode=once", "--emulator")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*emulate: scripts 2 turn(s), but the run asked for 1: turns #2–#2 were never used*"])
    _case(agents, "long_script", "agents_as_written:cache_keyed", script=("text: Soak the noodles.", "text: Unused."),
          extra="allow_unused_turns: true\n")
    _record_and_replay(agents, "long_script", monkeypatch)


FINAL_ANSWER_AGENT = '''
import json

from openai import OpenAI

TOOLS = [{"type": "function", "name": "final_answer", "description": "Give the final answer.",
          "parameters": {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}}]


def agent(question, context=None):
    """Ends only when the model calls final_answer, as smolagents' agents do."""
    client = OpenAI(max_retries=0)
    items = [{"role": "user", "content": question}]
    for _ in range(4):
        response = client.responses.create(model="gpt-5.2", input=items, tools=TOOLS)
        for item in response.output:
            if item.type == "function_call" and item.name == "final_answer":
                return json.loads(item.arguments)["answer"]
        items.append({"role": "assistant", "content": response.output_text})
        items.append({"role": "user", "content": "Call final_answer."})
    raise RuntimeError("no final answer")
'''


def test_an_agent_that_ends_on_a_tool_call_is_told_to_script_it(agents, monkeypatch):
    (agents.path / "final_agent.py").write_text(FINAL_ANSWER_AGENT)
    _case(agents, "final", "final_agent:agent")
    result = agents.runpytest("evals", "--record-mode=once", "--emulator")
    result.assert_outcomes(failed=1)
    assert ("the request after the last turn (a text answer) still offers 'final_answer': an agent that ends only on "
            "that tool call needs it scripted, e.g. - {tool_calls: [{name: final_answer, arguments: {...}}]}"
            in result.stdout.str())
    assert "add the missing turns" not in result.stdout.str()
    _case(agents, "final", "final_agent:agent",
          script=("tool_calls: [{name: final_answer, arguments: {answer: Soak the noodles.}}]",),
          extra="expect:\n  tool_calls: {calls: [{name: final_answer}], max: 1}\n")
    assert "output:\n  equals: Soak the noodles." in _record_and_replay(agents, "final", monkeypatch)


def test_a_hand_written_check_that_fails_gets_no_update_goldens_hint(agents, monkeypatch):
    _case(agents, "checked", "agents_as_written:cache_keyed", extra="expect: {output: {contains: noodles}}\n")
    _record_and_replay(agents, "checked", monkeypatch)
    case = agents.path / "fixtures" / "goldens" / "checked.yaml"
    case.write_text(case.read_text().replace("contains: noodles", "contains: rice"))
    result = agents.runpytest("evals")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "checked: 1 check(s) failed" in out and "fixtures/goldens/checked.yaml:output:" in out
    assert "--update-goldens" not in out  # it cannot fix a hand-written check


def test_trajectory_checks_take_argument_subsets_and_counts(agents, monkeypatch):
    (agents.path / "final_agent.py").write_text(FINAL_ANSWER_AGENT)
    script = ("tool_calls: [{name: final_answer, arguments: {answer: Soak the noodles.}}]",)
    _case(agents, "trajectory", "final_agent:agent", script=script,
          extra="expect:\n  tool_calls: {calls: [{name: final_answer, arguments: {}}], min: 1, max: 1}\n")
    _record_and_replay(agents, "trajectory", monkeypatch)
    case = agents.path / "fixtures" / "goldens" / "trajectory.yaml"
    for wrong, message in (("arguments: {}}], min: 1", "arguments: {answer: Boil rice.}}], min: 1"),
                           ("min: 1, max: 1", "min: 2, max: 3")):
        case.write_text(case.read_text().replace(*((wrong, message) if wrong in case.read_text() else (message, wrong))))
    result = agents.runpytest("evals")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "trajectory.yaml:tool_calls (exact order, arguments as subsets)" in out
    assert "trajectory.yaml:tool_calls.min: 1 tool call(s) ['final_answer'], fewer than 2" in out


def test_a_diff_of_a_string_with_trailing_spaces_is_a_line_diff():
    from rag_core.evals.common.diff import unified

    prompt = "\n".join(f"Rule {n}: answer in one sentence about dish number {n}, then stop.  " for n in range(12))
    diff = unified("golden:system_prompt", prompt, prompt.replace("Rule 5: answer", "Rule 5: reply"))
    changed = [line for line in diff.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert changed == ["-  Rule 5: answer in one sentence about dish number 5, then stop.\u2420\u2420",
                       "+  Rule 5: reply in one sentence about dish number 5, then stop.\u2420\u2420"]
    assert diff.endswith("(\u2420 a trailing space)\n")


DSPY_AGENT = '''
import dspy


def lookup_recipe(dish: str) -> str:
    """Look up how a Thai dish is made."""
    return "Soak rice noodles, then fry them with tamarind."


dspy.configure(lm=dspy.LM("openai/gpt-5.2"))
react = dspy.ReAct("question -> answer", tools=[lookup_recipe])


def agent(question):
    return react(question=question).answer
'''


def test_a_framework_with_its_own_http_client_is_pinned(agents, monkeypatch):
    """DSPy's default engine speaks HTTP over its own sockets (its vendored lm15 transports):
    its requests go through the cassette as an HTTP library's do, recorded against the
    emulator and replayed with the network closed."""
    _installed_or_skip("dspy")
    (agents.path / "dspy_agent.py").write_text(DSPY_AGENT)
    script = ('text: "[[ ## next_thought ## ]]\\nDone.\\n\\n[[ ## next_tool_name ## ]]\\nfinish\\n\\n'
              '[[ ## next_tool_args ## ]]\\n{}\\n\\n[[ ## completed ## ]]"',
              'text: "[[ ## reasoning ## ]]\\nKnown.\\n\\n[[ ## answer ## ]]\\nSoak the noodles.\\n\\n'
              '[[ ## completed ## ]]"')
    _case(agents, "dspy_react", "dspy_agent:agent", script=script)
    # a process of its own per run: DSPy keeps answers in an in-process cache
    recorded = agents.runpytest_subprocess("evals", "--record-mode=once", "--emulator")
    recorded.assert_outcomes(passed=1)
    cassette = (agents.path / "cassettes" / "dspy_react.yaml").read_text()
    assert "https://api.openai.com/v1/chat/completions" in cassette
    monkeypatch.setenv("CI", "true")
    agents.runpytest_subprocess("evals").assert_outcomes(passed=1)


LAZY_DSPY_AGENT = '''
def agent(question):
    import dspy  # first imported while the case runs: its client was not there to route

    dspy.configure(lm=dspy.LM("openai/gpt-5.2"))
    return dspy.Predict("question -> answer")(question=question).answer
'''


def test_a_client_first_imported_while_its_case_runs_is_named_not_pinned(agents):
    _installed_or_skip("dspy")
    (agents.path / "lazy_dspy.py").write_text(LAZY_DSPY_AGENT)
    _case(agents, "lazy_dspy", "lazy_dspy:agent")
    result = agents.runpytest_subprocess("evals", "--record-mode=once", "--emulator")
    result.assert_outcomes(failed=1)
    assert ("it reached for the network, which is closed while a case runs: name resolution of api.openai.com by "
            "dspy._vendor.lm15.transports._sync (called from lazy_dspy)") in result.stdout.str()
    assert not (agents.path / "cassettes" / "lazy_dspy.yaml").exists()


LINGERING_AGENT = '''
import socket
import threading
import time

from openai import OpenAI

released = threading.Event()


def _phone_home():
    released.wait(30)
    try:
        socket.create_connection(("metrics.example.com", 443), timeout=2)
    except OSError:
        pass


def agent(question, context=None):
    threading.Thread(target=_phone_home, daemon=True).start()  # outlives the case
    return OpenAI(max_retries=0).responses.create(model="gpt-5.2", input=question).output_text


def later(question, context=None):
    released.set()
    time.sleep(0.5)
    return OpenAI(max_retries=0).responses.create(model="gpt-5.2", input=question).output_text
'''


def test_a_thread_the_subject_started_stays_guarded_after_its_case(agents):
    (agents.path / "lingering_agent.py").write_text(LINGERING_AGENT)
    _case(agents, "a_lingering", "lingering_agent:agent")
    _case(agents, "b_later", "lingering_agent:later")
    result = agents.runpytest("evals", "--record-mode=once", "--emulator", "-p", "no:randomly")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*after case a_lingering had ended, a thread or task it left running reached for the "
                                 "network: name resolution of metrics.example.com*"])


def test_the_context_goes_only_to_a_target_that_asks_for_it():
    from rag_core.evals.golden.targets import takes_context

    def plain(question): ...
    def with_context(question, context): ...
    def named(question, context=None): ...
    def own_option(question, history=None): ...
    def variadic(*args): ...

    assert [takes_context(f) for f in (plain, with_context, named, own_option, variadic)] == [
        False, True, True, False, True]


AGENTS_SDK_AGENT = '''
from agents import Agent, Runner, function_tool


@function_tool
def lookup_recipe(dish: str) -> str:
    """Look up how a Thai dish is made."""
    return "Soak rice noodles, then fry them with tamarind, fish sauce and palm sugar."


agent = Agent(name="Thai cook", instructions="You are a Thai cooking assistant. Answer in two sentences.",
              model="gpt-5.2", tools=[lookup_recipe])


def run_sync(question):
    return Runner.run_sync(agent, question).final_output


def run_twin(question):
    return Runner.run_sync(agent, question).final_output
'''


def test_editing_a_framework_agents_instructions_fails_exactly_its_case_and_the_hint_restores_it(agents, monkeypatch):
    """The OpenAI Agents SDK as its quickstart writes it: recorded against the emulator, replayed
    strictly; an edit of its instructions fails that case alone, with a line diff, and the
    printed command accepts it."""
    pytest.importorskip("agents")
    from tests.golden_project import run_hint

    (agents.path / "cook.py").write_text(AGENTS_SDK_AGENT)
    script = ("tool_calls: [{name: lookup_recipe, arguments: {dish: pad thai}}]", "text: Soak the noodles and fry them.")
    # the SDK sends a prompt_cache_key that is new for every run (agents-sdk:run:<uuid>)
    rules = "normalize: [{path: 'requests[*].prompt_cache_key', placeholder: <run>}]\n"
    _case(agents, "cook", "cook:run_sync", script=script, extra=rules)
    _case(agents, "cook_twin", "cook:run_twin", script=script, extra=rules)
    agents.runpytest("evals", "--record-mode=once", "--emulator").assert_outcomes(passed=2)
    monkeypatch.setenv("CI", "true")
    agents.runpytest("evals").assert_outcomes(passed=2)
    golden = (agents.path / "fixtures" / "goldens" / "cook.golden.yaml").read_text()
    assert "prompt_cache_key: <run>" in golden  # sent, as it is to the provider's own host

    module = agents.path / "cook.py"
    module.write_text(module.read_text().replace("def run_twin(question):\n    return Runner.run_sync(agent",
                                                 "TWIN = agent.clone(instructions='You are a Thai cooking assistant. "
                                                 "Answer in two sentences.')\n\n\ndef run_twin(question):\n    "
                                                 "return Runner.run_sync(TWIN").replace(
        "Answer in two sentences.\",", "Answer in one sentence.\","))
    result = agents.runpytest("evals")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "FAILED evals/test_goldens.py::test_golden_case[cook]" in out
    assert "-You are a Thai cooking assistant. Answer in two sentences." in out
    assert "+You are a Thai cooking assistant. Answer in one sentence." in out
    run_hint(agents, result, "if the change is intended: ")
    agents.runpytest("evals").assert_outcomes(passed=2)


def test_a_target_that_exits_fails_its_case_not_the_session(agents):
    _case(agents, "quitter", "agents_as_written:quitter")
    _case(agents, "cache_keyed", "agents_as_written:cache_keyed")
    result = agents.runpytest("evals", "--record-mode=once", "--emulator")
    result.assert_outcomes(failed=1, passed=1)  # the other case still ran
    result.stdout.fnmatch_lines(["*quitter.yaml: target: the target called sys.exit(3) on turn 1*"])


def test_an_edited_tool_description_fails_every_framework_case_that_sends_it(tmp_path):
    """Every framework agent in evals/ as its docs write it, replayed strictly after one edit of
    the tool's description (in the shared recipe table and the docstrings the frameworks read):
    each case fails, none passes stale, and each diff shows the old and the new text."""
    from tests.golden_project import ROOT

    _installed_or_skip("agents", "langchain_openai", "litellm", "haystack", "smolagents", "dspy", "anthropic", "boto3")
    shutil.copytree(ROOT / "evals", tmp_path / "evals", ignore=shutil.ignore_patterns("__pycache__"))
    # and the repository's conftest.py, under which its evals/ run: it freezes the heap the
    # frameworks' imports leave, which pytest's collections at the session's end would walk again
    for name in ("fixtures", "cassettes", "conftest.py"):
        (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / "pytest.ini").write_text(f"[pytest]\naddopts = -p no:cacheprovider {UNUSED_PLUGINS_OPTIONS}\n"
                                         "pythonpath = .\n")
    old, new = "Look up how a Thai dish is made.", "Find out how a Thai dish is cooked."
    for module in (tmp_path / "evals" / "foreign_agents").rglob("*.py"):
        module.write_text(module.read_text().replace(old, new))
    environment = {**os.environ, "CI": "true"}
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "evals/test_goldens.py", "-m",
                             "frameworks and not legacy_sdk"], cwd=tmp_path, env=environment,
                            capture_output=True, text=True, timeout=600)
    out = result.stdout
    failed = set(re.findall(r"FAILED evals/test_goldens.py::test_golden_case\[(\w+)\]", out))
    passed = set(re.findall(r"PASSED evals/test_goldens.py::test_golden_case\[(\w+)\]", out))
    assert not passed, out[-3000:]
    expected = {"fw_agents_sdk_sync", "fw_agents_sdk_streamed", "fw_agents_sdk_async", "fw_langchain_invoke",
                "fw_langchain_stream", "fw_langchain_ainvoke", "fw_litellm", "fw_haystack", "fw_smolagents",
                "fw_dspy", "anthropic_sdk", "anthropic_sdk_stream", "bedrock_converse", "bedrock_converse_stream"}
    assert failed == expected, (sorted(failed ^ expected), out[-3000:])
    assert out.count(new) >= len(failed) and old in out


SILENT_PROVIDER_AGENT = '''
import os

from openai import OpenAI

# the client's own timeout (600 s per attempt) is what a hanging provider would cost
client = OpenAI(base_url=os.environ["SILENT_PROVIDER_URL"], max_retries=0)


def agent(question):
    return client.responses.create(model="gpt-5.2", input=question).output_text
'''


def test_record_timeout_bounds_the_targets_own_clients(agents, monkeypatch):
    """Recording live against a provider that accepts the request and never answers: the
    target's client has its own 600 s timeout, and the case still fails after --record-timeout,
    naming it."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    threading.Thread(target=lambda: accepted.append(listener.accept()[0]), daemon=True).start()
    monkeypatch.setenv("SILENT_PROVIDER_URL", f"http://127.0.0.1:{listener.getsockname()[1]}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    (agents.path / "silent.py").write_text(SILENT_PROVIDER_AGENT)
    _case(agents, "silent", "silent:agent")
    try:
        result = agents.runpytest_subprocess("evals", "--record-mode=once", "--record-timeout=1", timeout=120)
    finally:
        listener.close()
        for connection in accepted:
            connection.close()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*got no answer within 1 s (--record-timeout)*"])
    assert result.duration < 60


TRACED_AGENT = '''
from openai import OpenAI

client = OpenAI(max_retries=0)


def agent(question):
    return client.responses.create(model="gpt-5.2", input=question, extra_query={"trace": "run-7f3a"}).output_text
'''

CASSETTE_HOOK = '''
import urllib.parse


def _untraced(request):
    parts = urllib.parse.urlsplit(request.uri)
    query = [(k, v) for k, v in urllib.parse.parse_qsl(parts.query) if k != "trace"]
    request.uri = urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))
    return request


def pytest_rag_core_configure_cassette(case, vcr):
    vcr.before_record_request = _untraced
    vcr.record_mode = "none"  # the harness's own mode stays: this one would refuse the recording
    with open("hook-calls.txt", "a") as log:
        log.write(case.id + "\\n")
'''


def test_a_project_configures_the_cassette_through_a_hook(agents, monkeypatch):
    """As pytest-recording's pytest_recording_configure: a conftest hook gets the case and the
    VCR; its filter runs (the volatile query parameter never reaches the cassette), the harness's
    scrubbing and record mode stay."""
    (agents.path / "traced.py").write_text(TRACED_AGENT)
    (agents.path / "conftest.py").write_text(CASSETTE_HOOK)
    _case(agents, "traced", "traced:agent")
    agents.runpytest("evals", "--record-mode=once", "--emulator").assert_outcomes(passed=1)
    cassette = (agents.path / "cassettes" / "traced.yaml").read_text()
    assert "uri: https://api.openai.com/v1/responses\n" in cassette and "run-7f3a" not in cassette
    monkeypatch.setenv("CI", "true")
    agents.runpytest("evals").assert_outcomes(passed=1)
    assert (agents.path / "hook-calls.txt").read_text() == "traced\ntraced\n"
