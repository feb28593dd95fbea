"""Which of K traced runs the campaign models (--trace-runs): the one whose traced runtime, read
from the runtime timer's records, is closest to the median of the untraced reference runs; without
references the median traced run, the lower median for even K. Hand-made records, no MPI."""
import json
import os
import unittest

from campaign_testlib import temp_dir

from campaign import config, prepare, report


def write_records(campaign, k, per_rank_ns, reference=False):
    """runtime-<rank>.txt of traced run k (or of its untraced reference run), as
    libllamp_runtime_timer.so writes them."""
    runtime_dir = prepare.reference_run_dir(campaign, k) if reference else prepare.trace_run_dirs(campaign, k)[1]
    os.makedirs(runtime_dir, exist_ok=True)
    for rank, ns in enumerate(per_rank_ns):
        with open(os.path.join(runtime_dir, f"runtime-{rank}.txt"), "w") as f:
            f.write(f"llamp-runtime rank {rank} size {len(per_rank_ns)} runtime_ns {ns} "
                    f"init_end_ns 1000 finalize_start_ns {1000 + ns}\n")


class RuntimeRecordTest(unittest.TestCase):
    def test_in_run_core_probes_are_read_from_the_first_ranks_record(self):
        from campaign import runtime_records
        d = temp_dir(self)
        with open(os.path.join(d, "runtime-0.txt"), "w") as f:
            f.write("llamp-runtime rank 0 size 2 runtime_ns 50 init_end_ns 1000 finalize_start_ns 1050 "
                    "core_init_ns 27 core_finalize_ns 158\n")
        with open(os.path.join(d, "runtime-1.txt"), "w") as f:
            f.write("llamp-runtime rank 1 size 2 runtime_ns 60 init_end_ns 1000 finalize_start_ns 1060\n")
        self.assertEqual(runtime_records.read_run(d, 2), ([50, 60], 60))
        self.assertEqual(runtime_records.read_core_probes(d), {"init": 27, "finalize": 158})
        with open(os.path.join(d, "runtime-1.txt"), "w") as f:
            f.write("llamp-runtime rank 1 size 2 runtime_ns 60 init_end_ns 1000\n")
        with self.assertRaises(runtime_records.RecordError):
            runtime_records.read_run(d, 2)

    def test_probes_during_the_run_judge_it_too(self):
        from campaign import config as config_mod, cores, runtime_records
        d = temp_dir(self)
        line = "llamp-runtime rank 0 size 2 runtime_ns 50 init_end_ns 1000 finalize_start_ns 1050 " \
               "core_init_ns 27 core_finalize_ns 26 core_run_max_ns {} core_run_probes {}\n"
        with open(os.path.join(d, "runtime-0.txt"), "w") as f:
            f.write(line.format(-1, 0))  # no probe during the run was answered: nothing to judge
        self.assertEqual(runtime_records.read_core_probes(d), {"init": 27, "finalize": 26})
        with open(os.path.join(d, "runtime-0.txt"), "w") as f:
            f.write(line.format(158, 12))  # fast at both edges, apart in between
        probes = runtime_records.read_core_probes(d)
        self.assertEqual(probes, {"init": 27, "finalize": 26, "during": 158})
        c = config_mod.Campaign(out_dir=d, app=["a"], ranks=2, deltas_ns=[0.0], core_limit="off")
        guard = cores.Guard(c, "run", [0, 1])
        guard.limit = 73.0  # as `--core-limit auto` would have found on the VM
        guard.in_run(probes)
        self.assertTrue(guard.slow)
        self.assertEqual(guard.fields()["core_during_ns"], 158)
        self.assertIn("in the run 27 / 158 / 26", guard.reason())
        env = guard.environment({})
        self.assertEqual(env["LLAMP_CORE_PROBE_PERIOD_MS"], str(cores.DURING_PERIOD_MS))


