"""The text layer: what words, speakers and dates a piece of text holds, and what of a message is indexed.

Pure functions of text (tokens for every script, the Porter stemmer, dates and relative
times, a message's index features). It imports only flowmem.errors: storage,
retrieval and the service build on it, never the other way round.
"""
