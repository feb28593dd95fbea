"""--quiet-gate: the lost share of a llamp-noise probe's spin, the gate's decisions (wait while a
CPU loses more than the threshold, give up after --quiet-gate-wait, let a round run after a failed
probe), quiet-gate.csv and what the report says. The probes here are scripted: a noisy spell of the
host cannot be produced on demand (the real probe runs in test_local_campaign's QuietGateTest)."""
import os
import unittest

from campaign_testlib import temp_dir
from test_report import write_record

from campaign import config, quiet_gate, rounds, schedule


def gated_campaign(test, pct=9.0, wait_s=25.0, pause_s=10.0):
    deltas = [0.0, 10000.0]
    c = config.Campaign(out_dir=temp_dir(test), app=["app"], ranks=2, deltas_ns=deltas, reps=2, seed=3,
                        quiet_gate_pct=pct, quiet_gate_wait_s=wait_s, quiet_gate_pause_s=pause_s,
                        schedule=schedule.make_schedule(deltas, 2, 3))
    c.tools.noise = "/usr/bin/llamp-noise-is-not-launched-here"
    c.save()
    return c


class Clock:
    """time.monotonic and time.sleep for the gate: sleeping moves the clock."""

    def __init__(self):
        self.now = 100.0
        self.sleeps = []

    def clock(self):
        return self.now

    def sleep(self, s):
        self.sleeps.append(s)
        self.now += s


def scripted(fractions):
    seq = iter(fractions)
    return lambda k: next(seq)


class LostFractionTest(unittest.TestCase):
    def test_each_ranks_detours_over_the_spin(self):
        recording = {"duration_ns": 1_000_000_000,
                     "ranks": [{"detours": [[1000, 40_000_000], [900_000_000, 10_000_000]]},
                               {"detours": []}]}
        self.assertEqual(quiet_gate.lost_fractions(recording), [0.05, 0.0])


class WaitForQuietTest(unittest.TestCase):
    def test_waits_while_a_cpu_loses_more_than_the_threshold(self):
        c = gated_campaign(self)
        t = Clock()
        logged = []
        outcome = quiet_gate.wait_for_quiet(c, "round 2", logged.append,
                                            probe_fn=scripted([[0.05, 0.21], [0.12, 0.06], [0.06, 0.07]]),
                                            sleep=t.sleep, clock=t.clock)
        self.assertEqual(outcome, quiet_gate.QUIET)
        self.assertEqual(t.sleeps, [10.0, 10.0])
        rows = quiet_gate.load(c)
        self.assertEqual([r["outcome"] for r in rows], ["noisy", "noisy", "quiet"])
        self.assertEqual([r["lost_max_pct"] for r in rows], ["21.00", "12.00", "7.00"])
        self.assertEqual(rows[0]["lost_per_rank_pct"], "5.00;21.00")
        self.assertEqual([r["waited_s"] for r in rows], ["0.0", "10.0", "20.0"])
        self.assertEqual(logged[-1], "quiet gate, round 2: quiet after 20 s (7.0 %)")

    def test_a_quiet_machine_passes_at_once(self):
        c = gated_campaign(self)
        t = Clock()
        self.assertEqual(quiet_gate.wait_for_quiet(c, "preparation", print, probe_fn=scripted([[0.09, 0.05]]),
                                                   sleep=t.sleep, clock=t.clock), quiet_gate.QUIET)
        self.assertEqual(t.sleeps, [])  # 9 % is not more than 9 %

    def test_gives_up_after_the_wait_and_runs_the_round(self):
        c = gated_campaign(self, wait_s=25.0, pause_s=10.0)
        t = Clock()
        outcome = quiet_gate.wait_for_quiet(c, "round 1", print, probe_fn=scripted([[0.3, 0.3]] * 10),
                                            sleep=t.sleep, clock=t.clock)
        self.assertEqual(outcome, quiet_gate.TIMED_OUT)
        # probes at 0, 10 and 20 s: a fourth would come after 30 s, past the 25 s
        self.assertEqual([r["outcome"] for r in quiet_gate.load(c)], ["noisy", "noisy", "timed-out"])

    def test_a_failed_probe_lets_the_round_run(self):
        c = gated_campaign(self)
        t = Clock()
        self.assertEqual(quiet_gate.wait_for_quiet(c, "round 1", print, probe_fn=scripted([None]), sleep=t.sleep,
                                                   clock=t.clock), quiet_gate.FAILED)
        self.assertEqual(t.sleeps, [])
        self.assertEqual(quiet_gate.load(c)[0]["lost_max_pct"], "")

    def test_off_without_a_threshold_or_llamp_noise(self):
        c = gated_campaign(self, pct=0.0)
        self.assertIsNone(quiet_gate.wait_for_quiet(c, "round 1", print, probe_fn=scripted([])))
        c = gated_campaign(self)
        c.tools.noise = ""
        self.assertIsNone(quiet_gate.wait_for_quiet(c, "round 1", print, probe_fn=scripted([])))
        self.assertEqual(quiet_gate.load(c), [])