class TraceChoiceTest(unittest.TestCase):
    def campaign(self, runtimes_ms):
        c = config.Campaign(out_dir=temp_dir(self), app=["a"], ranks=2, deltas_ns=[0.0],
                            trace_runs=len(runtimes_ms))
        for k, ms in enumerate(runtimes_ms, start=1):
            # The run's runtime is the slower rank's: rank 1 here.
            write_records(c, k, [int(ms * 1e6) - 5000, int(ms * 1e6)])
        return c

    def test_odd_count_keeps_the_median_run(self):
        c = self.campaign([192, 128, 150])
        chosen = prepare.representative_trace(c)
        self.assertEqual(chosen["kept_trace"], 3)
        self.assertEqual(chosen["traced_runtime_ns"], 150_000_000)
        self.assertEqual(chosen["traced_runtimes_ns"], [192_000_000, 128_000_000, 150_000_000])
        self.assertEqual(chosen["trace_dir"], c.path("trace-3"))

    def test_even_count_keeps_the_lower_median(self):
        c = self.campaign([190, 120, 160, 130])
        chosen = prepare.representative_trace(c)
        self.assertEqual(chosen["kept_trace"], 4)  # sorted 120, 130, 160, 190: the lower median is 130
        self.assertEqual(chosen["traced_runtime_ns"], 130_000_000)

    def test_single_run_and_ties(self):
        self.assertEqual(prepare.representative_trace(self.campaign([170]))["kept_trace"], 1)
        self.assertEqual(prepare.representative_trace(self.campaign([140, 140, 140]))["kept_trace"], 2)

    def test_with_references_keeps_the_traced_run_closest_to_their_median(self):
        # app_completions: most traced runs polled in step with their messages and ran fast; the
        # untraced ones did not. The one traced run that ran like them is the one to model.
        c = self.campaign([199.6, 221.6, 204.4, 197.6, 265.7])
        for k, ms in enumerate([262.0, 258.5, 290.1, 255.3, 263.9], start=1):
            write_records(c, k, [int(ms * 1e6), int(ms * 1e6) - 1000], reference=True)
        chosen = prepare.representative_trace(c)
        self.assertEqual(chosen["kept_trace"], 5)
        self.assertEqual(chosen["selection"], "closest to the untraced reference")
        self.assertEqual(chosen["reference_runtime_ns"], 262_000_000)
        self.assertEqual(len(chosen["reference_runtimes_ns"]), 5)
        with open(c.path("trace.done.json"), "w") as f:
            json.dump(chosen, f)
        text = report.markdown(c, report.build(c))
        self.assertIn("Kept trace-5, of 5 traced runs (0.19960, 0.22160, 0.20440, 0.19760, 0.26570 s) the closest "
                      "to the median of the untraced reference runs", text)
        self.assertIn("Tracing changed the runtime by -21.98 %", text)  # 204.4 against 262.0
        # A missing reference record only leaves it out of the median; ties go to the earlier trace.
        c = self.campaign([140, 160, 150])
        write_records(c, 1, [150_000_000, 150_000_000], reference=True)
        write_records(c, 3, [150_000_000, 150_000_000], reference=True)
        self.assertEqual(prepare.representative_trace(c)["kept_trace"], 3)
        c2 = self.campaign([145, 155])
        write_records(c2, 1, [150_000_000, 150_000_000], reference=True)
        self.assertEqual(prepare.representative_trace(c2)["kept_trace"], 1)

    def test_trace_target_counts_added_runs_and_says_whether_one_came_close(self):
        # Three planned traced runs, all fast; --trace-target 5 % added two (trace-4.done and
        # trace-5.done exist), and the fifth ran like the untraced references.
        c = self.campaign([190, 188, 195, 192, 258])
        c.trace_runs, c.trace_target_pct, c.max_trace_runs = 3, 5.0, 9
        for k in range(1, 6):
            write_records(c, k, [int(262e6), int(262e6)], reference=True)
            if k > 3:
                os.makedirs(prepare.trace_run_dirs(c, k)[0])
                open(prepare.trace_run_dirs(c, k)[0] + ".done", "w").close()
        self.assertEqual(prepare.traced_count(c), 5)
        chosen = prepare.representative_trace(c)
        self.assertEqual(chosen["kept_trace"], 5)
        self.assertTrue(prepare.close_enough(chosen, 5.0))
        self.assertFalse(prepare.close_enough(chosen, 1.0))  # 258 against 262: 1.5 %
        self.assertFalse(prepare.close_enough({"traced_runtime_ns": 258}, 5.0))  # no references
        # Nothing is launched once one is close enough (no tracer library is named here).
        prepare.trace_until_representative(c, log=lambda msg: None)
        self.assertEqual(prepare.traced_count(c), 5)
        with open(c.path("trace.done.json"), "w") as f:
            json.dump(chosen, f)
        self.assertIn("--trace-target 5 %: 2 traced run(s) added to the 3 planned, because none was that close "
                      "before.", report.markdown(c, report.build(c)))

    def test_missing_record_names_the_run(self):
        c = self.campaign([150, 120, 130])
        os.remove(os.path.join(prepare.trace_run_dirs(c, 2)[1], "runtime-1.txt"))
        with self.assertRaisesRegex(prepare.StepError, "traced run 2: .*trace-2-runtime.*1 of 2 ranks"):
            prepare.representative_trace(c)

    def test_finished_traces_are_not_redone(self):
        # Every trace has its records and its done mark: trace_application only picks the median,
        # so no MPI run (and no tracer library, which this campaign does not name) is needed.
        c = self.campaign([150, 180, 120])
        for k in (1, 2, 3):
            os.makedirs(prepare.trace_run_dirs(c, k)[0])
            open(prepare.trace_run_dirs(c, k)[0] + ".done", "w").close()
        self.assertEqual(prepare.trace_application(c, log=lambda msg: None), c.path("trace-1"))
        self.assertEqual(prepare.trace_location(c), c.path("trace-1"))

    def test_traced_runs_after_the_first_are_spread_over_the_measured_runs(self):
        c = config.Campaign(out_dir=temp_dir(self), app=["a"], ranks=2, deltas_ns=[0.0, 1e4, 2e4], reps=8,
                            trace_runs=3)
        c.schedule = list(range(24))  # only its length matters here
        self.assertEqual(prepare.interleaved_trace_slots(c), {8: [2], 16: [3]})
        c.trace_runs = 1
        self.assertEqual(prepare.interleaved_trace_slots(c), {})
        c.trace_runs, c.schedule = 4, list(range(2))  # more traces than room: some share a slot
        self.assertEqual(prepare.interleaved_trace_slots(c), {0: [2], 1: [3, 4]})

    def test_settling_an_interleaved_campaign_keeps_the_median_and_says_so(self):
        # Trace 1 is the median: the provisional graph stays (no llamp run needed).
        c = self.campaign([150, 180, 120])
        for k in (1, 2, 3):
            os.makedirs(prepare.trace_run_dirs(c, k)[0])
            open(prepare.trace_run_dirs(c, k)[0] + ".done", "w").close()
        prepare.settle_traces(c, log=lambda msg: None)
        with open(c.path("trace.done.json")) as f:
            done = json.load(f)
        self.assertEqual(done["kept_trace"], 1)
        self.assertTrue(done["interleaved"])
        self.assertIn("Trace 1 ran before the measured runs, the others evenly spread among them.",
                      report.markdown(c, report.build(c)))

    def test_report_lists_every_traced_runtime(self):
        c = self.campaign([192, 128, 150])
        with open(c.path("trace.done.json"), "w") as f:
            json.dump(prepare.representative_trace(c), f)
        result = report.build(c)
        self.assertEqual(result["traced_runtimes_ns"], [192_000_000, 128_000_000, 150_000_000])
        self.assertEqual(result["kept_trace"], 3)
        self.assertEqual(result["traced_runtime_ns"], 150_000_000)
        self.assertIn("Kept trace-3, the median of 3 traced runs: 0.19200, 0.12800, 0.15000 s.",
                      report.markdown(c, result))
        # sample std of 192, 128, 150 ms = 32.52 ms over a mean of 156.67 ms
        self.assertAlmostEqual(result["traced_runtime_cv"], 0.20756, places=4)
        self.assertIn("Their spread (CV 20.76 %) is noise the prediction inherits", report.markdown(c, result))


if __name__ == "__main__":
    unittest.main()
