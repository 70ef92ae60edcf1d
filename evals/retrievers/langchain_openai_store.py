"""A LangChain retriever: ``InMemoryVectorStore`` over ``OpenAIEmbeddings`` (langchain-core 1.x,
langchain-openai 1.7), as LangChain's vector store docs build one: documents added with their ids,
``similarity_search(query, k=k)`` answering LangChain ``Document``s (the suite reads ``id``).

Its embedding calls (one for the corpus, one per query) are the provider traffic its cassette
holds; it is recorded against the emulator, and replays with no key and no network.
"""

from langchain_core.documents import Document
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_openai import OpenAIEmbeddings


def retriever():
    # check_embedding_ctx_length=False sends the texts as they are, as LangChain's docs set it for
    # OpenAI-compatible endpoints; the default would first tokenize them with tiktoken, which
    # downloads its tables from the network at first use. 128 dimensions keep the cassette small.
    embeddings = OpenAIEmbeddings(model="text-embedding-3-small", dimensions=128, check_embedding_ctx_length=False)
    store = InMemoryVectorStore(embeddings)

    def index(documents):
        # title and text, as the built-in stores index them
        store.add_documents([Document(page_content=d.title_and_text, id=d.id) for d in documents])

    def search(query, k):
        return store.similarity_search(query, k=k)

    return index, search
