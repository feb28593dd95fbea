"""scripts/llamp-accuracy-table's plan: which CPUs and apps each stream of concurrent campaigns gets
(--streams, --cores-per-stream, --dry-run), and the refusal when the CPUs do not suffice."""
import os
import subprocess
import unittest

TABLE = os.path.join(os.path.dirname(os.environ.get("LLAMP_CAMPAIGN_SCRIPT", "")), "llamp-accuracy-table")


def table(*args):
    return subprocess.run(["bash", TABLE, *args], capture_output=True, text=True, timeout=60)


class StreamPlanTest(unittest.TestCase):
    def test_apps_are_dealt_to_streams_on_cpus_of_their_own(self):
        cpus = sorted(os.sched_getaffinity(0))
        if len(cpus) < 2:
            self.skipTest("needs two CPUs")
        out = table("--streams", "2", "--cores-per-stream", "1", "--only", "ring,cg,pingpong,halo2d", "--dry-run")
        self.assertEqual(out.returncode, 0, out.stderr)
        # --only's order, dealt in turn
        self.assertEqual(out.stdout.splitlines(),
                         [f"stream 1: cpus {cpus[0]}: ring pingpong", f"stream 2: cpus {cpus[1]}: cg halo2d"])

    def test_one_stream_runs_the_apps_in_the_order_given(self):
        # a lent machine's short lease runs the most wanted apps first
        out = table("--only", "pingpong,cg", "--dry-run")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.splitlines(), ["stream 1: cpus all: pingpong cg"])

    def test_without_only_every_app_runs_in_the_tables_order(self):
        out = table("--dry-run")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertTrue(out.stdout.startswith("stream 1: cpus all: halo2d cg ring pingpong "), out.stdout)

    def test_an_unknown_app_is_refused_with_the_list(self):
        out = table("--only", "ring,nosuch", "--dry-run")
        self.assertEqual(out.returncode, 2)
        self.assertIn("no app 'nosuch'", out.stderr)
        self.assertIn("halo2d cg ring", out.stderr)
        self.assertEqual(out.stdout, "")

    def test_too_few_cpus_for_the_streams_is_refused(self):
        n = len(os.sched_getaffinity(0))
        # the default stream width is RANKS + 1
        out = table("-n", "2", "--streams", str(n), "--dry-run")
        self.assertEqual(out.returncode, 2)
        self.assertIn(f"{n} streams of 3 CPUs need {3 * n}, this process may use {n}", out.stderr)
        self.assertEqual(out.stdout, "")


if __name__ == "__main__":
    unittest.main()
