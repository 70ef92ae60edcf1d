from rag_core.agent.agent import Agent
from rag_core.run_output import RunMetrics, RunOutput

__all__ = ["Agent", "RunMetrics", "RunOutput"]
