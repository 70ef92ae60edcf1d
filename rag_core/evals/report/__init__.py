"""``rag-core report`` and ``rag-core view``: a run record (``rag_core.evals.runs``) as one
self-contained HTML page. ``view`` builds what the page shows, ``html`` puts it into the page,
``serve`` hands the page to a browser from 127.0.0.1. ``markdown`` is the run's summary for a CI
job summary (``--golden-report``, ``rag-core merge --summary``)."""
