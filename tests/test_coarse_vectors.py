"""Vectors past the window of whole ones: their first components, in blocks, and the nearest of them."""
import random
import unittest
from array import array

from flowmem.storage import coarse_vectors, packed_blocks
from flowmem.text import meaning

DIMS = 256


def random_rows(n, seed):
    rng = random.Random(seed)
    rows = [(i + 1, 1, i + 1, bytes(rng.randrange(256) for _ in range(DIMS))) for i in range(n)]
    # Copies of earlier vectors, so that equal scores are met and must go later first.
    return rows + [(n + i + 1, 1, n + i + 1, rows[i * 7][3]) for i in range(n // 50)]


def by_hand(rows, query, count, passing=None):
    """The `count` nearest by the kept components, largest first, the later of equal ones first."""
    kept = coarse_vectors.DIMS
    scores = [sum(q * (b - meaning.OFFSET) for q, b in zip(query[:kept], row[3][:kept])) for row in rows]
    order = sorted((i for i in range(len(rows)) if passing is None or rows[i][0] in passing),
                   key=lambda i: (-scores[i], -i))
    return order[:count]


class CoarseVectorsTest(unittest.TestCase):
    def test_the_nearest_are_those_an_exact_ranking_of_every_message_gives(self):
        rows = random_rows(9000, 1)  # three blocks, the sampled threshold's path
        old = coarse_vectors.with_rows(coarse_vectors.empty(DIMS), rows)
        rng = random.Random(2)
        for _ in range(5):
            query = [rng.randrange(-127, 128) for _ in range(DIMS)]
            with self.subTest(query=query[:3]):
                self.assertEqual(coarse_vectors.nearest(old, query, 200), by_hand(rows, query, 200))
                self.assertEqual(coarse_vectors.nearest(old, query, 5000), by_hand(rows, query, 5000))

    def test_only_the_messages_a_filter_passes_are_among_the_nearest(self):
        rows = random_rows(3000, 3)
        old = coarse_vectors.with_rows(coarse_vectors.empty(DIMS), rows)
        passing = {row[0] for row in rows if row[0] % 3 == 0}
        query = [random.Random(4).randrange(-127, 128) for _ in range(DIMS)]
        self.assertEqual(coarse_vectors.nearest(old, query, 50, passing), by_hand(rows, query, 50, passing))

    def test_vectors_joined_a_few_at_a_time_are_held_as_those_joined_at_once(self):
        rows = random_rows(5000, 5)
        at_once = coarse_vectors.with_rows(coarse_vectors.empty(DIMS), rows)
        in_pieces = coarse_vectors.empty(DIMS)
        for start in range(0, len(rows), 1234):
            chunk = rows[start:start + 1234]
            kept = b"".join(row[3][:coarse_vectors.DIMS] for row in chunk)
            in_pieces = coarse_vectors.joined(in_pieces, array("q", [row[0] for row in chunk]),
                                              [packed_blocks.pack(kept[i::coarse_vectors.DIMS])
                                               for i in range(coarse_vectors.DIMS)])
        self.assertEqual(in_pieces, at_once)
        self.assertEqual([b.size for b in at_once.blocks], [4096, len(rows) - 4096])


if __name__ == "__main__":
    unittest.main()
