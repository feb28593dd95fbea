"""--noisy-compute: a launch whose rank computed (outside MPI) more than PCT % longer than the same
rank's quick kept launches of its kind (the 10th percentile) is noisy-host. Here on hand-made timer
records, so each rule is seen alone: which launches set the reference, the limit, the kinds, the
records of an older
timer, and what report.json and report.md say (the real timer and real launches: test_runs'
NoisyComputeTest, runtime_timer_test's ComputationExcludesTheTimeInsideMpi)."""
import json
import os
import unittest

from campaign_testlib import temp_dir
from test_report import write_record
from test_rounds import analysed, traced

from campaign import compute_check, config, ensemble, report, runtime_records, schedule


def write_runtime(folder, computes_ns, runtime_ns=1_000_000_000):
    """The timer's records of one launch: rank r computed computes_ns[r] (None: an older timer's line)."""
    os.makedirs(folder, exist_ok=True)
    for rank, compute in enumerate(computes_ns):
        line = (f"llamp-runtime rank {rank} size {len(computes_ns)} runtime_ns {runtime_ns} init_end_ns 5 "
                f"finalize_start_ns {runtime_ns + 5}")
        if compute is not None:
            line += f" compute_ns {compute} mpi_calls 100"
        with open(os.path.join(folder, f"runtime-{rank}.txt"), "w") as f:
            f.write(line + "\n")


def campaign(test, pct=4.0):
    c = config.Campaign(out_dir=temp_dir(test), app=["app"], ranks=2, deltas_ns=[0.0, 10000.0], reps=2,
                        noisy_compute_pct=pct, schedule=schedule.make_schedule([0.0, 10000.0], 2, 1))
    c.save()
    return c


def measured(c, slot, attempt, status, computes_ns, delta_ns=0.0):
    write_record(c, slot, 0, delta_ns, attempt, status, 1e9)
    write_runtime(c.path("runs", f"slot-{slot:04d}-a{attempt}"), computes_ns)
    return c.path("runs", f"slot-{slot:04d}-a{attempt}")


class RecordTest(unittest.TestCase):
    def test_every_ranks_computation_is_read_and_an_older_record_has_none(self):
        d = temp_dir(self)
        write_runtime(d, [800_000_000, 780_000_000])
        self.assertEqual(runtime_records.read_compute(d), {0: 800_000_000, 1: 780_000_000})
        write_runtime(d, [None, None])
        self.assertEqual(runtime_records.read_compute(d), {})
        write_runtime(d, [-1, 780_000_000])  # rank 0's other threads called MPI: no computation known
        self.assertEqual(runtime_records.read_compute(d), {1: 780_000_000})
        self.assertEqual(runtime_records.read_run(d, 2)[1], 1_000_000_000)

    def test_a_line_with_a_dangling_key_is_rejected_with_its_file(self):
        d = temp_dir(self)
        with open(os.path.join(d, "runtime-0.txt"), "w") as f:
            f.write("llamp-runtime rank 0 size 1 runtime_ns 5 init_end_ns 1 finalize_start_ns 6 compute_ns\n")
        with self.assertRaisesRegex(runtime_records.RecordError, "runtime-0.txt:1: not a llamp-runtime record"):
            runtime_records.read_compute(d)


