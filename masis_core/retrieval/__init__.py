"""Finding passages: the Chroma vector store (a collection per workspace), the BM25 keyword
index, the soft keyword match, the hybrid fusion and its thresholds, and retrieval metrics.
May import the foundation, ``text``, ``storage`` and ``llm`` (for the embedders).
"""
