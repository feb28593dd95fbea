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


def scripted(fractions, slices=None):
    """Probes that lose these fractions of their spin (None: a failed probe), with these median
    throughput slices per rank when given."""
    seq = iter(zip(fractions, slices or [None] * len(fractions)))

    def probe_fn(k):
        lost, slice_ns = next(seq)
        return None if lost is None else quiet_gate.Probe(lost, slice_ns)
    return probe_fn


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
        self.assertEqual(logged[-1], "quiet gate, round 2: quiet after 20 s (7.0 % lost)")

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
        self.assertIn("Of the probes waited on, 3 lost too much of their spin and 0 computed too slowly.", text)
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
        quiet_gate.probe = lambda campaign: probed.append(campaign) or quiet_gate.Probe([0.01, 0.01])
        try:
            rounds.gate_round(c, first, records, print)
            self.assertEqual(probed, [])
            rounds.gate_round(c, second, records, print)
            self.assertEqual(len(probed), 1)
        finally:
            quiet_gate.probe = original
        self.assertEqual([r["label"] for r in quiet_gate.load(c)], ["round 2"])


class SlowdownTest(unittest.TestCase):
    """Throughput slices: a rank computing more than --quiet-gate-slowdown % slower than its fastest
    probe of the campaign is a noisy spell too (stop 56: one vCPU 11-19 % slower, no more detours)."""

    def test_waits_while_a_rank_computes_slower_than_its_fastest_probe(self):
        c = gated_campaign(self)
        t = Clock()
        logged = []
        first = quiet_gate.wait_for_quiet(c, "preparation", logged.append, probe_fn=scripted(
            [[0.05, 0.05]], [[80000.0, 70000.0]]), sleep=t.sleep, clock=t.clock)
        self.assertEqual(first, quiet_gate.QUIET)  # the first probe is its own reference
        outcome = quiet_gate.wait_for_quiet(c, "round 1", logged.append, probe_fn=scripted(
            [[0.05, 0.05], [0.05, 0.06], [0.06, 0.05]],
            [[71000.0, 79100.0], [70000.0, 74500.0], [70500.0, 71500.0]]), sleep=t.sleep, clock=t.clock)
        self.assertEqual(outcome, quiet_gate.QUIET)
        rows = quiet_gate.load(c)
        self.assertEqual([r["outcome"] for r in rows], ["quiet", "noisy", "noisy", "quiet"])
        # rank 1 against its 70000 ns: 13.00 %, then 6.43 % (> 6 %); rank 0's 80000 ns is no reference
        # once it computed at 71000 ns
        self.assertEqual([r["slowed_max_pct"] for r in rows], ["0.00", "13.00", "6.43", "2.14"])
        self.assertEqual(rows[1]["slice_median_per_rank_ns"], "71000;79100")
        self.assertEqual(quiet_gate.fastest_slices(c), [70000.0, 70000.0])
        self.assertEqual(logged[0], "quiet gate, round 1: a rank computed 13.0 % slower than its fastest probe "
                                    "(> 6 %); waiting up to 25 s for the host to come quiet")
        self.assertEqual(logged[-1], "quiet gate, round 1: quiet after 20 s (6.0 % lost, 2.1 % slower)")

    def test_both_reasons_are_named(self):
        c = gated_campaign(self, wait_s=5.0)
        t = Clock()
        logged = []
        quiet_gate.wait_for_quiet(c, "preparation", print, probe_fn=scripted([[0.05, 0.05]], [[70000.0, 70000.0]]),
                                  sleep=t.sleep, clock=t.clock)
        outcome = quiet_gate.wait_for_quiet(c, "round 1", logged.append, probe_fn=scripted(
            [[0.20, 0.05]], [[70000.0, 77000.0]]), sleep=t.sleep, clock=t.clock)
        self.assertEqual(outcome, quiet_gate.TIMED_OUT)
        self.assertIn("the CPUs lost 20.0 % of a 300ms spin (> 9 %) and a rank computed 10.0 % slower", logged[-1])
        s = quiet_gate.summary(c)
        self.assertEqual((s["noisy_by_detours"], s["noisy_by_slowdown"], s["noisy_slowed_median_pct"]), (1, 1, 10.0))
        text = quiet_gate.paragraph(s)[0]
        self.assertIn("and 200ms of throughput slices (a rank more than 6 % slower than its fastest probe, "
                      "70.0 µs, 70.0 µs per slice, is noisy too)", text)
        self.assertIn("1 lost too much of their spin and 1 computed too slowly", text)

    def test_off_at_zero(self):
        c = gated_campaign(self)
        c.quiet_gate_slowdown_pct = 0.0
        t = Clock()
        quiet_gate.wait_for_quiet(c, "preparation", print, probe_fn=scripted([[0.05, 0.05]], [[70000.0, 70000.0]]),
                                  sleep=t.sleep, clock=t.clock)
        self.assertEqual(quiet_gate.wait_for_quiet(c, "round 1", print, probe_fn=scripted(
            [[0.05, 0.05]], [[90000.0, 90000.0]]), sleep=t.sleep, clock=t.clock), quiet_gate.QUIET)

    def test_a_probe_without_slices_is_judged_by_its_detours(self):
        c = gated_campaign(self)
        t = Clock()
        self.assertEqual(quiet_gate.wait_for_quiet(c, "round 1", print, probe_fn=scripted([[0.05, 0.05]]),
                                                   sleep=t.sleep, clock=t.clock), quiet_gate.QUIET)
        row = quiet_gate.load(c)[0]
        self.assertEqual((row["slice_median_per_rank_ns"], row["slowed_max_pct"]), ("", ""))
        self.assertIsNone(quiet_gate.fastest_slices(c))

    def test_slice_medians_from_a_recording(self):
        recording = {"ranks": [{"throughput": {"median_ns": 71976, "base_ns": 71314}},
                               {"throughput": {"median_ns": 70754}}]}
        self.assertEqual(quiet_gate.slice_medians(recording), [71976.0, 70754.0])
        self.assertIsNone(quiet_gate.slice_medians({"ranks": [{"detours": []}, {"detours": []}]}))

    def test_a_csv_from_before_the_throughput_columns_gains_them(self):
        c = gated_campaign(self)
        with open(c.path(quiet_gate.GATE_CSV), "w") as f:
            f.write("unix_time,label,probe,lost_max_pct,lost_per_rank_pct,outcome,waited_s\n"  # before stop 56
                    "1.0,preparation,1,5.00,5.00;4.00,quiet,0.0\n")
        t = Clock()
        quiet_gate.wait_for_quiet(c, "round 1", print, probe_fn=scripted([[0.05, 0.05]], [[70000.0, 70000.0]]),
                                  sleep=t.sleep, clock=t.clock)
        with open(c.path(quiet_gate.GATE_CSV)) as f:
            self.assertEqual(f.readline().strip().split(","), quiet_gate.FIELDS)
        rows = quiet_gate.load(c)
        self.assertEqual([(r["label"], r["lost_per_rank_pct"], r["slice_median_per_rank_ns"]) for r in rows],
                         [("preparation", "5.00;4.00", ""), ("round 1", "5.00;5.00", "70000;70000")])


