"""llamp-coreprobe, the cache-line hand-off time between the CPUs a job's ranks are pinned to: the
JSON the campaign reads (cores.py), one pair per CPU after the first, medians inside their blocks."""
import json
import os
import subprocess
import unittest

from campaign_testlib import BUILD_DIR, temp_dir

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


class OneCpuCampaignTest(unittest.TestCase):
    """A campaign whose affinity mask holds one CPU (a stream of `llamp-accuracy-table
    --cores-per-stream 1`, a one-core Slurm allocation) has no hand-off to calibrate: no limits, and
    its launches are not judged. It used to stop with a TypeError before its first launch."""

    def test_one_cpu_gives_no_limits_and_launches_once(self):
        from campaign import config, cores
        before = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {min(before)})
        self.addCleanup(os.sched_setaffinity, 0, before)
        d = temp_dir(self)
        c = config.Campaign(out_dir=d, app=["a"], ranks=2, deltas_ns=[0.0], core_limit="auto",
                            tools=config.Tools(coreprobe=PROBE))
        self.assertEqual(cores.limits_ns(c, 2, log=lambda *_: None), (None, None))
        launched = []
        _, guard, slow = cores.guarded(c, "params-1", 2, launched.append, log=lambda *_: None)
        self.assertEqual((len(launched), slow, guard.slow), (1, 0, False))


if __name__ == "__main__":
    unittest.main()
