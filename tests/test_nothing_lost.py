"""Nothing lost: a recording whose files cannot be written leaves the committed cassette and
golden as they were, says so in one line, and leaves the next case recording whole; files land
with the user's umask."""

from __future__ import annotations

import errno
import os
import textwrap
from pathlib import Path

import pytest

from rag_core.evals.golden.case_files import parse_case_file
from rag_core.evals.common.errors import HarnessError
from rag_core.evals.golden.runner import Settings, run_case

CASE = """
id: {id}
agent: {{instructions: [Be brief.]}}
input: What is in the pantry?
emulate:
  - text: {answer}
"""


def _case(folder: Path, case_id: str, answer: str = "Fish sauce."):
    path = folder / "goldens" / f"{case_id}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(CASE.format(id=case_id, answer=answer)))
    [case] = parse_case_file(path)
    return case


def _settings(folder: Path, **extra) -> Settings:
    return Settings(cassettes_dir=folder / "cassettes", fixtures_dir=folder, record_mode="rewrite", emulator=True,
                    update_goldens=True, **extra)


def test_a_cassette_that_cannot_be_written_leaves_the_next_case_recording_whole(tmp_path, monkeypatch):
    from rag_core.evals.recording import cassette_persister

    first, second = _case(tmp_path, "first"), _case(tmp_path, "second")
    real_write = cassette_persister.write_atomic

    def disk_full(path, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cassette_persister, "write_atomic", disk_full)
    with pytest.raises(HarnessError, match=r"cassettes/first.yaml: the recording could not be written \(OSError: "
                                           r"\[Errno 28\] No space left on device\); the committed cassette and golden "
                                           "are unchanged"):
        run_case(first, _settings(tmp_path))
    assert not (tmp_path / "cassettes" / "first.yaml").exists() and not first.golden_path.exists()
    assert not list((tmp_path / "cassettes").glob(".*")), "no staging file is left behind"

    monkeypatch.setattr(cassette_persister, "write_atomic", real_write)
    assert not run_case(second, _settings(tmp_path)).failures
    replayed = run_case(second, Settings(cassettes_dir=tmp_path / "cassettes", fixtures_dir=tmp_path,
                                         strict_cassettes=True))
    assert not replayed.failures and not replayed.stale  # every interaction was committed, none lost


@pytest.mark.parametrize("damage", ["not utf-8", "a folder"])
def test_a_golden_that_cannot_be_read_leaves_the_cassette_as_it_was(tmp_path, damage):
    case = _case(tmp_path, "pantry")
    assert not run_case(case, _settings(tmp_path)).failures
    cassette = tmp_path / "cassettes" / "pantry.yaml"
    before = cassette.read_bytes()
    case = _case(tmp_path, "pantry", answer="Only fish sauce.")
    if damage == "a folder":
        case.golden_path.unlink()
        case.golden_path.mkdir()
        expected = "the golden cannot be read"
    else:
        case.golden_path.write_bytes(b"output: \xff\xfe\n")
        expected = "the golden is not UTF-8 text"
    with pytest.raises(HarnessError, match=expected):
        run_case(case, _settings(tmp_path))
    assert cassette.read_bytes() == before
    assert [p.name for p in cassette.parent.iterdir()] == ["pantry.yaml"]


def test_a_golden_that_cannot_be_written_leaves_the_cassette_as_it_was(tmp_path, monkeypatch):
    from rag_core.evals.golden import runner

    case = _case(tmp_path, "pantry")
    assert not run_case(case, _settings(tmp_path)).failures
    cassette, golden = tmp_path / "cassettes" / "pantry.yaml", case.golden_path
    before = (cassette.read_bytes(), golden.read_bytes())

    def read_only(path, data):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(runner, "write_atomic", read_only)
    with pytest.raises(HarnessError, match="goldens/pantry.golden.yaml: the golden cannot be written"):
        run_case(_case(tmp_path, "pantry", answer="Only fish sauce."), _settings(tmp_path))
    assert (cassette.read_bytes(), golden.read_bytes()) == before


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_written_files_take_the_users_umask(tmp_path, umask, mode):
    previous = os.umask(umask)
    try:
        case = _case(tmp_path, "pantry")
        assert not run_case(case, _settings(tmp_path)).failures
    finally:
        os.umask(previous)
    for path in (tmp_path / "cassettes" / "pantry.yaml", case.golden_path):
        assert path.stat().st_mode & 0o777 == mode, path


def test_a_rewritten_file_keeps_its_mode(tmp_path):
    from rag_core._files import write_atomic

    path = tmp_path / "golden.yaml"
    path.write_text("old\n")
    path.chmod(0o640)
    write_atomic(path, "new\n")
    assert path.read_text() == "new\n" and path.stat().st_mode & 0o777 == 0o640


def test_a_cassette_path_cannot_leave_the_cassettes_folder_through_a_symbolic_link(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (tmp_path / "cassettes").mkdir()
    (tmp_path / "cassettes" / "shared").symlink_to(outside, target_is_directory=True)
    path = tmp_path / "goldens" / "linked.yaml"
    path.parent.mkdir()
    path.write_text("id: linked\ninput: hi\ncassette: shared/linked.yaml\nemulate: [{text: hello}]\n")
    [case] = parse_case_file(path)
    with pytest.raises(HarnessError, match=r"cassette: shared/linked.yaml is .*elsewhere/linked.yaml, outside the "
                                           r"cassettes folder"):
        run_case(case, _settings(tmp_path))
    assert list(outside.iterdir()) == []


GET_AGENT = '''
import os

import httpx
from openai import OpenAI


def agent(question):
    httpx.get(os.environ["FEATURE_FLAGS_URL"])  # a GET to a local service: a request without a body
    return OpenAI(max_retries=0).responses.create(model="gpt-5.2", input=question).output_text
'''


def test_every_golden_the_harness_writes_its_loader_reads_back(tmp_path, monkeypatch):
    """A GET request was written as ``requests: [null]`` and a placeholder on a usage count as a
    string: goldens the loader then refused."""
    import http.server
    import threading

    class Flags(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Flags)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("FEATURE_FLAGS_URL", f"http://127.0.0.1:{server.server_address[1]}/flags")
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "get_agent.py").write_text(GET_AGENT)
    path = tmp_path / "goldens" / "get.yaml"
    path.parent.mkdir(parents=True)
    path.write_text("id: get\ntarget: get_agent:agent\ninput: hi\nemulate: [{text: hello}]\n"
                    "normalize: [{path: usage.input_tokens, placeholder: <tokens>}]\n")
    [case] = parse_case_file(path)
    assert not run_case(case, _settings(tmp_path)).failures
    golden = case.golden_path.read_text()
    assert "requests:\n- null\n" in golden and "input_tokens: <tokens>" in golden
    server.shutdown()
    replayed = run_case(case, Settings(cassettes_dir=tmp_path / "cassettes", fixtures_dir=tmp_path))
    assert not replayed.failures


def test_a_malformed_path_is_an_error_not_a_whole_field_replaced(tmp_path):
    path = tmp_path / "goldens" / "bad_path.yaml"
    path.parent.mkdir(parents=True)
    path.write_text("id: bad_path\ninput: hi\nnormalize: [{path: 'requests[', placeholder: x}]\n")
    with pytest.raises(HarnessError, match=r"normalize\[0\].path: 'requests\[' is not a path"):
        parse_case_file(path)