class GateLaunchTest(unittest.TestCase):
    """--quiet-gate-every launch gates each launch not yet made, and no round."""

    def _probing(self):
        probed = []
        original = quiet_gate.probe
        quiet_gate.probe = lambda campaign: probed.append(campaign) or quiet_gate.Probe([0.01, 0.01])
        self.addCleanup(setattr, quiet_gate, "probe", original)
        return probed

    def test_every_launch_not_yet_made(self):
        c = gated_campaign(self)
        c.quiet_gate_every = quiet_gate.LAUNCH
        probed = self._probing()
        first = [s for s in c.schedule if s.round == 0]
        write_record(c, first[0].slot, 0, first[0].delta_ns, 1, "ok", 1e9)
        from campaign import runs
        rounds.gate_round(c, first, runs.load_records(c), print)  # no round gate
        self.assertEqual(probed, [])
        for s in first:
            rounds.gate_slot(c, s, print)  # the first slot is done: only the second is gated
        quiet_gate.gate_launch(c, "traced run 2", print)
        quiet_gate.gate_launch(c, "noise recording 2", print, pending=False)
        self.assertEqual([r["label"] for r in quiet_gate.load(c)],
                         [f"round 1 slot {first[1].slot}", "traced run 2"])

    def test_round_mode_gates_no_launch(self):
        c = gated_campaign(self)
        probed = self._probing()
        for s in c.schedule:
            rounds.gate_slot(c, s, print)
        quiet_gate.gate_launch(c, "traced run 2", print)
        self.assertEqual(probed, [])

    def test_the_paragraph_names_launches(self):
        c = gated_campaign(self)
        c.quiet_gate_every = quiet_gate.LAUNCH
        self._probing()
        for label in ("preparation", "round 1 slot 0", "traced run 2"):
            quiet_gate.wait_for_quiet(c, label, print)
        self.assertIn("3 gates (the preparation and every launch among the rounds)",
                      quiet_gate.paragraph(quiet_gate.summary(c))[0])


