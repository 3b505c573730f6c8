import copy
import dataclasses
import os
import pickle
import tempfile
import unittest
from unittest import mock

from flowmem import config as config_module
from flowmem.config import GROUPS, Config, load
from flowmem.errors import ConfigError
from flowmem.retrieval import bm25, pipeline
from flowmem.retrieval.candidates import Limits
from flowmem.retrieval.ranking import Ranking
from flowmem.storage.settings import ViewSettings


class ConfigTest(unittest.TestCase):
    def test_defaults(self):
        config = load({}, environ={})
        self.assertEqual((config.db, config.host, config.port), ("flowmem.db", "127.0.0.1", 8000))
        self.assertEqual(config.max_body_bytes, 8 * 1024 * 1024)
        self.assertEqual(config.top_k_cap, 100)
        self.assertIsNone(config.key())

    def test_environment_overrides_defaults_and_flags_override_environment(self):
        env = {"FLOWMEM_PORT": "9001", "FLOWMEM_HOST": "0.0.0.0", "FLOWMEM_DB": "/tmp/x.db", "FLOWMEM_BM25_K1": "0.9"}
        config = load({"port": None}, environ=env)
        self.assertEqual((config.port, config.host, config.db, config.bm25_k1), (9001, "0.0.0.0", "/tmp/x.db", 0.9))
        self.assertEqual(load({"port": 7000}, environ=env).port, 7000)

    def test_api_key_from_environment_or_file(self):
        self.assertEqual(load({}, environ={"FLOWMEM_API_KEY": "k1"}).key(), "k1")
        with tempfile.NamedTemporaryFile("w", suffix=".key", delete=False) as f:
            f.write("from-file\nignored second line\n")
        self.addCleanup(os.unlink, f.name)
        self.assertEqual(load({"api_key_file": f.name}, environ={}).key(), "from-file")
        with self.assertRaises(ConfigError):
            load({"api_key_file": "/no/such/key"}, environ={}).key()

    def test_bad_values_are_refused_with_the_variable_named(self):
        for env, word in (({"FLOWMEM_PORT": "http"}, "FLOWMEM_PORT"), ({"FLOWMEM_PORT": "70000"}, "port"),
                          ({"FLOWMEM_TOP_K_CAP": "0"}, "top_k_cap"), ({"FLOWMEM_SYNCHRONOUS": "maybe"}, "synchronous"),
                          ({"FLOWMEM_WEIGHT_PHRASE": "-1"}, "weight_"),
                          ({"FLOWMEM_TAIL_WEIGHT_SPEAKER": "-0.5"}, "tail_weight_")):
            with self.subTest(env=env):
                with self.assertRaises(ConfigError) as cm:
                    load({}, environ=env)
                self.assertIn(word, cm.exception.reason)

    def test_config_is_immutable(self):
        with self.assertRaises(dataclasses.FrozenInstanceError):
            Config().port = 1  # type: ignore[misc]


    def test_a_bad_value_names_its_cause(self):
        with self.assertRaises(ConfigError) as cm:
            load({}, environ={"FLOWMEM_PORT": "http"})
        self.assertIsInstance(cm.exception.__cause__, ValueError)
        with self.assertRaises(ConfigError) as cm:
            load({"api_key_file": "/no/such/key"}, environ={}).key()
        self.assertIsInstance(cm.exception.__cause__, OSError)


class SettingDeclarationTest(unittest.TestCase):
    """Each setting is declared once, beside its field: default, group and help."""

    def test_every_setting_has_a_group_and_one_line_of_help(self):
        for field in dataclasses.fields(Config):
            with self.subTest(setting=field.name):
                self.assertIn(field.metadata.get("group"), GROUPS)
                help_text = field.metadata.get("help", "")
                self.assertTrue(help_text.strip())
                self.assertNotIn("\n", help_text)
                self.assertLessEqual(len(help_text), 200)

    def test_settings_lists_every_field_with_its_default_and_variable(self):
        listed = config_module.settings()
        self.assertEqual([s.name for s in listed], config_module.field_names())
        port = next(s for s in listed if s.name == "port")
        self.assertEqual((port.default, port.variable, port.group), (8000, "FLOWMEM_PORT", "server"))

    def test_the_index_group_is_storages_index_settings_left_to_the_database(self):
        index = [s for s in config_module.settings() if s.group == "index"]
        self.assertEqual([s.name for s in index], list(ViewSettings._fields))
        self.assertTrue(all(s.default is None for s in index))

    def test_a_field_in_an_unknown_group_is_refused_where_it_is_declared(self):
        with self.assertRaises(ValueError):
            config_module.setting(1, "no-such-group", "help")


