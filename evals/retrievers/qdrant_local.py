"""A Qdrant client in its embedded local mode (``QdrantClient(":memory:")``, qdrant-client 1.x), as
Qdrant's quickstart writes one, over the suite's own recorded MiniLM vectors (the factory's
context): a collection with cosine distance, points with the document id in their payload,
``query_points`` answering scored points (the suite reads ``payload.doc_id``).

Exact search over the same vectors as the suite's built-in ``dense`` retriever: the suite's
``identical:`` group shows the two rank every query alike.
"""

from qdrant_client import QdrantClient, models

COLLECTION = "kitchen"


def retriever(context):
    client = QdrantClient(":memory:")

    def index(documents):
        # the texts the suite's embedding cache holds vectors for: title and text, as the built-in stores index them
        vectors = context.embed([d.title_and_text for d in documents], "document")
        client.create_collection(COLLECTION, vectors_config=models.VectorParams(
            size=len(vectors[0]), distance=models.Distance.COSINE))
        client.upsert(COLLECTION, points=[
            models.PointStruct(id=number, vector=vector, payload={"doc_id": document.id})
            for number, (document, vector) in enumerate(zip(documents, vectors))])

    def search(query, k):
        [vector] = context.embed([query], "query")
        return client.query_points(COLLECTION, query=vector, limit=k, with_payload=True).points

    return index, search
