"""Signal names: declared once (retrieval/signals.py), the same in settings, scores and items."""
import unittest

from flowmem.config import Config
from flowmem.memory import make_ranking
from flowmem.retrieval import pipeline, signals
from flowmem.storage.views import KINDS
from tests.helpers import MemoryTestCase, add_body

SESSION = [
    "Dana: I moved to Lisbon in March for the new job.",
    "Priya: Lisbon! Do you still work at the bakery?",
    "Dana: No, I no longer work there; now I teach pottery at the community center.",
    "Priya: Pottery suits you. Is the studio near the river?",
]


class SignalRegistryTest(unittest.TestCase):
    def test_every_weight_setting_names_a_signal(self):
        config = Config()
        for name, _ in config.weights() + config.tail_weights():
            with self.subTest(name=name):
                self.assertIn(name, signals.SIGNAL_NAMES)

    def test_every_signal_can_be_weighed(self):
        config = Config()
        weighed = {name for name, _ in config.weights() + config.tail_weights()}
        self.assertEqual(set(signals.SIGNAL_NAMES) - weighed, set())

    def test_each_answer_option_has_a_signal_of_its_own_named_by_position(self):
        self.assertEqual([signals.option_signal_name(i) for i in range(3)], ["option0", "option1", "option2"])
        self.assertTrue(signals.is_option_signal("option12"))
        self.assertFalse(signals.is_option_signal(signals.OPTIONS))
        self.assertNotIn(signals.option_signal_name(0), signals.SIGNAL_NAMES)


class SignalsInSearchTest(MemoryTestCase):
    def setUp(self):
        super().setUp()
        self.memory.add(add_body("u1", "s1", SESSION))

    def test_every_registered_signal_and_each_option_is_scored(self):
        ranking = make_ranking(self.memory.config)
        with self.memory.store.reading() as reader:
            prepared = pipeline.prepare(reader, "u1", "Where does Dana work now?", ["a bakery", "a studio"], ranking)
        self.assertEqual(set(prepared.signal_scores), set(signals.SIGNALS) | {"option0", "option1"})

    def test_items_report_signals_by_their_registered_names(self):
        items = self.memory.search({"query": "Where does Dana work now?", "user_id": "u1", "top_k": 10,
                                    "options": ["a bakery", "a pottery studio"]})["data"]
        self.assertTrue(items)
        for item in items:
            self.assertIn(item["view"], KINDS)
            for name in item["signals"]:
                with self.subTest(name=name):
                    self.assertTrue(name in signals.SIGNAL_NAMES or signals.is_option_signal(name)
                                    or name == pipeline.STATE_UPDATE)


if __name__ == "__main__":
    unittest.main()