class SettingsPathTest(unittest.TestCase):
    """Config builds each layer's settings by keyword; the layers below repeat no default."""

    def test_index_settings_are_only_those_given(self):
        self.assertEqual(Config().index_settings(), {})
        config = load({"stem": "0", "window_size": "5"}, environ={})
        self.assertEqual(config.index_settings(), {"window_size": 5, "stem": False})

    def test_the_ranking_takes_each_value_from_its_own_setting(self):
        # Distinct values everywhere, so that any two swapped would show.
        names = [f.name for f in dataclasses.fields(Config) if f.metadata["group"] == "ranking"]
        numbers = {name: float(i + 2) if isinstance(getattr(Config(), name), float) else i + 2
                   for i, name in enumerate(names)}
        numbers["meaning_places"] = "3,7"
        config = Config(**numbers, view_kind="segment", message_share=0.25, date_prefix=False,
                        time_annotations=True)
        ranking = config.ranking(ViewSettings(stem=False, resolve_times=True))
        self.assertEqual((ranking.k1, ranking.b, ranking.rrf_k), (config.bm25_k1, config.bm25_b, config.rrf_k))
        self.assertEqual((ranking.pool_size, ranking.context_size), (config.candidate_pool, config.context_pool))
        for name in ("adjacency_top", "head_size", "feedback_docs", "feedback_terms", "postings_budget",
                     "state_update_window", "view_kind", "message_share", "date_prefix", "time_annotations"):
            self.assertEqual(getattr(ranking, name), getattr(config, name), name)
        for name in ("meaning_pool", "meaning_scan", "meaning_closed_at", "meaning_unseen", "meaning_rrf_k"):
            self.assertEqual(getattr(ranking, name), getattr(config, name), name)
        self.assertEqual(ranking.meaning_places, (3, 7))
        self.assertEqual(ranking.weights, config.weights())
        self.assertEqual(ranking.tail_weights, config.tail_weights())
        self.assertEqual((ranking.stem, ranking.resolve_times), (False, True))  # the index's, not the Config's

    def test_a_ranking_is_built_by_keyword_only_and_whole(self):
        ranking = Config().ranking(ViewSettings())
        with self.assertRaises(TypeError):
            Ranking(*ranking)
        partial = ranking._asdict()
        del partial["b"]
        with self.assertRaises(TypeError):
            Ranking(**partial)
        self.assertEqual(Ranking(**ranking._asdict()), ranking)
        # What a named tuple otherwise offers still works.
        self.assertEqual(ranking._replace(stem=False).stem, False)
        self.assertEqual(copy.deepcopy(ranking), ranking)
        self.assertEqual(pickle.loads(pickle.dumps(ranking)), ranking)

    def test_the_pool_limits_are_the_rankings_values_of_the_same_names(self):
        ranking = Ranking(**dict(Config().ranking(ViewSettings())._asdict(), k1=1.1, b=0.2, pool_size=3,
                                 context_size=4, feedback_docs=5, feedback_terms=6, postings_budget=7,
                                 period_size=8, related_share=0.9))
        with mock.patch.object(pipeline, "build") as build:
            pipeline.candidate_pool(None, 1, None, ranking)
        limits = build.call_args[0][3]
        self.assertEqual(limits, Limits(**{name: getattr(ranking, name) for name in Limits._fields}))

    def test_bm25_has_no_default_parameters_of_its_own(self):
        with self.assertRaises(TypeError):
            bm25.weighted_scores(["t"], {"t": 1.0}, {"t": {1: 1}}, {1: 5}, n_docs=10, total_length=50)
        self.assertFalse(hasattr(bm25, "K1") or hasattr(bm25, "B"))


if __name__ == "__main__":
    unittest.main()
