"""Run one golden case: build the agent, replay or record its cassette, observe, compare."""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag_core.evals.atomic import write_atomic
from rag_core.evals.harness import compare as comparing
from rag_core.evals.harness.case import GoldenCase, load_expect
from rag_core.evals.harness.errors import UnrecordedRequestError
from rag_core.evals.harness.observe import normalize, observe
from rag_core.evals.harness.recorder import CaseRecorder, api_key, network_blocked
from rag_core.evals.harness.build import PROVIDER, build_agent, build_model
from rag_core.evals.harness.yaml_dump import dump


@dataclass
class Settings:
    cassettes_dir: Path
    fixtures_dir: Path
    record_mode: str = "none"
    emulator: Any = None  # EmulatorServer while recording against the emulator
    strict_cassettes: bool = False
    block_network: bool = False
    update_goldens: bool = False


@dataclass
class CaseResult:
    case_id: str
    failures: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    updated: bool = False
    new_golden: bool = False  # written for the first time: to be reviewed before committing
    recorded: bool = False
    tokens: int = 0


def _unrecorded(exc: BaseException | None) -> BaseException | None:
    from vcr.errors import CannotOverwriteExistingCassetteException

    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, CannotOverwriteExistingCassetteException):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def _run_turns(agent: Any, case: GoldenCase) -> tuple[list[Any], BaseException | None]:
    outputs = []
    for text in case.inputs:
        try:
            result = agent.run(text, stream=bool(case.stream))
            out = list(result)[-1].output if case.stream else result
        except Exception as exc:
            partial = getattr(exc, "output", None)
            if partial is not None:
                outputs.append(partial)
            return outputs, exc
        outputs.append(out)
    return outputs, None


def _sdk_version(provider: str) -> str:
    if provider == "gemini":
        from google.genai import version

        return f"google-genai {version.__version__}"
    import openai

    return f"openai {openai.__version__}"


def run_case(case: GoldenCase, settings: Settings) -> CaseResult:
    result = CaseResult(case.id)
    recorder = CaseRecorder(settings.cassettes_dir / case.cassette_name(), settings.record_mode,
                            settings.emulator.url if settings.emulator else None)
    recording = recorder.will_record
    if recording and settings.emulator is not None:
        settings.emulator.load(case.emulate, seed=case.id)
    emulator_url = settings.emulator.url if recording and settings.emulator else None
    key = api_key(PROVIDER[case.model.api], recording, settings.emulator is not None)
    model = build_model(case.model, emulator_url=emulator_url, api_key=key)
    guard = network_blocked() if (settings.block_network or not recording) else nullcontext()
    with guard, recorder.use(_sdk_version(PROVIDER[case.model.api])) as replay:
        # built inside the cassette: a factory may call providers too (embedding a corpus)
        agent = build_agent(case, model, settings.fixtures_dir)
        outputs, error = _run_turns(agent, case)
    missing = _unrecorded(error)
    if missing is not None:
        raise UnrecordedRequestError(
            f"{case.id}: the agent made a request that {recorder.path.name} does not hold.\n{missing}\n\n"
            f"Record it: pytest evals/ -k '{case.id}' --record-mode=new_episodes --emulator "
            f"(or with OPENAI_API_KEY set instead of --emulator, against the live API)"
        )
    result.recorded = recording
    sent = [r for out in outputs for r in out.requests]
    observed = normalize(observe(agent, outputs, sent, error), case.rules)
    result.tokens = observed["usage"].get("total_tokens", 0)
    if not recording:
        result.stale = _stale(replay.pairs, recorder.path)
        if replay.unused:
            result.failures.append(
                f"{comparing.shown(recorder.path)}: {replay.unused} recorded interaction(s) were not used: the run made fewer "
                "provider calls than when it was recorded (re-record with --record-mode=rewrite if intended)"
            )
    golden_path = case.golden_path
    # a case recorded for the first time gets its first golden with the recording: replay alone
    # (CI) never writes one, so a case without a reviewed golden still fails there
    first_golden = recording and not golden_path.exists()
    if settings.update_goldens or first_golden:
        text = dump({k: v for k, v in observed.items()})
        if not golden_path.exists() or golden_path.read_text(encoding="utf-8") != text:
            result.new_golden = not golden_path.exists()
            write_atomic(golden_path, text)
            result.updated = True
        result.failures += [f for f in comparing.compare(case, None, observed, golden_path)]
        return result
    golden = load_expect(golden_path)
    if golden is None:
        result.failures.append(f"{comparing.shown(golden_path)}: no golden file yet; run `pytest evals/ --update-goldens -k '{case.id}'` and review it")
    result.failures += comparing.compare(case, golden, observed, golden_path)
    if result.stale and settings.strict_cassettes:
        result.failures += result.stale
    return result


def _stale(pairs: list[tuple[str, Any, Any]], path: Path) -> list[str]:
    """A report for every replayed request whose body differs from the recorded one."""
    reports = []
    for index, (request_path, sent, recorded) in enumerate(pairs):
        if sent != recorded:
            reports.append(
                f"stale cassette {comparing.shown(path)} (request #{index + 1}, {request_path}, differs from what "
                f"the agent now sends; re-record with --record-mode=rewrite):\n"
                + comparing.unified(f"{path.name}:request[{index}]", recorded, sent)
            )
    return reports
