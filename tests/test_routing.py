"""Runs in threads keep their own cassettes (``routing.py``), and the process-wide pieces a run
enters (the timeout clamp, the network guard) stay right when runs enter and leave them out of
order."""

from __future__ import annotations

import socket
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from rag_core.evals.emulator.provider import ScriptedProvider
from rag_core.evals.recording import routing
from rag_core.evals.recording.network import NetworkBlockedError, late_attempts, network_blocked
from rag_core.evals.recording.recorder import CaseRecorder

# HTTPX's transport as the library defines it, taken before any cassette patches it (vcrpy's
# stand-in copies its name and module: only identity tells them apart)
UNPATCHED = httpx.HTTPTransport.handle_request
from rag_core.evals.recording.request_timeout import bounded_waits

URL = "https://api.openai.com/v1/chat/completions"
BODY = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Which run is this?"}]}


def _answer(response: httpx.Response) -> str:
    return response.json()["choices"][0]["message"]["content"]


def _refused_post(done: threading.Event) -> BaseException | None:
    """A request that no run can be told from: the error it met (None if it was taken), then ``done``."""
    try:
        httpx.post(URL, json=BODY)
    except routing.AmbiguousRequestError as exc:
        return exc
    finally:
        done.set()
    return None


def test_two_runs_at_once_each_record_and_get_their_own_answers(tmp_path):
    both_open = threading.Barrier(2)

    def run(name: str) -> tuple[str, str]:
        recorder = CaseRecorder(tmp_path / f"{name}.yaml", "all")
        with recorder.use("sdk", ScriptedProvider([{"text": f"run {name}"}], seed=name)):
            both_open.wait(timeout=10)  # the other run's cassette is open too
            answer = _answer(httpx.post(URL, json=BODY))
            both_open.wait(timeout=10)
        recorder.commit()
        return answer, (tmp_path / f"{name}.yaml").read_text()

    with ThreadPoolExecutor(2) as pool:
        (a, a_file), (b, b_file) = pool.map(run, ["a", "b"])
    assert (a, b) == ("run a", "run b")
    assert "run a" in a_file and "run b" not in a_file
    assert "run b" in b_file and "run a" not in b_file
    assert httpx.HTTPTransport.handle_request is UNPATCHED  # no cassette open: patches undone


def test_a_thread_a_run_starts_is_that_runs(tmp_path):
    def run(name: str) -> str:
        recorder = CaseRecorder(tmp_path / f"{name}.yaml", "all")
        with recorder.use("sdk", ScriptedProvider([{"text": f"run {name}"}], seed=name)):
            answers: list[str] = []
            worker = threading.Thread(target=lambda: answers.append(_answer(httpx.post(URL, json=BODY))))
            worker.start()  # a plain thread: it inherits no context, only its starter
            worker.join()
            return answers[0]

    with ThreadPoolExecutor(2) as pool:
        assert list(pool.map(run, ["a", "b"])) == ["run a", "run b"]


def test_a_thread_pool_the_runs_share_sends_each_request_to_the_run_that_submitted_it(tmp_path):
    """A framework's module-level pool (or asyncio's default executor): its worker thread is
    started by the first run that submits, then serves every run. Each request went to that first
    run's cassette while it was open, the other run's answer included."""
    shared = ThreadPoolExecutor(1)
    both_open = threading.Barrier(2)

    def run(name: str) -> tuple[str, str]:
        recorder = CaseRecorder(tmp_path / f"{name}.yaml", "all")
        with recorder.use("sdk", ScriptedProvider([{"text": f"run {name}"}], seed=name)):
            both_open.wait(timeout=10)
            answer = shared.submit(lambda: _answer(httpx.post(URL, json=BODY))).result(timeout=10)
            both_open.wait(timeout=10)
        recorder.commit()
        return answer, (tmp_path / f"{name}.yaml").read_text()

    try:
        with ThreadPoolExecutor(2) as pool:
            (a, a_file), (b, b_file) = pool.map(run, ["a", "b"])
    finally:
        shared.shutdown()
    assert (a, b) == ("run a", "run b")
    assert "run b" not in a_file and "run a" not in b_file


