"""The HTTP service: the challenge's endpoints over Memory.

Connections and the worker pool (server.py), one request's bytes to a response
(handler.py), request framing (framing.py), what a web page may not do (guard.py),
and the HTTP policy (api.py). Part of the service layer: it may import every layer
below (retrieval, storage, text, errors) and the service's memory and config.
"""
