import ast
import copy
import dataclasses
import os
import pickle
import tempfile
import unittest
from typing import Dict, Iterator, List, Set, Tuple
from unittest import mock

from flowmem import config as config_module
from flowmem.config import GROUPS, Config, load
from flowmem.errors import ConfigError
from flowmem.retrieval import bm25, pipeline
from flowmem.retrieval.ranking import Ranking
from flowmem.storage import declare
from flowmem.storage.settings import ViewSettings
from tests.server import ROOT


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

    def test_a_retired_setting_is_refused_naming_what_replaced_it_never_ignored(self):
        for given in ({"environ": {"FLOWMEM_CACHE_WORDS": "1000"}}, {"flags": {"cache_vectors": 5}}):
            with self.subTest(given=given), self.assertRaises(ConfigError) as caught:
                load(**given)
            self.assertIn("is no longer a setting: use cache_", caught.exception.reason)

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
            declare.setting(1, "no-such-group", "help")


class SettingsPathTest(unittest.TestCase):
    """Config hands each layer its settings under their own names; the layers below repeat no default."""

    def test_index_settings_are_only_those_given(self):
        self.assertEqual(Config().index_settings(), {})
        config = load({"stem": "0", "window_size": "5"}, environ={})
        self.assertEqual(config.index_settings(), {"window_size": 5, "stem": False})

    def test_the_ranking_takes_each_value_from_the_setting_of_the_same_name(self):
        # Distinct values everywhere, so that any two swapped would show.
        names = [f.name for f in dataclasses.fields(Ranking)]
        values = {name: float(i + 2) if isinstance(getattr(Config(), name), float) else i + 2
                  for i, name in enumerate(names)}
        values.update(meaning_places="3,7", view_kind="segment", message_share=0.25, date_prefix=False,
                      time_annotations=True)
        config = Config(**values)
        ranking = config.ranking()
        self.assertIs(type(ranking), Ranking)
        self.assertEqual({name: getattr(ranking, name) for name in names}, values)
        self.assertEqual(ranking.places(), (3, 7))
        self.assertEqual(ranking.weights(), config.weights())
        self.assertEqual(ranking.tail_weights(), config.tail_weights())
        self.assertEqual(ranking.weight("reply"), values["weight_reply"])
        self.assertEqual(ranking.weight("no-such-signal"), 0.0)

    def test_a_rankings_defaults_are_the_served_ones(self):
        self.assertEqual(Ranking(), Config().ranking())
        self.assertEqual(Ranking(candidate_pool=7), Config(candidate_pool=7).ranking())

    def test_a_ranking_is_built_by_keyword_only_and_refuses_a_name_it_does_not_declare(self):
        with self.assertRaises(TypeError):
            Ranking(1.2)  # type: ignore[call-arg]
        for old_name in ("pool_size", "k1", "context_size", "period_size", "weights"):
            with self.subTest(name=old_name), self.assertRaises(TypeError) as cm:
                Ranking(**{old_name: 1})
            self.assertIn(old_name, str(cm.exception))
        ranking = Ranking(head_size=4)
        self.assertEqual(dataclasses.replace(ranking, head_size=5).head_size, 5)
        self.assertEqual(copy.deepcopy(ranking), ranking)
        self.assertEqual(pickle.loads(pickle.dumps(ranking)), ranking)
        with self.assertRaises(dataclasses.FrozenInstanceError):
            ranking.head_size = 1  # type: ignore[misc]

    def test_the_pool_is_built_with_the_ranking_itself(self):
        ranking = Ranking(candidate_pool=3, context_pool=4)
        query = mock.Mock(terms=["word"], periods=(), names=[])
        reader = mock.MagicMock()
        reader.settings = ViewSettings(resolve_times=False)
        with mock.patch.object(pipeline, "analyze", return_value=query), \
                mock.patch.object(pipeline, "build") as build, mock.patch.object(pipeline, "signal_scores"):
            pipeline.prepare(reader, "u", "word", (), ranking)
        self.assertIs(build.call_args[0][3], ranking)

    def test_bm25_has_no_default_parameters_of_its_own(self):
        with self.assertRaises(TypeError):
            bm25.weighted_scores(["t"], {"t": 1.0}, {"t": {1: 1}}, {1: 5}, n_docs=10, total_length=50)
        self.assertFalse(hasattr(bm25, "K1") or hasattr(bm25, "B"))



