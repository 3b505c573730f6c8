"""Adding a node to a real loopback cluster and handing it slots (`flowmem cluster add-node`, then `rebalance`).

What growing the cluster promises, checked from the outside: adding a node changes no
user's owner and refuses no request while HAProxy reloads; handing a slot over moves that
slot's users, and only them, to the new node, each user's searches through the front
byte-identical before and after and its messages in exactly one node's file, its owner's;
a user first seen after the handover begins on the new node; a handover stopped after its
users were pinned is finished by running it again.
"""
from __future__ import annotations

import threading
import unittest
import warnings
from typing import List

from flowmem.cluster import control, nodes as loopback, placement as move_user, rebalance
from flowmem.cluster.haproxy import FROZEN, initial_slots, node_names, read_map, read_slots, slot_of
from flowmem.errors import RetryLater
from tests.helpers import add_body
from tests.loopback_cluster import TOPICS, LoopbackClusterCase

USERS = ["grow-%d" % i for i in range(24)] + ["grow é/%", "grow 🙂 space", 'grow "quoted"']


class PlanTest(unittest.TestCase):
    """The handover plan, without starting anything."""

    def test_a_fourth_node_gets_a_quarter_of_the_slots_from_the_others_in_the_fewest_handovers(self) -> None:
        names = node_names(4)
        moves = rebalance.plan(initial_slots(names[:3]), names)
        self.assertEqual(len(moves), 256)
        self.assertEqual({to for _, _, to in moves}, {"node4"})
        slots = initial_slots(names[:3])
        for slot, source, to in moves:
            self.assertEqual(slots[slot], source)
            slots[slot] = to
        self.assertEqual([slots.count(n) for n in names], [256, 256, 256, 256])
        self.assertEqual(rebalance.plan(slots, names), [])
        self.assertEqual(rebalance.plan(initial_slots(names[:3]), names), moves)  # the same every run


class AddNodeTest(LoopbackClusterCase):
    replicate = False
    searched_topics = 3

    def rebalance(self, *flags: str) -> str:
        return self.tool("rebalance", "--cluster", self.directory, *flags)

    def test_a_node_added_then_handed_slots_serves_their_users_and_nobody_else_moves(self) -> None:
        for i, user in enumerate(USERS):
            contents = ["%s on %s, part %d" % (user, TOPICS[(i + j) % len(TOPICS)], j) for j in range(4)]
            self.front.add(add_body(user, "s", contents, request_id="%s/0" % user))
        before = {user: self.searches(user) for user in USERS}
        homes = {user: self.holders(user) for user in USERS}
        self.assertEqual({len(h) for h in homes.values()}, {1})

        refused: List[int] = []
        answered = [0]
        stop = threading.Event()

        def keep_searching() -> None:  # a client through the front all through HAProxy's reload
            plan = move_user.cluster_plan(self.directory, USERS[0], None)
            while not stop.is_set():
                status, _ = plan.search_bytes(self.cluster["front"], {"user_id": USERS[0], "query": "x", "top_k": 1})
                if status != 200:
                    refused.append(status)
                answered[0] += 1

        old_front = self.cluster["haproxy_pid"]
        searcher = threading.Thread(target=keep_searching)
        searcher.start()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ResourceWarning)
                node = loopback.add_node(self.directory)
        finally:
            stop.set()
            searcher.join()
        self.assertEqual(refused, [])
        self.assertGreater(answered[0], 10)
        self.cluster = loopback.load(self.directory)
        self.assertNotEqual(self.cluster["haproxy_pid"], old_front)
        self.assertFalse(loopback.alive(old_front), "the old front finished and left")
        self.assertEqual(node["name"], "node4")
        self.assertEqual(self.front.health()["nodes"], {n: "up" for n in node_names(4)})
        self.assertEqual({user: self.searches(user) for user in USERS}, before)
        self.assertEqual({user: self.holders(user) for user in USERS}, homes)

        chosen = sorted({slot_of(user) for user in USERS[:3]})
        for slot in chosen:
            self.assertIn("slot %d: " % slot, self.rebalance("--slot", str(slot), "--to", "node4"))
        planned = rebalance.plan(read_slots(self.cluster["slots"]), node_names(4))[:3]
        self.assertIn("slot %d: " % planned[0][0], self.rebalance("--limit", "3"))
        handed = set(chosen) | {slot for slot, _, _ in planned}

        slots = read_slots(self.cluster["slots"])
        self.assertEqual([s for s in range(len(slots)) if slots[s] == "node4"], sorted(handed))
        self.assertEqual(read_map(self.cluster["map"]), {})  # every pin went with its user's move
        for user in USERS:
            with self.subTest(user=user):
                self.assertEqual(self.searches(user), before[user])
                expected = ["node4"] if slot_of(user) in handed else homes[user]
                self.assertEqual(self.holders(user), expected)
                self.assertEqual(control.owner(self.cluster, user), expected[0])
        newcomer = next(u for u in ("new-%d" % i for i in range(100000)) if slot_of(u) == chosen[0])
        self.front.add(add_body(newcomer, "s", ["first words"]))
        self.assertEqual(self.holders(newcomer), ["node4"])

    def test_a_handover_stopped_after_pinning_is_finished_by_running_it_again(self) -> None:
        user = "pinned-0"
        self.front.add(add_body(user, "s", ["%s keeps a diary about %s" % (user, TOPICS[0])]))
        before, home = self.searches(user), self.holders(user)
        slot = slot_of(user)
        target = next(n["name"] for n in self.cluster["nodes"] if n["name"] != home[0])
        journal = {"slot": slot, "from": home[0], "to": target, "step": "freeze"}
        rebalance.write_journal(self.cluster, journal)
        rebalance.pin(self.cluster, journal, None, 10.0)  # then the tool "dies"
        self.assertEqual(read_slots(self.cluster["slots"])[slot], FROZEN)
        self.assertEqual(read_map(self.cluster["map"])[user], home[0])
        self.assertEqual(self.searches(user), before)  # pinned: served by its node while the slot is frozen
        stranger = next(u for u in ("stranger-%d" % i for i in range(100000)) if slot_of(u) == slot)
        with self.assertRaises(RetryLater):  # unpinned users of a frozen slot wait
            self.front.add(add_body(stranger, "s", ["hello"]))
        output = self.rebalance("--dry-run", "--limit", "0")
        self.assertIn("slot %d: %s -> %s" % (slot, home[0], target), output)
        self.rebalance("--limit", "0")  # only what was left unfinished
        self.assertEqual(read_slots(self.cluster["slots"])[slot], target)
        self.assertEqual(self.holders(user), [target])
        self.assertEqual(self.searches(user), before)
        self.assertNotIn(user, read_map(self.cluster["map"]))
        self.assertEqual(self.holders(stranger), [])


if __name__ == "__main__":
    unittest.main()
