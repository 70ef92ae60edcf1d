"""A LlamaIndex retriever: a ``VectorStoreIndex`` over ``OpenAIEmbedding`` (llama-index-core 0.14,
llama-index-embeddings-openai 0.7, openai 1.x), as LlamaIndex's docs build one: ``Document``s with
their ids, ``VectorStoreIndex.from_documents(documents, embed_model=...)``, then
``index.as_retriever(similarity_top_k=k).retrieve(query)`` answering ``NodeWithScore``s (the suite
reads ``node.ref_doc_id``: the id of the document a node was parsed from).

It runs where this project runs LlamaIndex, the ``frameworks-legacy`` environment (openai 1.x:
llama-index-llms-openai caps openai below 3), and the suite tags it ``legacy_sdk``. Its embedding
calls (the corpus in batches of 100, one per query) are the provider traffic its cassette holds;
it is recorded against the emulator, and replays with no key and no network. With the LangChain
retriever's model and dimensions it gets the same emulated vectors, and its cosine ranking is
LangChain's (evals/test_retriever_targets.py compares the two recordings).
"""

from llama_index.core import Document, VectorStoreIndex
from llama_index.embeddings.openai import OpenAIEmbedding


def retriever():
    # the LangChain example's model and dimensions: 128 dimensions keep the cassette small
    embed_model = OpenAIEmbedding(model="text-embedding-3-small", dimensions=128)
    index = None

    def build(documents):
        nonlocal index
        index = VectorStoreIndex.from_documents(
            [Document(text=d.title_and_text, id_=d.id) for d in documents], embed_model=embed_model)

    def search(query, k):
        return index.as_retriever(similarity_top_k=k).retrieve(query)

    return build, search
