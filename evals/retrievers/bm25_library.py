"""BM25 from another library (rank_bm25's ``BM25Okapi``): the minimal retriever target, shown
in docs/retrievers.md. It reads the corpus by key, as code written over BEIR's records does, and
makes no provider call, so its recording is its rankings alone."""

from rank_bm25 import BM25Okapi


class BM25:
    def index(self, documents):
        self.ids = [doc["id"] for doc in documents]
        self.bm25 = BM25Okapi([f'{doc["title"]} {doc["text"]}'.lower().split() for doc in documents])

    def search(self, query, k):
        scores = self.bm25.get_scores(query.lower().split())
        best = sorted(range(len(self.ids)), key=lambda i: -scores[i])[:k]
        return [self.ids[i] for i in best]


def retriever():
    return BM25()