def test_an_event_loops_executor_serves_each_task_as_its_run(tmp_path):
    import asyncio

    async def both() -> list[str]:
        loop = asyncio.get_running_loop()
        loop.set_default_executor(ThreadPoolExecutor(1))  # one worker: the first run starts it
        both_open = asyncio.Barrier(2)

        async def run(name: str) -> str:
            recorder = CaseRecorder(tmp_path / f"{name}.yaml", "all")
            with recorder.use("sdk", ScriptedProvider([{"text": f"run {name}"}], seed=name)):
                await both_open.wait()
                # run_in_executor does not copy the task's context, as asyncio.to_thread does
                answer = await loop.run_in_executor(None, lambda: _answer(httpx.post(URL, json=BODY)))
                await both_open.wait()
                return answer

        return list(await asyncio.gather(run("a"), run("b")))

    assert asyncio.run(both()) == ["run a", "run b"]


def test_a_job_whose_run_has_ended_is_still_that_runs_and_is_refused(tmp_path):
    """A job left in a shared pool by a run that has ended (a logging callback, say) is not
    recorded into that run's closed cassette, where it would be lost, nor into another run's: it
    is refused, and kept for the session's summary naming the run and the request."""
    shared = ThreadPoolExecutor(1)
    a_ended, others_open, done = threading.Event(), threading.Barrier(3), threading.Event()

    def late() -> BaseException | None:
        a_ended.wait(timeout=10)
        others_open.wait(timeout=10)
        try:
            httpx.post(URL, json=BODY)
        except NetworkBlockedError as exc:
            return exc
        finally:
            done.set()
        return None

    recorder = CaseRecorder(tmp_path / "a.yaml", "all")
    with recorder.use("sdk", ScriptedProvider([{"text": "run a"}], seed="a")):
        job = shared.submit(late)
    a_ended.set()

    def run(name: str) -> None:
        other = CaseRecorder(tmp_path / f"{name}.yaml", "all")
        with other.use("sdk", ScriptedProvider([{"text": f"run {name}"}], seed=name)):
            others_open.wait(timeout=10)
            done.wait(timeout=10)
        other.commit()

    try:
        with ThreadPoolExecutor(2) as pool:
            runs = [pool.submit(run, name) for name in ("b", "c")]
            error = job.result(timeout=20)
            for each in runs:
                each.result()
    finally:
        shared.shutdown()
    assert "case a has ended" in str(error)
    assert [(x.case, x.what, x.address) for x in late_attempts()] == [("a", "POST", URL)]
    for name in ("b", "c"):  # nothing recorded
        assert "Which run is this?" not in (tmp_path / f"{name}.yaml").read_text()


def test_a_request_no_run_can_be_told_from_is_an_error_not_a_guess(tmp_path):
    both_open, done = threading.Barrier(3), threading.Event()

    def run(name: str) -> None:
        recorder = CaseRecorder(tmp_path / f"{name}.yaml", "all")
        with recorder.use("sdk", ScriptedProvider([{"text": f"run {name}"}], seed=name)):
            both_open.wait(timeout=10)
            done.wait(timeout=10)

    with ThreadPoolExecutor(3) as pool:  # the third thread belongs to no run
        runs = [pool.submit(run, name) for name in ("a", "b")]

        def stray() -> BaseException | None:
            both_open.wait(timeout=10)
            return _refused_post(done)

        error = pool.submit(stray).result()
        for each in runs:
            each.result()
    assert error is not None and "run with --concurrency 1" in str(error)

    # what the message asks for: one run at a time, and the same stray request is that run's
    done.clear()
    both_open = threading.Barrier(2)  # the run, and the stray request's thread

    def stray_beside_one_run() -> str:
        both_open.wait(timeout=10)
        try:
            return _answer(httpx.post(URL, json=BODY))
        finally:
            done.set()

    with ThreadPoolExecutor(2) as pool:
        alone = pool.submit(run, "a")
        assert pool.submit(stray_beside_one_run).result() == "run a"
        alone.result()


