"""Every retrieval suite under fixtures/retrieval/: one test per retriever, one per `identical` group."""


def test_retrieval(retrieval_target, retrieval_check):
    retrieval_check(retrieval_target)
