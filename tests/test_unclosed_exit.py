"""A process that writes through a Memory and exits without closing it leaves a database file that holds its writes.

People back a database up by copying the .db file alone. A script whose last line is an
Add (no close(), no `with`) once left every write in the -wal file: its .db copied alone
was "empty, not a flowmem database". Each test runs such a script as a child process,
then copies the .db alone, as a backup would, and opens the copy.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

from flowmem.memory import Memory

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORDS = ["Dana: I adopted a beagle called Biscuit", "Dana: he chewed my shoes", "Dana: we walk at dawn"]


class UnclosedExitTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="flowmem-exit-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.db = os.path.join(self.tmp, "live.db")

    def write_and_exit(self, ending: str, settings: str = "") -> None:
        """Run a child that opens a Memory on self.db (with `settings`), adds WORDS and then runs `ending`."""
        script = textwrap.dedent("""
            import sys
            from flowmem.config import load
            from flowmem.memory import Memory
            memory = Memory(load({"db": sys.argv[1]%s}, environ={}))
            for i, words in enumerate(sys.argv[2:]):
                memory.add(words, user_id="dana", session_id="s1", timestamp=1700000000000 + i)
            %s
        """) % (settings, ending)
        env = {k: v for k, v in os.environ.items() if not k.startswith("FLOWMEM_")}
        env["PYTHONPATH"] = ROOT
        done = subprocess.run([sys.executable, "-c", script, self.db] + WORDS, env=env, capture_output=True,
                              text=True, timeout=120)
        self.assertEqual(done.returncode, 1 if "Error" in ending else 0, done.stderr)

    def copied_alone(self) -> str:
        """The .db file copied alone, as a backup copies it (no -wal, no -shm beside the copy)."""
        os.makedirs(os.path.join(self.tmp, "backup"))
        copy = os.path.join(self.tmp, "backup", "copy.db")
        shutil.copyfile(self.db, copy)
        return copy

    def test_the_db_file_alone_holds_the_writes_of_a_process_that_never_closed_its_memory(self):
        for ending in ("pass", "raise SystemExit(0)", "raise RuntimeError('the script failed')"):
            with self.subTest(ending=ending):
                for name in os.listdir(self.tmp):
                    shutil.rmtree(os.path.join(self.tmp, name), True) if name == "backup" else os.remove(
                        os.path.join(self.tmp, name))
                self.write_and_exit(ending)
                with Memory(self.copied_alone(), create=False) as copy:
                    self.assertEqual([m.content for m in copy.list(user_id="dana")], WORDS)
                    self.assertIn(WORDS[0], copy.search("what dog did Dana adopt?", user_id="dana", limit=1)[0].content)


if __name__ == "__main__":
    unittest.main()