def test_the_timeout_clamp_is_undone_whichever_run_leaves_first():
    original, default = socket.socket.settimeout, socket.getdefaulttimeout()
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()

    def first() -> None:
        with bounded_waits(5):
            first_in.set()
            second_in.wait(timeout=10)
        first_out.set()

    def second() -> None:
        first_in.wait(timeout=10)
        with bounded_waits(5):
            second_in.set()
            first_out.wait(timeout=10)
            clamped = socket.socket()
            clamped.settimeout(600)
            assert clamped.gettimeout() == 5  # still bounded: the first run left, this one did not
            clamped.close()

    with ThreadPoolExecutor(2) as pool:
        for future in [pool.submit(first), pool.submit(second)]:
            future.result()
    assert socket.socket.settimeout is original and socket.getdefaulttimeout() == default


def test_the_network_guard_names_the_case_whose_thread_reached_out():
    entered = threading.Barrier(2)

    def run(case: str) -> list:
        with network_blocked(case) as attempts:
            entered.wait(timeout=10)
            with pytest.raises(NetworkBlockedError):
                socket.getaddrinfo(f"{case}.example.com", 443)
            entered.wait(timeout=10)
        return attempts

    with ThreadPoolExecutor(2) as pool:
        a, b = pool.map(run, ["first", "second"])
    assert [(x.case, x.address) for x in a] == [("first", "first.example.com")]
    assert [(x.case, x.address) for x in b] == [("second", "second.example.com")]