class CheckTest(unittest.TestCase):
    def test_a_rank_computing_beyond_the_limit_is_noisy_and_names_itself(self):
        c = campaign(self)
        measured(c, 0, 1, "ok", [800_000_000, 780_000_000])
        mine = measured(c, 1, 1, "ok", [820_000_000, 819_000_000])  # rank 1: +5.0 %
        why, slowed = compute_check.check(c, mine)
        self.assertAlmostEqual(slowed, 5.0)
        self.assertIn("rank 1 computed 5.0 % longer outside MPI than in the quick untraced launches "
                      "(819.0 ms against 780.0 ms; limit 4 %)", why)

    def test_within_the_limit_passes_and_says_by_how_much(self):
        c = campaign(self)
        measured(c, 0, 1, "ok", [800_000_000, 780_000_000])
        why, slowed = compute_check.check(c, measured(c, 1, 1, "ok", [824_000_000, 780_000_000]))
        self.assertEqual(why, "")
        self.assertAlmostEqual(slowed, 3.0)

    def test_the_first_launch_and_a_faster_one_pass(self):
        c = campaign(self)
        first = measured(c, 0, 1, "ok", [800_000_000, 780_000_000])
        self.assertEqual(compute_check.check(c, first), ("", 0.0))
        # faster than every kept launch: it is the new reference
        self.assertEqual(compute_check.check(c, measured(c, 1, 1, "ok", [700_000_000, 700_000_000])), ("", 0.0))

    def test_only_kept_launches_set_the_reference(self):
        c = campaign(self)
        measured(c, 0, 1, "ok", [800_000_000, 800_000_000])
        # a slow-cores attempt (ranks on two physical cores compute faster) and a noisy-host one
        measured(c, 0, 2, "slow-cores", [600_000_000, 600_000_000])
        measured(c, 0, 3, "noisy-host", [500_000_000, 500_000_000])
        self.assertEqual(compute_check.reference(c, compute_check.UNTRACED), {0: 800_000_000, 1: 800_000_000})
        # the reference runs before traced runs are untraced launches too
        write_runtime(c.path("trace-1-reference"), [790_000_000, 810_000_000])
        self.assertEqual(compute_check.reference(c, compute_check.UNTRACED), {0: 790_000_000, 1: 800_000_000})

    def test_the_reference_is_the_tenth_percentile_so_one_lucky_launch_moves_nothing(self):
        c = campaign(self)
        for slot, ns in enumerate([781, 806, 810, 812, 815, 818, 820, 825, 830, 835, 840, 844]):
            measured(c, slot, 1, "ok", [ns * 1_000_000, ns * 1_000_000])
        # 12 launches: the second shortest, not the lucky 781 ms
        self.assertEqual(compute_check.reference(c, compute_check.UNTRACED), {0: 806_000_000, 1: 806_000_000})
        self.assertEqual(compute_check.check(c, measured(c, 20, 1, "ok", [838_000_000, 830_000_000]))[0], "")

    def test_untraced_launches_are_compared_at_their_own_delta_l(self):
        # app_completions at 4 ranks (stop 62): its polling loops work while they wait, so a rank
        # computes more the longer its messages take; against the ΔL = 0 launches every run at
        # 50 us was noisy-host
        c = campaign(self)
        measured(c, 0, 1, "ok", [265_000_000, 265_000_000])
        write_runtime(c.path("trace-1-reference"), [266_000_000, 264_000_000])
        at_50 = measured(c, 1, 1, "ok", [1_093_000_000, 1_090_000_000], delta_ns=50000.0)
        self.assertEqual(compute_check.check(c, at_50, delta_ns=50000.0), ("", 0.0))
        # recorded as what the check then made it (runs.run_slot)
        slow = measured(c, 2, 1, "noisy-host", [1_093_000_000, 1_200_000_000], delta_ns=50000.0)
        why, slowed = compute_check.check(c, slow, delta_ns=50000.0)
        self.assertAlmostEqual(slowed, 100.0 * (1200 / 1090 - 1))
        self.assertIn("than in the quick untraced launches at ΔL 50.0 µs (1200.0 ms against 1090.0 ms", why)
        # ΔL = 0's reference holds the reference run and not the launches at 50 us
        self.assertEqual(compute_check.reference(c, compute_check.UNTRACED), {0: 265_000_000, 1: 264_000_000})
        # the campaign's end judges each ΔL against its own launches too: nothing is taken back
        self.assertEqual(compute_check.rejudge(c, log=lambda _: None), 0)

    def test_traced_runs_are_compared_with_traced_runs_only(self):
        c = campaign(self)
        measured(c, 0, 1, "ok", [800_000_000, 800_000_000])
        write_runtime(c.path("trace-1-runtime"), [880_000_000, 870_000_000])
        write_runtime(c.path("trace-2-runtime"), [890_000_000, 880_000_000])
        why, slowed = compute_check.check(c, c.path("trace-2-runtime"), compute_check.TRACED)
        self.assertEqual(why, "")
        self.assertAlmostEqual(slowed, 100 * (880 / 870 - 1))  # rank 1 is the slower
        self.assertIn("untraced launch", compute_check.check(c, c.path("trace-2-runtime"))[0])

    def test_off_or_without_records_nothing_is_judged(self):
        c = campaign(self, pct=0.0)
        measured(c, 0, 1, "ok", [800_000_000, 800_000_000])
        self.assertEqual(compute_check.check(c, measured(c, 1, 1, "ok", [990_000_000, 800_000_000])), ("", None))
        c = campaign(self)
        measured(c, 0, 1, "ok", [800_000_000, 800_000_000])
        self.assertEqual(compute_check.check(c, measured(c, 1, 1, "ok", [None, None])), ("", None))
        self.assertEqual(compute_check.check(c, c.path("no-such-folder")), ("", None))


