"""Measures over data sets and folders of PDFs: they ingest, then ask (above ingest)."""
