from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rag_core import Document
from rag_core.agent.references import format_documents, search_result_text, user_message_with_references
from rag_core.errors import MissingExtraError
from rag_core._optional import require

ROOT = Path(__file__).resolve().parents[1]
DOCS = [
    Document(content="Pad thai: noodles.", meta_data={"source": "ThaiRecipes.pdf", "page": 3, "chunk": 1}, name="thai").to_dict(),
    Document(content="Ünïcode stays — as is.", meta_data={}).to_dict(),
]


def test_document_shape_leaves_out_a_missing_name():
    assert list(DOCS[0]) == ["content", "meta_data", "name"]
    assert list(DOCS[1]) == ["content", "meta_data"]


def test_json_and_yaml_formats():
    assert format_documents(DOCS, "json") == json.dumps(DOCS, indent=2, ensure_ascii=False)
    assert "Ünïcode stays — as is." in format_documents(DOCS, "json")
    assert format_documents(DOCS, "yaml") == (
        "- content: 'Pad thai: noodles.'\n  meta_data:\n    chunk: 1\n    page: 3\n    source: ThaiRecipes.pdf\n  name: thai\n"
        "- content: Ünïcode stays — as is.\n  meta_data: {}\n"
    )
    assert search_result_text([], "yaml") == "No documents found"


def test_traditional_rag_user_message():
    assert user_message_with_references("q", DOCS[:1], "json") == (
        "q\n\nUse the following references from the knowledge base if it helps:\n<references>\n"
        + json.dumps(DOCS[:1], indent=2, ensure_ascii=False)
        + "\n</references>"
    )
    assert user_message_with_references("q", [], "json") == "q"


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_formatting_does_not_depend_on_the_hash_seed(fmt):
    script = (
        "from rag_core.agent.references import format_documents;"
        "docs=[{'content':'c','meta_data':{'b':1,'a':{'y','x'} and sorted({'y','x'}),'z':[1,2]},'name':'n'}];"
        f"print(format_documents(docs, {fmt!r}))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("0", "1", "12345")
    }
    assert len(outputs) == 1


def test_import_rag_core_stays_light():
    heavy = ["openai", "numpy", "chromadb", "cohere", "torch", "psycopg", "bm25s", "google.genai"]
    code = f"import sys, rag_core, rag_core.models, rag_core.tools, rag_core.vectordb; print([m for m in {heavy!r} if m in sys.modules])"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert result.stdout.strip() == "[]"


def test_a_missing_extra_names_the_extra_to_install():
    with pytest.raises(MissingExtraError, match=r"pip install 'rag-core\[chroma\]'"):
        require("definitely_not_installed_pkg", extra="chroma", feature="ChromaDb")
