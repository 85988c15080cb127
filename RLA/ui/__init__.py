"""``rla ui``: a local web dashboard over the database (runs, run pages, charts, compare, actions).

Needs the ``ui`` extra (starlette, uvicorn); importing this package does not import them.
Every JavaScript and CSS file ships in ``RLA/ui/static/`` (uPlot vendored with its license):
the page works without internet. Build the app with :func:`RLA.ui.app.create_app` (for
tests and embedding) or run it with :func:`RLA.ui.server.serve`.
"""
