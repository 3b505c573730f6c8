"""flowmem's development tools: measurement, evaluation and data builders, run from a clone.

Every tool is a module run from the clone's root (`python3 -m tools.eval synthetic`), or from
anywhere with the clone on PYTHONPATH; none changes sys.path. The layout:

- commands, one module each (or a package with __main__.py): the benches (bench*.py, soak/,
  measure_rpo.py), the evaluation and tuning commands (eval.py, tune.py, crossval.py,
  ablation.py, synthetic.py, probe_meaning.py, result_hash.py, locomo_dev.py), the data
  builders (build_*.py); the operator's actions are not here but in the package
  (flowmem/cluster/, `flowmem cluster ...`), so that `pip install .` ships them;
- kits, libraries that import no command: benchkit/ (what the benches share: the server as a
  child process, percentiles, report cells, the synthetic corpus and its cached databases, the
  soak's workload and HTTP client), evalkit/ (datasets, replay, metrics, comparison, tuning),
  buildkit/ (the WordNet reader and the data-file writer), and data_paths.py (where LoCoMo is);
- contract_check.py, on its own on purpose: it checks any server against the contract and
  imports nothing of the clone.

A command imports flowmem and the kits, never another command (tests/test_tools_layout.py);
what two commands share moves into a kit. The package's size and lint rules apply here too.
"""
