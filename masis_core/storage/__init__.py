"""The relational store: the database (SQLite by default, PostgreSQL in server mode; schemas
and migrations), the registry of workspaces and documents, and who owns a piece of long work.
Imports only the foundation; the run store and the keyword rows build on ``db``.
"""
