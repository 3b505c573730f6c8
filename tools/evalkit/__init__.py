"""flowmem's evaluation kit: datasets, replay through Add/Search, metrics, comparison, tuning.

Standard library only; imported by the evaluation commands (tools/eval.py, tune.py,
crossval.py, ablation.py, synthetic.py, probe_meaning.py, result_hash.py) and the tests,
which are its callers; nothing here imports a command.

- dataset.py: the one in-memory form of a LoCoMo-format or synthetic dataset;
- synthetic/, synthetic_hard.py, synthetic_chat/: the seeded synthetic suites;
- chatstyle.py: a dataset's turns recast as people type them;
- replay.py: conversations replayed through Add, questions asked through Search, in process or over HTTP;
- bare.py: the bare FTS5 baseline, replayed and asked the same way;
- metrics.py, runner.py, report.py, compare.py: scores, a whole run, its tables, two runs paired;
- tuning.py: questions prepared once and ranked by each trial's settings, as serving ranks;
- settings.py: `--set NAME=VALUE`;
- probes.py, probe_data.py: the meaning probes, their runner and their data.
"""
