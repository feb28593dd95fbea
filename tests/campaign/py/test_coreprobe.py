"""llamp-coreprobe, the cache-line hand-off time between the CPUs a job's ranks are pinned to: the
JSON the campaign reads (cores.py), one pair per CPU after the first, medians inside their blocks."""
import json
import os
import subprocess
import unittest

from campaign_testlib import BUILD_DIR

PROBE = os.path.join(BUILD_DIR, "bin", "llamp-coreprobe")


def probe(*args):
    return json.loads(subprocess.run([PROBE, *args], capture_output=True, text=True, check=True, timeout=60).stdout)


class CoreProbeTest(unittest.TestCase):
    def test_two_cpus_give_one_pair_with_a_plausible_hand_off(self):
        if len(os.sched_getaffinity(0)) < 2:
            self.skipTest("one CPU: no pair to probe")
        result = probe("--cpus", "2", "--blocks", "5", "--round-trips", "200")
        self.assertEqual(len(result["cpus"]), 2)
        (pair,) = result["pairs"]
        self.assertEqual(pair["cpus"], result["cpus"])
        # A cache line between two CPUs of one machine: nanoseconds to a few microseconds (a vCPU
        # descheduled mid-block inflates a block, not the median of five).
        self.assertGreater(pair["one_way_ns"], 1.0)
        self.assertLess(pair["one_way_ns"], 100_000.0)
        self.assertLessEqual(pair["fastest_block_ns"], pair["one_way_ns"])
        self.assertLessEqual(pair["one_way_ns"], pair["slowest_block_ns"])
        self.assertEqual(result["max_one_way_ns"], pair["one_way_ns"])

    def test_one_cpu_has_nothing_to_probe(self):
        result = probe("--cpus", "1")
        self.assertEqual(result["pairs"], [])
        self.assertEqual(result["max_one_way_ns"], 0.0)
        self.assertEqual(len(result["cpus"]), 1)


if __name__ == "__main__":
    unittest.main()
