"""The LangGraph research graph: how it is built (``build``), the run-time context its nodes
read, the human-review actions, and ``nodes/`` with one module per agent, each exporting
``node(state, config) -> dict``. May import everything below it; it knows nothing of runs,
jobs or exports.
"""
