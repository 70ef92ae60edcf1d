"""RunOutput and RunMetrics under the path they have always had; they live in ``rag_core.run_output``."""

from rag_core.run_output import RunMetrics, RunOutput

__all__ = ["RunMetrics", "RunOutput"]
