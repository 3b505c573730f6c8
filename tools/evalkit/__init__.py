"""flowmem's evaluation kit: datasets, replay through Add/Search, metrics, comparison.

Standard library only. Used by tools/eval.py, tools/synthetic.py and the tests.
"""
