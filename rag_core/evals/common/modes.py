"""Names the pytest plugins need before any case is read, kept apart so that they can use them
without importing vcrpy, pydantic or YAML: the cassette record modes (vcrpy's names) and the
suffix of golden files."""

RECORD_MODES = ("none", "once", "new_episodes", "all", "rewrite")


def records(mode: str, recorded: bool) -> bool:
    """Whether a run under record mode ``mode`` records, given whether its recording exists: the
    modes that record whatever is there do; ``once`` only what is not recorded yet."""
    return mode in ("new_episodes", "all", "rewrite") or (mode == "once" and not recorded)

GOLDEN_SUFFIX = ".golden.yaml"