class RejudgeTest(unittest.TestCase):
    """A campaign that began in a noisy spell judged its first launches against slow ones; at its end
    every kept launch is judged again against the campaign's reference."""

    def test_measured_runs_judged_against_a_slow_start_are_taken_back(self):
        c = campaign(self)
        slow = measured(c, 0, 1, "ok", [900_000_000, 1_159_000_000])  # passed: it was the first
        measured(c, 1, 1, "ok", [810_000_000, 814_000_000])
        measured(c, 2, 1, "ok", [820_000_000, 840_000_000])  # +3.2 %: stays
        logged = []
        self.assertEqual(compute_check.rejudge(c, logged.append), 1)
        from campaign import runs
        by_slot = {r["slot"]: r for r in runs.load_records(c)}
        self.assertEqual([by_slot[k]["status"] for k in (0, 1, 2)], ["noisy-host", "ok", "ok"])
        self.assertEqual(by_slot[0]["reason"], "in the run rank 1 computed 42.4 % longer outside MPI than in the quick "
                                               "untraced launches (1159.0 ms against 814.0 ms; limit 4 %) (judged again "
                                               "at the campaign's end)")
        self.assertFalse(runs.slot_done(runs.load_records(c), 0))  # run_local launches it again
        self.assertIn("1 accepted launch(es) computed more than 4 % longer", logged[0])
        self.assertEqual(compute_check.rejudge(c, logged.append), 0)  # nothing left to take back

    def test_a_slow_traced_or_reference_run_is_launched_again_with_its_pair(self):
        c = campaign(self)
        for k, traced, reference in ((1, 990_000_000, 800_000_000), (2, 880_000_000, 900_000_000),
                                     (3, 885_000_000, 805_000_000)):
            write_runtime(c.path(f"trace-{k}-runtime"), [traced, traced])
            write_runtime(c.path(f"trace-{k}-reference"), [reference, reference])
            open(c.path(f"trace-{k}.done"), "w").close()
        open(c.path("app.goal"), "w").close()
        self.assertEqual(compute_check.rejudge(c, lambda *_: None), 2)
        # traced run 1 computed 12.5 % longer than traced run 2; reference run 2 11.9 % longer than run 1's
        self.assertEqual([os.path.exists(c.path(f"trace-{k}.done")) for k in (1, 2, 3)], [False, False, True])
        self.assertFalse(os.path.exists(c.path("app.goal")))  # made again from the traces kept

    def test_off_takes_nothing_back(self):
        c = campaign(self, pct=0.0)
        measured(c, 0, 1, "ok", [900_000_000, 1_159_000_000])
        measured(c, 1, 1, "ok", [810_000_000, 814_000_000])
        self.assertEqual(compute_check.rejudge(c, lambda *_: None), 0)


def judged(c, slot, status, slowed_pct, reason=None):
    """A measured attempt as run_attempt leaves it once judged: its slowest rank's slowdown, and the
    reason of a noisy-host verdict (the computation's, "in the run ...", unless given)."""
    write_record(c, slot, 0, 0.0, 1, status, 1e9)
    path = c.path("runs", f"slot-{slot:04d}-a1", "record.json")
    with open(path) as f:
        run = json.load(f)
    run["compute_slowed_pct"] = slowed_pct
    if status == "noisy-host":
        run["reason"] = reason or f"in the run rank 0 computed {slowed_pct:.1f} % longer outside MPI"
    with open(path, "w") as f:
        json.dump(run, f)