class CheckAfterTest(unittest.TestCase):
    """--quiet-gate-after: one probe after a launch, judged by its own slowdown threshold; it never
    waits, and a failed probe rejects nothing (runs the launches: test_runs' NoisyHostTest)."""

    def after_campaign(self, after_pct=9.0):
        c = gated_campaign(self)
        c.quiet_gate_after_pct = after_pct
        t = Clock()
        quiet_gate.wait_for_quiet(c, "preparation", print, probe_fn=scripted([[0.05, 0.05]], [[70000.0, 70000.0]]),
                                  sleep=t.sleep, clock=t.clock)
        return c

    def test_a_rank_slower_than_the_after_threshold_names_the_spell(self):
        c = self.after_campaign()
        # 8 % slower: the gate before a launch (6 %) would wait, the check after it (9 %) passes
        self.assertEqual(quiet_gate.check_after(c, "round 1 slot 0 attempt 1",
                                                scripted([[0.05, 0.05]], [[75600.0, 70000.0]])), "")
        why = quiet_gate.check_after(c, "round 1 slot 1 attempt 1", scripted([[0.05, 0.05]], [[70000.0, 77000.0]]))
        self.assertEqual(why, "a rank computed 10.0 % slower than its fastest probe (> 9 %)")
        self.assertIn("the CPUs lost 12.0 %", quiet_gate.check_after(c, "trace-2", scripted([[0.12, 0.05]])))
        rows = quiet_gate.load(c)
        self.assertEqual([(r["when"], r["outcome"], r["slowed_max_pct"]) for r in rows],
                         [("before", "quiet", "0.00"), ("after", "quiet", "8.00"), ("after", "noisy", "10.00"),
                          ("after", "noisy", "")])
        self.assertEqual({r["waited_s"] for r in rows}, {"0.0"})

    def test_a_failed_probe_or_the_check_off_rejects_nothing(self):
        c = self.after_campaign()
        self.assertEqual(quiet_gate.check_after(c, "trace-1", scripted([None])), "")
        self.assertEqual(quiet_gate.load(c)[-1]["outcome"], quiet_gate.FAILED)
        off = self.after_campaign(after_pct=0.0)
        self.assertEqual(quiet_gate.check_after(off, "trace-1", scripted([[0.5, 0.5]])), "")
        self.assertEqual(len(quiet_gate.load(off)), 1)

    def test_the_summary_keeps_checks_after_out_of_the_gates(self):
        c = self.after_campaign()
        quiet_gate.check_after(c, "round 1 slot 0 attempt 1", scripted([[0.05, 0.05]], [[70000.0, 84000.0]]))
        quiet_gate.check_after(c, "round 1 slot 1 attempt 1", scripted([[0.05, 0.05]], [[70000.0, 70700.0]]))
        quiet_gate.check_after(c, "trace-2", scripted([None]))
        t = Clock()
        quiet_gate.wait_for_quiet(c, "round 1 slot 0 attempt 1 again", print,
                                  probe_fn=scripted([[0.05, 0.05]], [[70000.0, 70000.0]]), sleep=t.sleep,
                                  clock=t.clock)
        s = quiet_gate.summary(c)
        self.assertEqual((s["gates"], s["probes"], s["gates_that_waited"], s["noisy_by_slowdown"]), (2, 2, 0, 0))
        self.assertEqual((s["after_checks"], s["after_noisy"], s["after_probe_failed"],
                          s["after_noisy_slowed_median_pct"]), (3, 1, 1, 20.0))
        text = quiet_gate.paragraph(s)[0]
        self.assertIn("After each measured and traced run (`--quiet-gate-after 9`) one more probe: 1 of 3 said the "
                      "launch ran into a noisy spell", text)
        self.assertIn("(their slowest rank: 20.0 % slower, median); 1 probe(s) after a launch failed", text)

    def test_a_relaunch_is_gated_in_round_mode_too(self):
        c = self.after_campaign()
        probed = []
        original = quiet_gate.probe
        quiet_gate.probe = lambda campaign: probed.append(campaign) or quiet_gate.Probe([0.01, 0.01])
        self.addCleanup(setattr, quiet_gate, "probe", original)
        quiet_gate.gate_relaunch(c, "trace-3", print)
        self.assertEqual(quiet_gate.load(c)[-1]["label"], "trace-3 again")
        c.quiet_gate_pct = 0.0
        quiet_gate.gate_relaunch(c, "trace-4", print)
        self.assertEqual(len(probed), 1)


if __name__ == "__main__":
    unittest.main()