def test_a_connection_one_run_builds_leaves_the_other_runs_patched(tmp_path, monkeypatch):
    """vcrpy put the real classes back, for the whole process, while a stub built the connection
    it wraps (``force_reset``): a request another run sent meanwhile went out unpatched (the guard
    refused it; recording live, it would have reached the provider unrecorded)."""
    import requests
    import urllib3.connection

    building, sent = threading.Event(), threading.Event()
    both_open = threading.Barrier(2)
    real_init = urllib3.connection.HTTPSConnection.__init__

    def init(connection, *args, **kwargs):
        real_init(connection, *args, **kwargs)
        if threading.current_thread().name == "run-a":  # hold run a inside the build
            building.set()
            sent.wait(timeout=10)

    monkeypatch.setattr(urllib3.connection.HTTPSConnection, "__init__", init)
    answers: dict[str, object] = {}

    def run(name: str) -> None:
        recorder = CaseRecorder(tmp_path / f"{name}.yaml", "all")
        try:
            with network_blocked(name), recorder.use("sdk", ScriptedProvider([{"text": f"run {name}"}], seed=name)):
                both_open.wait(timeout=10)
                if name == "a":  # requests (urllib3) builds a connection for its pool
                    answers[name] = requests.post(URL, json=BODY, timeout=10).json()["choices"][0]["message"]["content"]
                else:
                    assert building.wait(timeout=10)
                    try:
                        answers[name] = _answer(httpx.post(URL, json=BODY))
                    finally:
                        sent.set()
        except Exception as exc:  # noqa: BLE001 (the test reads what each run came to)
            answers[name] = exc

    threads = [threading.Thread(target=run, args=(name,), name=f"run-{name}") for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert answers == {"a": "run a", "b": "run b"}


def test_http_clients_own_https_connection_is_still_built_inside_a_run(tmp_path):
    """No class is put back while a stub builds its connection: http.client's HTTPSConnection,
    which finds its class by its module's name for it, still builds (urllib.request's path)."""
    import http.client
    import json
    import urllib.request

    import vcr.patch

    recorder = CaseRecorder(tmp_path / "a.yaml", "all")
    with network_blocked("a"), recorder.use("sdk", ScriptedProvider([{"text": "run a"}], seed="a")):
        request = urllib.request.Request(URL, data=json.dumps(BODY).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            assert json.loads(response.read())["choices"][0]["message"]["content"] == "run a"
    # with the last cassette, everything is as vcrpy and the standard library had it
    assert http.client.HTTPSConnection is vcr.patch._HTTPSConnection
    assert http.client.HTTPSConnection.__init__.__globals__ is vars(http.client)
    assert vcr.patch.force_reset.__module__ == "vcr.patch"


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _reach_out(port: int) -> int:
    """A connection the guard refuses (0.0.0.0 is not loopback), and that, let through, stays on
    this machine (refused: nothing listens)."""
    with socket.socket() as sock:
        sock.settimeout(2)
        return sock.connect_ex(("0.0.0.0", port))


@pytest.fixture
def shared_loop():
    """An event loop in a thread no case started, as the harness's runs at once share one."""
    import asyncio

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=10)
    loop.close()


def _on(loop, port: int):
    import asyncio

    async def reach_out() -> int:
        return _reach_out(port)

    return asyncio.run_coroutine_threadsafe(reach_out(), loop).result(timeout=10)


def test_a_coroutine_on_a_shared_loop_is_charged_to_the_case_that_awaits_it(shared_loop):
    """The loop's thread belongs to no case: its attempt was charged to the innermost case open
    (the one that opened last), not to the one whose coroutine made it."""
    port = _closed_port()
    first_open, second_open, done = threading.Event(), threading.Event(), threading.Event()
    results: dict[str, object] = {}

    def first() -> None:
        with network_blocked("first") as attempts:
            first_open.set()
            assert second_open.wait(timeout=10)
            try:
                _on(shared_loop, port)
            except NetworkBlockedError as exc:
                results["error"] = exc
            finally:
                done.set()
        results["first"] = attempts

    def second() -> None:
        assert first_open.wait(timeout=10)
        _guarded_case("second", second_open, done, results)

    with ThreadPoolExecutor(2) as pool:
        for each in [pool.submit(first), pool.submit(second)]:
            each.result()
    assert isinstance(results["error"], NetworkBlockedError)
    assert [(x.case, x.address) for x in results["first"]] == [("first", f"0.0.0.0:{port}")]
    assert results["second"] == []


def _guarded_case(name: str, opened: threading.Event, done: threading.Event, results: dict[str, object]) -> None:
    """A case under the network guard, open until ``done``: what the guard charged to it, in ``results``."""
    with network_blocked(name) as attempts:
        opened.set()
        assert done.wait(timeout=10)
    results[name] = attempts


def test_a_live_runs_coroutine_on_a_shared_loop_is_not_stopped_by_another_cases_guard(shared_loop):
    """A run recording live has no guard: its coroutine's connection was refused, and charged to
    an emulated case that happened to be open at the same time."""
    import errno

    port = _closed_port()
    guarded_open, done = threading.Event(), threading.Event()
    results: dict[str, object] = {}

    def live() -> None:
        with routing.own_run("live"):  # a run, not guarded (recording live)
            assert guarded_open.wait(timeout=10)
            try:
                results["live"] = _on(shared_loop, port)
            except NetworkBlockedError as exc:
                results["live"] = exc
            finally:
                done.set()

    with ThreadPoolExecutor(2) as pool:
        for each in [pool.submit(live), pool.submit(_guarded_case, "emulated", guarded_open, done, results)]:
            each.result()
    assert results == {"live": errno.ECONNREFUSED, "emulated": []}  # let through: nothing listens there


def test_an_attempt_no_case_can_be_told_from_is_charged_to_each_case_open():
    port = _closed_port()
    both_open, done = threading.Barrier(3), threading.Event()
    results: dict[str, object] = {}

    def run(case: str) -> None:
        with network_blocked(case) as attempts:
            both_open.wait(timeout=10)
            assert done.wait(timeout=10)
        results[case] = attempts

    def stray() -> None:  # a thread started outside every case
        both_open.wait(timeout=10)
        try:
            _reach_out(port)
        except NetworkBlockedError as exc:
            results["error"] = exc
        finally:
            done.set()

    threads = [threading.Thread(target=run, args=(case,)) for case in ("a", "b")] + [threading.Thread(target=stray)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    assert "run with --concurrency 1" in str(results["error"])
    assert [(x.case, x.among) for x in results["a"]] == [("a", 2)]
    assert [(x.case, x.among) for x in results["b"]] == [("b", 2)]


def test_a_pool_job_is_charged_to_the_case_that_submitted_it():
    """A pool's worker started by one case serves the next: the guard charged the second case's
    attempt to the first (the case open when the worker was started), after that case had ended."""
    port = _closed_port()
    shared = ThreadPoolExecutor(1)
    try:
        with network_blocked("first") as first:
            shared.submit(lambda: None).result(timeout=10)  # starts the worker
        with network_blocked("second") as second, pytest.raises(NetworkBlockedError):
            shared.submit(_reach_out, port).result(timeout=10)
    finally:
        shared.shutdown()
    assert (first, [x.case for x in second], late_attempts()) == ([], ["second"], [])