def declarations(root: str) -> Dict[str, List[str]]:
    """{field name: ["module.Class", ...]} of every annotated class field under `root`/flowmem."""
    out: Dict[str, List[str]] = {}
    for module, tree in _modules(root):
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for statement in node.body:
                    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                        out.setdefault(statement.target.id, []).append("%s.%s" % (module, node.name))
    return out


def renamed_copies(root: str, names: Set[str]) -> List[str]:
    """Every `other_name=<anything>.setting_name` keyword under `root`/flowmem: a setting passed on
    under another name."""
    out = []
    for module, tree in _modules(root):
        for node in ast.walk(tree):
            if (isinstance(node, ast.keyword) and node.arg and isinstance(node.value, ast.Attribute)
                    and node.value.attr in names and node.arg != node.value.attr):
                out.append("%s line %d: %s=...%s" % (module, node.value.lineno, node.arg, node.value.attr))
    return out


def _modules(root: str) -> Iterator[Tuple[str, ast.AST]]:
    """(module name, its parsed code) of every module under `root`/flowmem."""
    for directory, _, files in os.walk(os.path.join(root, "flowmem")):
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                module = os.path.relpath(path, root)[:-3].replace(os.sep, ".")
                with open(path, encoding="utf-8") as f:
                    yield module, ast.parse(f.read())


# The one setting group with two classes, on purpose: Config's field is what was asked for (None:
# the database's), ViewSettings's what a database has, with a new database's default.
INDEX_DECLARATIONS = ["flowmem.config.ServiceSettings", "flowmem.storage.settings.ViewSettings"]


class SettingDeclaredOnceTest(unittest.TestCase):
    """Every setting is declared in one class under one name; nothing copies it under another."""

    def test_each_setting_is_a_field_of_one_class_only(self):
        found = declarations(ROOT)
        twice = {}
        for setting in config_module.settings():
            expected = INDEX_DECLARATIONS if setting.group == "index" else found[setting.name][:1]
            if found[setting.name] != expected:
                twice[setting.name] = found[setting.name]
        self.assertEqual(twice, {}, "settings declared in more than one class (declare each once, where it is used)")

    def test_the_classes_config_is_made_of_declare_no_name_twice(self):
        # A dataclass field declared again in a second base is silently merged: one would shadow the other.
        seen: Dict[str, str] = {}
        for cls in Config.__mro__:
            for name in vars(cls).get("__annotations__", {}):
                self.assertNotIn(name, seen, "%s declared in %s and %s" % (name, seen.get(name), cls.__name__))
                seen[name] = cls.__name__
        self.assertEqual(set(seen), set(config_module.field_names()))
        self.assertEqual(vars(Config).get("__annotations__", {}), {})  # Config itself adds no field

    def test_no_setting_is_passed_on_under_another_name(self):
        self.assertEqual(renamed_copies(ROOT, set(config_module.field_names())), [])

    def test_the_checks_find_a_setting_copied_into_another_class_under_another_name(self):
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "flowmem"))
            with open(os.path.join(root, "flowmem", "copy.py"), "w", encoding="utf-8") as f:
                f.write("class Limits:\n    feedback_docs: int\n\n\ndef limits(r):\n"
                        "    return Limits(pool_size=r.candidate_pool)\n")
            self.assertEqual(declarations(root), {"feedback_docs": ["flowmem.copy.Limits"]})
            self.assertEqual(renamed_copies(root, {"candidate_pool"}),
                             ["flowmem.copy line 6: pool_size=...candidate_pool"])


if __name__ == "__main__":
    unittest.main()
