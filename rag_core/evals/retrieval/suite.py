"""Retrieval suite files (``fixtures/retrieval/*.yaml``): a dataset, retrievers, metrics, gates.

    name: scifact
    dataset: {beir: ../shared/datasets/scifact, split: test}     # or {judged: path/to/queries.yaml}
    embedder: {kind: local, cache: cassettes/embeddings/scifact-minilm}
    depth: 100                                                  # documents retrieved per query
    metrics: [ndcg@10, recall@100]                              # the first is the primary one
    retrievers:
      - {name: dense, store: memory, search_type: vector}
      - {name: hybrid, store: memory, search_type: hybrid, hybrid_rrf_k: 60, candidate_depth: 300}
    thresholds: {dense: {ndcg@10: 0.643}}                       # retriever -> metric -> minimum
    identical: [[dense, dense_pgvector]]                        # exact search: same numbers on every store
    baseline: fixtures/retrieval/baselines/scifact              # one JSON per retriever
    tolerance: 0.002                                            # allowed drop below the baseline
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from rag_core.evals.retrieval.metrics import parse_metric


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DatasetSpec(_Strict):
    beir: str | None = None
    split: str = "test"
    judged: str | None = None

    @model_validator(mode="after")
    def _one(self) -> DatasetSpec:
        if (self.beir is None) == (self.judged is None):
            raise ValueError("give exactly one of beir (a BEIR folder) or judged (a YAML file of judged queries)")
        return self


class EmbedderSpec(_Strict):
    kind: Literal["local", "openai", "cohere"] = "local"
    id: str | None = None
    dimensions: int | None = None
    cache: str  # folder of the EmbeddingCache, relative to the project root


class RetrieverSpec(_Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    store: Literal["memory", "chroma", "lancedb", "pgvector"] = "memory"
    search_type: Literal["vector", "keyword", "hybrid"]
    hybrid_rrf_k: int = Field(60, ge=1)
    exact: bool = True  # pgvector: no HNSW index; chroma: HNSW searched exhaustively
    reranker: str | None = None  # "package.module:factory" returning a Reranker
    # candidates each ranking hands to fusion (hybrid) or to the reranker, independent of the
    # suite's evaluation depth; default: the store's own, 3 × depth and at least 30
    candidate_depth: int | None = Field(None, ge=1)


class SuiteSpec(_Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    description: str = ""
    dataset: DatasetSpec
    embedder: EmbedderSpec | None = None
    depth: int = Field(100, ge=1)
    metrics: list[str] = Field(min_length=1)
    retrievers: list[RetrieverSpec] = Field(min_length=1)
    thresholds: dict[str, dict[str, float]] = Field(default_factory=dict)
    identical: list[list[str]] = Field(default_factory=list)
    baseline: str | None = None
    tolerance: float = Field(0.002, ge=0)

    source: Path | None = Field(default=None, exclude=True)

    @model_validator(mode="after")
    def _candidates_cover_the_depth(self) -> SuiteSpec:
        for retriever in self.retrievers:
            if retriever.candidate_depth is not None and retriever.candidate_depth < self.depth:
                raise ValueError(f"retriever {retriever.name}: candidate_depth {retriever.candidate_depth} is below the "
                                 f"suite's depth {self.depth}; it would return fewer documents than are evaluated")
        return self

    @field_validator("metrics")
    @classmethod
    def _metrics(cls, value: list[str]) -> list[str]:
        for metric in value:
            parse_metric(metric)
        return value

    @model_validator(mode="after")
    def _references(self) -> SuiteSpec:
        names = [r.name for r in self.retrievers]
        if len(set(names)) != len(names):
            raise ValueError(f"retriever names must be unique: {names}")
        for retriever, gates in self.thresholds.items():
            if retriever not in names:
                raise ValueError(f"thresholds: no retriever named {retriever!r}")
            for metric in gates:
                if metric not in self.metrics:
                    raise ValueError(f"thresholds.{retriever}: {metric!r} is not in metrics")
        for group in self.identical:
            for retriever in group:
                if retriever not in names:
                    raise ValueError(f"identical: no retriever named {retriever!r}")
        needs_vectors = any(r.search_type != "keyword" for r in self.retrievers)
        if needs_vectors and self.embedder is None:
            raise ValueError("vector and hybrid retrievers need an embedder")
        return self

    def retriever(self, name: str) -> RetrieverSpec:
        return next(r for r in self.retrievers if r.name == name)


class SuiteFileError(ValueError):
    pass


def load_suite(path: Path) -> SuiteSpec:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise SuiteFileError(f"{path}: cannot be read as YAML ({exc})") from exc
    try:
        suite = SuiteSpec.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or '(suite)'}: {e['msg']}" for e in exc.errors())
        raise SuiteFileError(f"{path}: {problems}") from None
    suite.source = path
    return suite


def suite_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.yaml")) if folder.is_dir() else []


def schema() -> dict[str, Any]:
    return SuiteSpec.model_json_schema()
