"""What the pages and the command line call: ``RunService`` (start, drive, resume and store
runs), background jobs, reports and the PDF export, the Inspector's tables, and the web
search (Tavily) that runs hand to the graph. The top of the core: may import every package
of ``masis_core``; only ``ingest``, ``evaluation``, ``ui`` and the pages sit above it.
"""
