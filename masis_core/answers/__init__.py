"""Writing and judging an answer from passages: the question limits, follow-up rewriting, the
offline extractive engine (compose, offline), the Ollama engine, the engine protocol and which
provider is active, the judge with its fitted confidence (``confidence.json``), and
per-sentence support. May import the foundation, ``text``, ``llm`` and ``retrieval``; it holds
no store of its own.
"""
