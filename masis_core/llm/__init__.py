"""The model servers' clients: Ollama's status probe, errors translated into remedies, the chat
model factory, and the embedders (Ollama's ``nomic-embed-text`` or the bundled WordLlama).
Imports only the foundation; what is asked of a chat model lives in ``answers``.
"""
