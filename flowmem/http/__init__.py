"""The HTTP service: the challenge's endpoints over Memory.

Connections and the worker pool (server.py, one connection's state in connection.py),
one request's bytes to a response (handler.py), request framing (framing.py), what a
web page may not do (guard.py), the HTTP policy (api.py), and the routes: one record
each in table.py, naming its endpoint (endpoints.py) and its documentation words
(openapi.py makes the document of them). Part of the service layer: it may import
every layer below (retrieval, storage, text, errors) and the service's memory and config.
"""
