"""The ``Workbench``: the long-lived stores and clients of one data dir (database, registry,
vector store, keyword index, embedders) and the workspace operations (create, open, delete,
documents, kept originals). May import every package below the graph; the graph's context
and the services hold one.
"""
