"""Retrieval suite files (``fixtures/retrieval/*.yaml``): a dataset, retrievers, metrics, gates.

    name: scifact
    dataset: {beir: ../shared/datasets/scifact, split: test}     # or {judged: path/to/queries.yaml}
    embedder: {kind: local, cache: cassettes/embeddings/scifact-minilm}
    depth: 100                                                  # documents retrieved per query
    metrics: [ndcg@10, recall@100]                              # the first is the primary one
    retrievers:
      - {name: dense, store: memory, search_type: vector}
      - {name: hybrid, store: memory, search_type: hybrid, hybrid_rrf_k: 60, candidate_depth: 300}
      - {name: mine, target: "my_project.search:retriever", settings: {k1: 1.2}}   # any retriever (target.py)
      - {name: theirs, run: fixtures/retrieval/runs/theirs.trec}                  # an external run (run_files.py)
    thresholds: {dense: {ndcg@10: 0.643}}                       # retriever -> metric -> minimum
    identical: [[dense, dense_pgvector]]                        # exact search: same numbers on every store
    baseline: fixtures/retrieval/baselines/scifact              # one JSON per retriever
    tolerance: 0.002                                            # allowed drop below the baseline
    significance: 0.05                                          # optional: a drop must also be significant
    allow_unmatched: {documents: 0.01, queries: 0.75}           # optional: shares of ids that match nothing
    sweep:                                                      # optional: grids of a retriever's settings
      - {retriever: hybrid, grid: {hybrid_rrf_k: [10, 30, 60], candidate_depth: [100, 300]}, keep_best: ndcg@10}
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from rag_core.evals.common.paths import shown
from rag_core.evals.common.strict_model import StrictModel
from rag_core.evals.retrieval.metrics import parse_metric
from rag_core.evals.retrieval.reading import brief, read_yaml, validation_problems


class DatasetSpec(StrictModel):
    beir: str | None = None
    split: str = "test"
    judged: str | None = None

    @model_validator(mode="after")
    def _one(self) -> DatasetSpec:
        if (self.beir is None) == (self.judged is None):
            raise ValueError("give exactly one of beir (a BEIR folder) or judged (a YAML file of judged queries)")
        return self


class EmbedderSpec(StrictModel):
    kind: Literal["local", "openai", "cohere"] = "local"
    id: str | None = None
    dimensions: int | None = None
    cache: str  # folder of the EmbeddingCache, relative to the project root


# the fields that mean something for one kind of retriever only
BUILT_IN_ONLY = ("store", "hybrid_rrf_k", "exact", "reranker", "candidate_depth", "bm25_k1", "bm25_b")
TARGET_ONLY = ("settings", "id_field", "live")
KIND_NAMES = {"builtin": "built-in store (search_type:)", "target": "retriever target (target:)",
              "run": "run file (run:)"}


class RetrieverSpec(StrictModel):
    """One retriever of a suite: a built-in store (``search_type:``), a retriever target
    (``target:``, any program's retriever), or the rankings of a run file (``run:``)."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    store: Literal["memory", "chroma", "lancedb", "pgvector"] = "memory"
    search_type: Literal["vector", "keyword", "hybrid"] | None = None
    hybrid_rrf_k: int = Field(60, ge=1)
    exact: bool = True  # pgvector: no HNSW index; chroma: HNSW searched exhaustively
    reranker: str | None = None  # "package.module:factory" returning a Reranker
    # candidates each ranking hands to fusion (hybrid) or to the reranker, independent of the
    # suite's evaluation depth; default: the store's own, 3 × depth and at least 30
    candidate_depth: int | None = Field(None, ge=1)
    # BM25's parameters (memory and pgvector stores; default k1=1.5, b=0.75)
    bm25_k1: float | None = Field(None, gt=0)
    bm25_b: float | None = Field(None, ge=0, le=1)
    # "package.module:factory" returning the retriever (see target.py)
    target: str | None = Field(None, pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
    # keyword arguments of every search() call of a target: what a sweep varies
    settings: dict[str, Any] = Field(default_factory=dict)
    # where the id is in each document a target's search returns ("id", "metadata.doc_id");
    # without it, search returns the ids themselves
    id_field: str | None = Field(None, pattern=r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
    # the target queries a service on this machine (a database) that CI cannot replay: it runs
    # only under --live and is skipped (naming why) otherwise
    live: bool = False
    # modules or requirements the retriever needs (as a golden case's requires:): skipped without
    requires: list[str] = Field(default_factory=list)
    # pytest markers of the tests that run it (its own, its identical groups', its sweeps'), as a
    # golden case's tags: ``legacy_sdk`` keeps one that needs older SDKs to its own environment
    tags: list[Annotated[str, Field(pattern=r"^[A-Za-z]\w*$")]] = Field(default_factory=list)
    # a TREC run file (qid Q0 docid rank score tag) or BEIR/ir_datasets result JSON ({qid: {docid: score}}),
    # relative to the project root
    run: str | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> RetrieverSpec:
        given = [key for key in ("search_type", "target", "run") if getattr(self, key) is not None]
        if len(given) != 1:
            raise ValueError(f"retriever {self.name}: give exactly one of search_type (a built-in store), target "
                             f"(\"package.module:factory\") or run (a run file)"
                             + (f"; it gives {' and '.join(given)}" if given else ""))
        misplaced = sorted(self.model_fields_set & set(BUILT_IN_ONLY)) if self.kind != "builtin" else []
        misplaced += sorted(self.model_fields_set & set(TARGET_ONLY)) if self.kind != "target" else []
        if misplaced:
            raise ValueError(f"retriever {self.name}: {', '.join(misplaced)} do(es) not apply to a "
                             f"{KIND_NAMES[self.kind]}")
        return self

    @property
    def kind(self) -> Literal["builtin", "target", "run"]:
        return "target" if self.target is not None else "run" if self.run is not None else "builtin"

    @property
    def records_traffic(self) -> bool:
        """Whether its provider traffic goes through a cassette: a target's (embeddings, a hosted
        reranker, any HTTP), and a built-in store's reranker's. A built-in store's embeddings
        come from the suite's embedding cache instead."""
        return self.kind == "target" or (self.kind == "builtin" and self.reranker is not None)

    @property
    def runs_in_background(self) -> bool:
        """Whether it may run in a background thread (plugin.py): a built-in store outside this
        process's memory that calls no provider. What records or replays traffic runs in its
        test's thread: vcrpy's patches and the network guard's scopes are the process's."""
        return self.kind == "builtin" and self.store != "memory" and not self.records_traffic

    def setting(self, name: str) -> Any:
        """A setting's value as a sweep reads it: a target's query-time setting, else the field."""
        return self.settings.get(name) if self.kind == "target" else getattr(self, name)

    @model_validator(mode="after")
    def _bm25_settings_where_bm25_runs(self) -> RetrieverSpec:
        if (self.bm25_k1 is not None or self.bm25_b is not None) and (
                self.store not in ("memory", "pgvector") or self.search_type == "vector"):
            raise ValueError(f"retriever {self.name}: bm25_k1 and bm25_b apply to keyword or hybrid search on the "
                             f"memory and pgvector stores (this is {self.search_type} search on {self.store})")
        return self


# the settings a sweep may vary on a built-in store: everything about it except what it is (a
# target's sweep varies its query-time settings, whatever their names)
SWEEPABLE = ("hybrid_rrf_k", "candidate_depth", "bm25_k1", "bm25_b", "exact", "reranker")


class SweepSpec(StrictModel):
    retriever: str
    grid: dict[str, list[Any]] = Field(min_length=1)
    # fail when the retriever's own setting scores below the best of the grid on this metric
    # (by more than the suite's tolerance, and significantly if the suite sets a level)
    keep_best: str | None = None

    @field_validator("grid")
    @classmethod
    def _grid(cls, value: dict[str, list[Any]]) -> dict[str, list[Any]]:
        for setting, values in value.items():
            if not values or len(set(map(repr, values))) != len(values):
                raise ValueError(f"{setting}: give a list of distinct values")
        return value


class UnmatchedShares(StrictModel):
    """How much of what a retriever answers may match nothing in the dataset (0: none). Ids that
    match nothing score 0 as if the retriever had ranked badly: mostly they are a mistake (the
    wrong ``id_field:``, a run file of other ids), which must fail rather than pass or become a
    baseline; a suite that knows of a share (an index holding more than the corpus, a run over
    every query where one split is judged) allows it."""

    documents: float = Field(0.0, ge=0, le=1)  # of the ids a retriever ranks, those of no corpus document
    queries: float = Field(0.0, ge=0, le=1)  # of a run file's queries, those that match no judged query


class SuiteSpec(StrictModel):
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
    # a drop beyond the tolerance fails only if a paired randomization test over the per-query
    # scores gives p below this (None: every such drop fails); see significance.py
    significance: float | None = Field(None, gt=0, lt=1)
    allow_unmatched: UnmatchedShares = Field(default_factory=UnmatchedShares)
    sweep: list[SweepSpec] = Field(default_factory=list)

    @field_validator("sweep", mode="before")
    @classmethod
    def _one_sweep_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, dict) else value

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
        for number, sweep in enumerate(self.sweep):
            if sweep.retriever not in names:
                raise ValueError(f"sweep {number}: no retriever named {sweep.retriever!r}")
            swept = self.retriever(sweep.retriever)
            if swept.kind == "run":
                raise ValueError(f"sweep {number}: {swept.name} is a run file: its rankings have no settings to vary")
            for setting in sweep.grid:
                if swept.kind == "builtin" and setting not in SWEEPABLE:
                    raise ValueError(f"sweep {number}: {setting!r} cannot be swept; sweepable settings: "
                                     f"{', '.join(SWEEPABLE)}")
                if swept.kind == "target" and not setting.isidentifier():
                    raise ValueError(f"sweep {number}: {setting!r} is not a keyword argument name")
            if sweep.keep_best is not None and sweep.keep_best not in self.metrics:
                raise ValueError(f"sweep {number}: keep_best {sweep.keep_best!r} is not in metrics")
            for variant in self.variants(sweep):  # every grid point must be a valid retriever
                if variant.candidate_depth is not None and variant.candidate_depth < self.depth:
                    raise ValueError(f"sweep {number}: candidate_depth {variant.candidate_depth} is below the "
                                     f"suite's depth {self.depth}")
        needs_vectors = any(r.search_type in ("vector", "hybrid") for r in self.retrievers)
        if needs_vectors and self.embedder is None:
            raise ValueError("vector and hybrid retrievers need an embedder")
        return self

    def retriever(self, name: str) -> RetrieverSpec:
        return next(r for r in self.retrievers if r.name == name)

    def variants(self, sweep: SweepSpec) -> list[RetrieverSpec]:
        """The swept retriever at every point of the grid, named ``retriever[setting=value,...]``."""
        import itertools

        base = self.retriever(sweep.retriever)
        settings = list(sweep.grid)
        variants = []
        for values in itertools.product(*(sweep.grid[s] for s in settings)):
            label = ",".join(f"{s}={v}" for s, v in zip(settings, values))
            point = dict(zip(settings, values))
            data = base.model_dump(exclude_unset=True)
            if base.kind == "target":  # a target's settings are keyword arguments of its search()
                data["settings"] = base.settings | point
            else:
                data |= point
            try:
                variant = RetrieverSpec.model_validate(data)
            except ValidationError as exc:
                problem = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
                raise ValueError(f"sweep of {base.name}: {label}: {problem}") from None
            variants.append(variant.model_copy(update={"name": f"{base.name}[{label}]"}))  # a label, not a file name
        return variants


class SuiteFileError(ValueError):
    pass


def load_suite(path: Path) -> SuiteSpec:
    """The suite in ``path``; a SuiteFileError naming the file, the field and the cause when the
    file cannot be read, is not UTF-8 or YAML, or is not a suite."""
    data = read_yaml(path, SuiteFileError)
    if not isinstance(data, dict):
        raise SuiteFileError(f"{shown(path)}: a suite file is a mapping of name, dataset, metrics, retrievers and the "
                             f"other suite fields, got {brief(data)}")
    try:
        suite = SuiteSpec.model_validate(data)
    except ValidationError as exc:
        # no line numbers here: a suite is a few lines, and its messages read "<file>: <field>: <cause>"
        raise SuiteFileError(validation_problems(exc, data, lambda loc: shown(path), whole="(suite)")) from None
    suite.source = path
    return suite


def suite_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.yaml")) if folder.is_dir() else []


def schema() -> dict[str, Any]:
    return SuiteSpec.model_json_schema()