def launched(c, slot, status, computes_ns, slowed_pct, stage="quick"):
    """A measured attempt with its timer records, as run_attempt leaves it once judged in `stage`."""
    folder = measured(c, slot, 1, status, computes_ns)
    path = os.path.join(folder, "record.json")
    with open(path) as f:
        run = json.load(f)
    run.update(compute_slowed_pct=slowed_pct, compute_stage=stage)
    if status == "noisy-host":
        run["reason"] = f"in the run rank 0 computed {slowed_pct:.1f} % longer outside MPI"
    with open(path, "w") as f:
        json.dump(run, f)
    return folder


class StagesTest(unittest.TestCase):
    """Where the ordinary launch computes more than PCT % longer than the quick ones (stop 60: halo3d
    on the 2-vCPU VM, 6-9 %; stop 59: the lent Xeon VM, 20-50 %), the quick stage rejects nearly
    everything: after more than 3 in 4 of at least 20 judged measured attempts the check compares
    with the median of the launches instead, and where even that rejects most, it switches off."""

    def ordinary_machine(self, c):
        """3 quick launches (800 ms), then 17 ordinary ones 7 % longer, which the quick stage rejected."""
        for slot in range(3):
            launched(c, slot, "ok", [800_000_000, 800_000_000], 0.0)
        for slot in range(3, 20):
            launched(c, slot, "noisy-host", [856_000_000, 850_000_000], 7.0)

    def test_it_widens_to_the_ordinary_launch_which_passes_and_a_spell_still_stands_out(self):
        c = campaign(self)
        self.ordinary_machine(c)
        logged = []
        why, slowed = compute_check.check(c, measured(c, 30, 1, "ok", [860_000_000, 850_000_000]), log=logged.append)
        self.assertEqual(why, "")  # against the median, 856 ms, not the quick 800 ms
        self.assertAlmostEqual(slowed, 100 * (860 / 856 - 1))
        self.assertEqual(compute_check.stage(c), compute_check.ORDINARY)
        self.assertEqual(compute_check.widened(c), {"judged": 20, "noisy_host": 17, "slowed_median_pct": 7.0})
        self.assertEqual(len(logged), 1)
        self.assertIn("--noisy-compute: widened: 17 of 20 measured attempts computed more than 4 % longer than the "
                      "quick launches (median 7.0 %)", logged[0])
        why, slowed = compute_check.check(c, measured(c, 31, 1, "ok", [1_000_000_000, 850_000_000]), log=self.fail)
        self.assertIn("rank 0 computed 16.8 % longer outside MPI than in the ordinary untraced launches "
                      "(1000.0 ms against 856.0 ms; limit 4 %)", why)
        s = compute_check.summary(c, [])
        self.assertEqual(s["widened"], compute_check.widened(c))
        self.assertIsNone(s["switched_off"])
        self.assertIn("**The check widened** after 17 of 20 measured attempts had been noisy-host by their "
                      "computation (median 7.0 % longer than the quick launches)", compute_check.paragraph(s)[0])

    def test_the_end_judges_again_against_the_ordinary_launch(self):
        c = campaign(self)
        self.ordinary_machine(c)
        compute_check.check(c, measured(c, 30, 1, "ok", [860_000_000, 850_000_000]), log=lambda *_: None)
        launched(c, 31, "ok", [990_000_000, 850_000_000], 1.0, "ordinary")  # passed against a slow start
        logged = []
        self.assertEqual(compute_check.rejudge(c, logged.append), 1)
        from campaign import runs
        taken = next(r for r in runs.load_records(c) if r["slot"] == 31)
        self.assertEqual((taken["status"], taken["compute_stage"]), ("noisy-host", "ordinary"))
        self.assertIn("longer than the campaign's ordinary launches", logged[0])

    def test_a_slots_noisy_host_attempts_of_a_stage_left_behind_no_longer_count(self):
        c = campaign(self)
        quick_noisy = {"status": "noisy-host", "reason": "in the run rank 0 computed 7.0 % longer"}
        probe_noisy = {"status": "noisy-host", "reason": "after the run the CPUs lost 20 %"}
        self.assertTrue(compute_check.counts_against_retries(c, quick_noisy))  # no stage: an older record, QUICK
        self.ordinary_machine(c)
        compute_check.check(c, measured(c, 30, 1, "ok", [860_000_000, 850_000_000]), log=lambda *_: None)
        self.assertFalse(compute_check.counts_against_retries(c, quick_noisy))
        self.assertTrue(compute_check.counts_against_retries(c, probe_noisy))
        self.assertTrue(compute_check.counts_against_retries(c, dict(quick_noisy, compute_stage="ordinary")))
        self.assertFalse(compute_check.counts_against_retries(c, {"status": "ok"}))

    def test_where_even_the_ordinary_launch_rejects_most_it_switches_off(self):
        c = campaign(self)
        self.ordinary_machine(c)
        compute_check.check(c, measured(c, 30, 1, "ok", [860_000_000, 850_000_000]), log=lambda *_: None)
        for slot in range(40, 56):  # the host drifted: 16 of 20 judged since, each 12 % above the median
            launched(c, slot, "noisy-host", [960_000_000, 850_000_000], 12.0, "ordinary")
        for slot in range(56, 60):
            launched(c, slot, "ok", [870_000_000, 850_000_000], 1.0, "ordinary")
        logged = []
        slow = measured(c, 61, 1, "ok", [1_100_000_000, 850_000_000])
        why, slowed = compute_check.check(c, slow, log=logged.append)
        self.assertEqual(why, "")
        self.assertGreater(slowed, 4.0)
        self.assertEqual(compute_check.stage(c), compute_check.OFF)
        self.assertEqual(compute_check.switched_off(c), {"judged": 20, "noisy_host": 16, "slowed_median_pct": 12.0})
        self.assertIn("--noisy-compute: switched off: 16 of 20 measured attempts computed more than 4 % longer than "
                      "the ordinary launches (median 12.0 %), also since it widened", logged[0])
        # for good: the traced kind too, the end's second look, no second log line, no retry bound
        self.assertEqual(compute_check.check(c, slow, compute_check.TRACED, logged.append)[0], "")
        self.assertEqual(compute_check.rejudge(c, logged.append), 0)
        self.assertEqual(len(logged), 1)
        self.assertFalse(compute_check.counts_against_retries(
            c, {"status": "noisy-host", "reason": "after the run the CPUs lost 20 %"}))
        self.assertIn("**The check switched itself off** after 16 of 20 measured attempts since it widened",
                      compute_check.paragraph(compute_check.summary(c, []))[0])

    def test_not_before_twenty_judged_nor_at_three_in_four(self):
        c = campaign(self)
        for slot in range(15):
            judged(c, slot, "noisy-host", 25.0)
        for slot in range(15, 19):
            judged(c, slot, "ok", 2.0)
        measured(c, 900, 1, "ok", [800_000_000, 800_000_000])  # the quick launch: the reference
        slow = measured(c, 901, 1, "ok", [1_000_000_000, 800_000_000])  # +25 %
        self.assertNotEqual(compute_check.check(c, slow, log=self.fail)[0], "")  # 15 of 19 judged
        # a probe's verdict after the run is no computation's: 15 of 20, exactly 3 in 4, still quick
        judged(c, 19, "noisy-host", 1.0, reason="after the run the CPUs lost 20 %")
        self.assertNotEqual(compute_check.check(c, slow, log=self.fail)[0], "")
        self.assertEqual(compute_check.stage(c), compute_check.QUICK)
        judged(c, 20, "noisy-host", 25.0)  # 16 of 21: more than 3 in 4
        compute_check.check(c, slow, log=lambda *_: None)
        self.assertEqual(compute_check.widened(c)["noisy_host"], 16)


