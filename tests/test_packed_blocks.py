"""Vectors packed in blocks: scored at once, joined at the newest end, aged out at the oldest."""
import random
import unittest

from flowmem.storage import packed_blocks
from flowmem.text import meaning

DIMS = 16


def vectors(n, seed):
    rng = random.Random(seed)
    return [bytes(rng.randrange(256) for _ in range(DIMS)) for _ in range(n)]


def packed(rows, dims=DIMS):
    joined = b"".join(row[:dims] for row in rows)
    return [packed_blocks.pack(joined[i::dims]) for i in range(dims)]


def dots(rows, query):
    return [sum(q * (b - meaning.OFFSET) for q, b in zip(query, row)) for row in rows]


class PackedBlocksTest(unittest.TestCase):
    def scored(self, blocks, query):
        constant = packed_blocks.constant(query, DIMS)
        return [s - constant for s in packed_blocks.scores(blocks, packed_blocks.sums(blocks, query))]

    def test_the_scores_are_the_dot_products_across_blocks_however_the_vectors_were_joined(self):
        rows = vectors(9000, 1)
        at_once = packed_blocks.appended((), DIMS, packed(rows), len(rows))
        in_pieces = ()
        for start in range(0, len(rows), 3001):
            chunk = rows[start:start + 3001]
            in_pieces = packed_blocks.appended(in_pieces, DIMS, packed(chunk), len(chunk))
        self.assertEqual(in_pieces, at_once)
        self.assertEqual([b.size for b in at_once], [4096, 4096, 808])
        query = [random.Random(2).randrange(-127, 128) for _ in range(DIMS)]
        self.assertEqual(self.scored(at_once, query), dots(rows, query))

    def test_the_largest_and_smallest_dot_products_of_256_components_fit_their_slots(self):
        rows = [bytes([0]) * 256, bytes([255]) * 256, bytes([0, 255]) * 128]
        blocks = packed_blocks.appended((), 256, packed(rows, 256), len(rows))
        for query in ([127] * 256, [-128] * 256, [127, -128] * 128):
            with self.subTest(query=query[:2]):
                constant = packed_blocks.constant(query, 256)
                got = [s - constant for s in packed_blocks.scores(blocks, packed_blocks.sums(blocks, query))]
                self.assertEqual(got, dots(rows, query))

    def test_the_oldest_leave_with_their_first_components_and_the_rest_score_as_before(self):
        rows = vectors(9000, 3)
        blocks = packed_blocks.appended((), DIMS, packed(rows), len(rows))
        left, gone = packed_blocks.without_oldest(blocks, 5000, 4)
        self.assertEqual([size for size, _ in gone], [4096, 904])
        self.assertEqual([c for _, columns in gone for c in columns],
                         packed(rows[:4096], 4) + packed(rows[4096:5000], 4))
        query = [random.Random(4).randrange(-127, 128) for _ in range(DIMS)]
        self.assertEqual(self.scored(left, query), dots(rows[5000:], query))


if __name__ == "__main__":
    unittest.main()
