import os
import tempfile
import unittest

from flowmem.config import Config, load
from flowmem.errors import ConfigError


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
        with self.assertRaises(Exception):
            Config().port = 1  # type: ignore[misc]


if __name__ == "__main__":
    unittest.main()