class SummaryTest(unittest.TestCase):
    def test_counts_the_runs_rejected_in_the_run_and_the_accepted_slowdowns(self):
        c = campaign(self)
        records = [{"status": "ok", "compute_slowed_pct": x} for x in (0.0, 1.0, 2.0, 3.5)]
        records += [{"status": "noisy-host", "reason": "in the run rank 0 computed 9.0 % longer", "compute_slowed_pct": 9.0},
                    {"status": "noisy-host", "reason": "after the run the CPUs lost 20 %"},
                    {"status": "failed", "reason": "exit code 3"}]
        s = compute_check.summary(c, records)
        self.assertEqual(s, {"limit_pct": 4.0, "noisy_host": 1, "judged": 4, "accepted_slowed_median_pct": 1.5,
                             "accepted_slowed_max_pct": 3.5, "widened": None, "switched_off": None})
        text = compute_check.paragraph(s)[0]
        self.assertIn("1 measured attempt(s) had a rank compute more than 4 % longer", text)
        self.assertIn("The 4 accepted runs' slowest ranks computed 1.5 % (median) and at most 3.5 %", text)
        self.assertIsNone(compute_check.summary(campaign(self, pct=0.0), records))
        self.assertEqual(compute_check.paragraph(None), [])


class LeftOutOfTheMeanTest(unittest.TestCase):
    """A traced run the host slowed and every relaunch of which was noisy too is kept
    (prepare._probed_launch: table AG31's traced run 7 computed 32 % longer than the quick traced
    runs, 0.96 s against 0.71-0.78 s); the mean prediction leaves it out and says so."""

    def campaign(self):
        c = campaign(self)
        c.trace_weights = "equal"
        c.save()
        for name, value in (("params.json", {"L_ns": 0.0}), ("trace.done.json", {"kept_trace": 1})):
            with open(c.path(name), "w") as f:
                json.dump(value, f)
        return c

    def traced_run(self, c, k, computes_ns, t0_ns):
        traced(c, k)
        write_runtime(c.path(f"trace-{k}-runtime"), computes_ns)
        analysed(c, k, t0_ns, 1000.0)

    def test_a_slowed_traced_run_is_left_out_of_the_mean_and_named(self):
        c = self.campaign()
        self.traced_run(c, 1, [683_000_000, 679_000_000], 0.74e9)
        self.traced_run(c, 2, [687_000_000, 698_000_000], 0.73e9)
        self.traced_run(c, 3, [758_000_000, 898_000_000], 0.96e9)
        ks, left_out = ensemble.averaged_traces(c)
        self.assertEqual(ks, [1, 2])
        self.assertEqual(list(left_out), [3])
        self.assertIn("rank 1 computed 32.3 % longer outside MPI than in the quick traced launches", left_out[3])
        logged = []
        ensemble.analyze(c, logged.append)
        with open(c.path(ensemble.MEAN_NAME)) as f:
            mean = json.load(f)
        self.assertEqual(mean["traces"], [1, 2])
        self.assertAlmostEqual(mean["runtime_ns"], 0.735e9)  # 0.74 and 0.73 s: not 0.81 s with the third
        self.assertEqual(list(mean["left_out"]), ["3"])
        self.assertIn("leaving out trace-3 (slowed by the host)", logged[-1])
        # report.md names it beside the members
        text = report._prediction_paragraph(
            {"per_trace_prediction": {"traces": [{"trace": 1, "rrmse": 0.01}, {"trace": 2, "rrmse": 0.02}],
                                      "trace_weights": "equal", "left_out": mean["left_out"]}})[0]
        self.assertIn("Left out of the mean, slowed by the host (kept only because every relaunch was noisy too): "
                      "trace-3: rank 1 computed 32.3 %", text)

    def test_all_count_with_the_check_off_or_fewer_than_two_others(self):
        c = self.campaign()
        self.traced_run(c, 1, [683_000_000, 679_000_000], 0.74e9)
        self.traced_run(c, 2, [758_000_000, 898_000_000], 0.96e9)
        self.traced_run(c, 3, [760_000_000, 890_000_000], 0.95e9)
        self.assertEqual(ensemble.averaged_traces(c), ([1, 2, 3], {}))  # one clean run: no mean of clean ones
        self.traced_run(c, 4, [690_000_000, 680_000_000], 0.73e9)
        self.assertEqual(ensemble.averaged_traces(c)[0], [1, 4])
        c.noisy_compute_pct = 0.0
        self.assertEqual(ensemble.averaged_traces(c), ([1, 2, 3, 4], {}))


if __name__ == "__main__":
    unittest.main()