class SummaryTest(unittest.TestCase):
    def test_counts_gates_waits_and_timeouts(self):
        c = gated_campaign(self, wait_s=15.0)
        t = Clock()
        quiet_gate.wait_for_quiet(c, "preparation", print, probe_fn=scripted([[0.05, 0.06]]), sleep=t.sleep,
                                  clock=t.clock)
        quiet_gate.wait_for_quiet(c, "round 1", print, probe_fn=scripted([[0.2, 0.05], [0.04, 0.08]]),
                                  sleep=t.sleep, clock=t.clock)
        quiet_gate.wait_for_quiet(c, "round 2", print, probe_fn=scripted([[0.3, 0.1], [0.25, 0.1]]),
                                  sleep=t.sleep, clock=t.clock)
        s = quiet_gate.summary(c)
        self.assertEqual((s["gates"], s["probes"], s["gates_that_waited"], s["timed_out"], s["probe_failed"]),
                         (3, 5, 2, 1, 0))
        self.assertEqual(s["waited_s"], 20.0)  # round 1 10 s, round 2 10 s before it gave up
        self.assertEqual(s["quiet_lost_median_pct"], 7.0)  # 6 % and 8 %
        self.assertEqual(s["noisy_lost_median_pct"], 25.0)  # 20, 25 and 30 %
        text = quiet_gate.paragraph(s)[0]
        self.assertIn("3 gates (the preparation and every round) probed the CPUs 5 times", text)
        self.assertIn("2 waited for the host to come quiet, 20 s in all, and 1 ran without it coming quiet", text)
        self.assertIn("The passing probes lost 7.0 % of their spin (median), the ones waited on 25.0 %.", text)

    def test_a_resumed_campaign_counts_a_gate_once(self):
        c = gated_campaign(self)
        t = Clock()
        for fractions in ([[0.2, 0.2], [0.2, 0.2], [0.2, 0.2]], [[0.05, 0.05]]):  # the round gated again on resume
            try:
                quiet_gate.wait_for_quiet(c, "round 1", print, probe_fn=scripted(fractions), sleep=t.sleep,
                                          clock=t.clock)
            except StopIteration:
                pass
        s = quiet_gate.summary(c)
        self.assertEqual((s["gates"], s["probes"], s["gates_that_waited"], s["waited_s"]), (1, 4, 0, 0.0))

    def test_nothing_without_probes(self):
        c = gated_campaign(self)
        self.assertIsNone(quiet_gate.summary(c))
        self.assertEqual(quiet_gate.paragraph(None), [])


class GateRoundTest(unittest.TestCase):
    def test_a_round_whose_runs_are_all_done_is_not_gated(self):
        c = gated_campaign(self)
        first = [s for s in c.schedule if s.round == 0]
        second = [s for s in c.schedule if s.round == 1]
        for s in first:
            write_record(c, s.slot, s.round, s.delta_ns, 1, "ok", 1e9)
        from campaign import runs
        records = runs.load_records(c)
        probed = []
        original = quiet_gate.probe
        quiet_gate.probe = lambda campaign: probed.append(campaign) or [0.01, 0.01]
        try:
            rounds.gate_round(c, first, records, print)
            self.assertEqual(probed, [])
            rounds.gate_round(c, second, records, print)
            self.assertEqual(len(probed), 1)
        finally:
            quiet_gate.probe = original
        self.assertEqual([r["label"] for r in quiet_gate.load(c)], ["round 2"])


if __name__ == "__main__":
    unittest.main()
