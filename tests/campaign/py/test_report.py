"""Report arithmetic on a hand-made campaign folder: RMSE/RRMSE over per-ΔL means as in paper 000
(Table II), failed and timed-out attempts excluded, predicted values read exactly from the
analyzer's piecewise-linear curve at L0 + ΔL, measured tolerance interpolated."""
import json
import math
import os
import unittest

from campaign_testlib import temp_dir

from campaign import config, ensemble, report, schedule, stats


def write_record(c, slot, rnd, delta, attempt, status, runtime_ns):
    d = c.path("runs", f"slot-{slot:04d}-a{attempt}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "record.json"), "w") as f:
        json.dump({"slot": slot, "round": rnd, "delta_ns": delta, "attempt": attempt, "status": status,
                   "exit_code": 0 if status == "ok" else 3, "runtime_ns": runtime_ns, "rank_runtimes_ns": None,
                   "wall_s": 1.0, "started_unix": 0, "reason": "" if status == "ok" else "test",
                   "host": "h", "directory": os.path.relpath(d, c.out_dir)}, f)


def hand_made_campaign(test):
    out = temp_dir(test)
    deltas = [0.0, 10000.0, 20000.0]
    c = config.Campaign(out_dir=out, app=["app"], ranks=2, deltas_ns=deltas, reps=2,
                        schedule=schedule.make_schedule(deltas, 2, 1))
    c.save()
    # Measured: ΔL 0 -> 1.00, 1.02 s; 10 µs -> 1.05, 1.07 s (+ a failure and a timeout that must
    # not count); 20 µs -> 1.10, 1.14 s.
    by_delta = {0.0: [1.00e9, 1.02e9], 10000.0: [1.05e9, 1.07e9], 20000.0: [1.10e9, 1.14e9]}
    for s in c.schedule:
        write_record(c, s.slot, s.round, s.delta_ns, 1, "ok", by_delta[s.delta_ns][s.round])
    ten = next(s for s in c.schedule if s.delta_ns == 10000.0)
    write_record(c, ten.slot, ten.round, 10000.0, 2, "failed", 9.99e9)
    write_record(c, ten.slot, ten.round, 10000.0, 3, "timeout", None)
    # Predicted (L0 = 2 µs): T = 1.0 s + 5000 ΔL up to ΔL = 15 µs, slope 8000 beyond.
    analysis = {"format": "llamp-analysis", "version": 1, "latency_variable": "L", "L0_ns": 2000.0,
                "runtime_ns": 1.0e9, "lambda_L": 5000.0, "rho_L": 5000.0 * 2000 / 1.0e9,
                "critical_latencies_ns": [17000.0],
                "curve": [{"L_begin_ns": 0.0, "L_end_ns": 17000.0, "T_begin_ns": 0.99e9,
                           "T_end_ns": 1.075e9, "lambda_L": 5000.0},
                          {"L_begin_ns": 17000.0, "L_end_ns": 22000.0, "T_begin_ns": 1.075e9,
                           "T_end_ns": 1.115e9, "lambda_L": 8000.0}],
                "tolerance": [{"percent": 1.0, "max_L_ns": 4000.0}, {"percent": 2.0, "max_L_ns": 6000.0},
                              {"percent": 5.0, "max_L_ns": 12000.0}]}
    with open(c.path("analysis.json"), "w") as f:
        json.dump(analysis, f)
    return c


class ReportTest(unittest.TestCase):
    def test_rrmse_over_per_delta_means(self):
        c = hand_made_campaign(self)
        r = report.build(c)
        # No noise recorded: the campaign is judged by the LogGPS prediction.
        self.assertEqual(r["judged"]["prediction"], "LogGPS alone")
        self.assertEqual((r["judged"]["rrmse"], r["judged"]["rrmse_beyond_noise"]), (r["rrmse"], r["rrmse_beyond_noise"]))
        rows = {row["delta_ns"]: row for row in r["per_delta"]}
        self.assertAlmostEqual(rows[0.0]["mean_ns"], 1.01e9)
        self.assertAlmostEqual(rows[10000.0]["mean_ns"], 1.06e9)  # the failed 9.99 s is not in it
        self.assertEqual(rows[10000.0]["runs_ok"], 2)
        self.assertEqual(rows[10000.0]["attempts"], 4)
        self.assertEqual(rows[10000.0]["failed"], 1)
        self.assertEqual(rows[10000.0]["timed_out"], 1)
        self.assertAlmostEqual(rows[0.0]["predicted_ns"], 1.0e9)
        self.assertAlmostEqual(rows[10000.0]["predicted_ns"], 1.05e9)
        self.assertAlmostEqual(rows[20000.0]["predicted_ns"], 1.115e9)  # across the breakpoint
        self.assertEqual(rows[20000.0]["lambda_L"], 8000.0)
        # errors 0.01, 0.01, 0.005 s
        rmse = math.sqrt((0.01e9 ** 2 + 0.01e9 ** 2 + 0.005e9 ** 2) / 3)
        self.assertAlmostEqual(r["rmse_ns"], rmse, delta=1)
        self.assertAlmostEqual(r["rrmse"], rmse / ((1.01e9 + 1.06e9 + 1.12e9) / 3), places=9)
        self.assertEqual(len(r["failures"]), 2)
        self.assertAlmostEqual(r["mean_error_ns"], (0.01e9 + 0.01e9 + 0.005e9) / 3, delta=1)
        # slopes over ΔL 0, 10, 20 µs: measured means 1.01, 1.06, 1.12 s -> 5500; predicted 1.0,
        # 1.05, 1.115 s -> 5750
        self.assertAlmostEqual(r["response"]["measured_slope"], 5500.0, places=6)
        self.assertAlmostEqual(r["response"]["predicted_slope"], 5750.0, places=6)
        # Its standard error over the six runs: fitted line 1.00833 s + 5500 ΔL, residuals -8.33,
        # +11.67, -13.33, +6.67, -18.33, +21.67 ms; SSR 1.2333e-3 s² over 4 degrees of freedom,
        # over Sxx = 4e-10 s² -> sqrt(7.708e5) = 878.0.
        self.assertAlmostEqual(r["response"]["measured_slope_se"], 877.97, places=1)
        self.assertIn("5500.0 ± 878.0 (standard error from the spread of the 6 runs", report.markdown(c, r))
        self.assertEqual(r["slots_without_success"], [])
        # Noise floor: two runs per ΔL, 0.02, 0.02 and 0.04 s apart: sample std 0.01414, 0.01414,
        # 0.02828 s; std²/n = 1e-4, 1e-4, 4e-4 s²; sqrt(mean) = 0.01414 s over a mean of 1.0633 s.
        floor = math.sqrt((1e-4 + 1e-4 + 4e-4) / 3) * 1e9 / ((1.01e9 + 1.06e9 + 1.12e9) / 3)
        self.assertAlmostEqual(r["rrmse_noise_floor"], floor, places=9)
        self.assertIn("Noise floor", report.markdown(c, r))

    def test_error_beyond_the_noise_floors(self):
        # 5 % against floors of 3 % and 0 %: √(25 − 9) = 4 %; floors above the error leave nothing.
        self.assertAlmostEqual(stats.beyond_noise(0.05, 0.03, 0.0), 0.04)
        self.assertAlmostEqual(stats.beyond_noise(0.05, 0.03, 0.04), 0.0)
        self.assertEqual(stats.beyond_noise(0.01, 0.02), 0.0)

    def test_slope_standard_error_on_a_hand_made_table(self):
        # Two runs at x = 0 and two at x = 1, each pair 2 apart: slope 1, residuals ±1, SSR 4 over
        # 2 degrees of freedom and Sxx 1 -> sqrt(2). A perfect line has none; two points have none.
        self.assertAlmostEqual(stats.slope_standard_error([0, 0, 1, 1], [0, 2, 1, 3]), math.sqrt(2))
        self.assertAlmostEqual(stats.slope_standard_error([0, 1, 2], [1, 3, 5]), 0.0)
        self.assertIsNone(stats.slope_standard_error([0, 1], [1, 3]))

    def test_second_analysis_with_lags_at_their_caps(self):
        c = hand_made_campaign(self)
        self.assertIsNone(report.build(c)["poll_lags_at_cap"])  # a graph without polling lags
        # The same curve 30 ms higher everywhere: measured means 1.01, 1.06, 1.12 s against 1.03,
        # 1.08, 1.145 s.
        with open(c.path("analysis.json")) as f:
            capped = json.load(f)
        capped["runtime_ns"] += 30e6
        for seg in capped["curve"]:
            seg["T_begin_ns"] += 30e6
            seg["T_end_ns"] += 30e6
        with open(c.path("analysis-cap.json"), "w") as f:
            json.dump(capped, f)
        r = report.build(c)
        errors = [0.02e9, 0.02e9, 0.025e9]
        rmse = math.sqrt(sum(e * e for e in errors) / 3)
        self.assertAlmostEqual(r["poll_lags_at_cap"]["rrmse"], rmse / ((1.01e9 + 1.06e9 + 1.12e9) / 3), places=9)
        self.assertAlmostEqual(r["poll_lags_at_cap"]["runtime_at_L0_ns"], 1.03e9)
        self.assertIn("With the polling lags at their caps instead", report.markdown(c, r))

    def test_prediction_with_the_machine_noise(self):
        c = hand_made_campaign(self)
        self.assertIsNone(report.build(c)["with_noise"])  # no analysis-noise.json
        # The mean of the analyzer's noisy samples (T_model is its own T at L0 + ΔL, which may differ
        # from the main curve in a ramp; only their difference is added to the main prediction):
        # +4, +6, +8 ms. Their median, +1 ms everywhere, only in rrmse_other_statistic.
        points = [{"L_ns": 2000.0 + d, "T_model_ns": 5e8, "T_noise_mean_ns": 5e8 + added, "T_noise_median_ns": 5.01e8}
                  for d, added in ((0.0, 4e6), (10000.0, 6e6), (20000.0, 8e6))]
        with open(c.path("analysis-noise.json"), "w") as f:
            json.dump({"noise": {"files": [c.path("noise-1.json"), c.path("noise-2.json")], "samples": 32,
                                 "lanes": [{"lane": 0, "fraction": 0.012}, {"lane": 1, "fraction": 0.02}],
                                 "points": points}}, f)
        r = report.build(c)
        rows = {row["delta_ns"]: row for row in r["per_delta"]}
        self.assertAlmostEqual(rows[10000.0]["predicted_noise_ns"], 1.05e9 + 6e6)
        self.assertAlmostEqual(rows[20000.0]["relative_error_noise"], (1.12e9 - 1.123e9) / 1.12e9)
        # errors 0.01 - 0.004, 0.01 - 0.006, 0.005 - 0.008 s
        errors = [0.006e9, 0.004e9, -0.003e9]
        rmse = math.sqrt(sum(e * e for e in errors) / 3)
        n = r["with_noise"]
        self.assertAlmostEqual(n["rrmse"], rmse / ((1.01e9 + 1.06e9 + 1.12e9) / 3), places=9)
        self.assertAlmostEqual(n["mean_error_ns"], sum(errors) / 3, delta=1)
        self.assertAlmostEqual(n["predicted_slope"], 5750.0 + 200.0, places=6)
        self.assertEqual(n["files"], ["noise-1.json", "noise-2.json"])
        self.assertEqual(n["statistic"], "mean")
        # with the median: errors 0.01 - 0.001, 0.01 - 0.001, 0.005 - 0.001 s
        median_rmse = math.sqrt((0.009e9 ** 2 * 2 + 0.004e9 ** 2) / 3)
        self.assertEqual(n["rrmse_other_statistic"]["statistic"], "median")
        self.assertAlmostEqual(n["rrmse_other_statistic"]["rrmse"], median_rmse / ((1.01e9 + 1.06e9 + 1.12e9) / 3),
                               places=9)
        # The campaign is judged by the prediction with noise; LogGPS alone stays in `rrmse`.
        judged = r["judged"]
        self.assertEqual(judged["prediction"], "with the machine's noise")
        self.assertEqual(judged["rrmse"], n["rrmse"])
        self.assertEqual(judged["mean_error_ns"], n["mean_error_ns"])
        self.assertAlmostEqual(judged["rrmse_beyond_noise"],
                               math.sqrt(max(0.0, n["rrmse"] ** 2 - r["rrmse_noise_floor"] ** 2)), places=12)
        self.assertNotEqual(r["rrmse"], n["rrmse"])
        text = report.markdown(c, r)
        self.assertTrue(text.split("\n")[2].startswith(
            f"**RRMSE {100 * n['rrmse']:.2f} %**, the prediction with this machine's noise"), text.split("\n")[2])
        self.assertIn(f"LogGPS alone: **RRMSE {100 * r['rrmse']:.2f} %**", text)
        self.assertIn(f"**With this machine's noise: RRMSE {100 * n['rrmse']:.2f} %**", text)
        self.assertIn("lost 1.20–2.00 % of their time", text)
        self.assertIn("| with noise [s] | error |", text)
        report.write_csvs(c, r)
        with open(c.path("summary.csv")) as f:
            header = f.readline()
        self.assertIn("predicted_noise_ns,relative_error_noise", header)
        self.assertNotIn("resume cost", text)  # the recordings timed none
        self.assertNotIn("resume_extra_at_100us_ns", n)
        self.assertIn(f"the mean of 32 phases, analysis-noise.json; with their median RRMSE "
                      f"{100 * n['rrmse_other_statistic']['rrmse']:.2f} %", text)

        # --noise-statistic median (llamp-campaign report DIR --noise-statistic median): the two swap
        c.noise_statistic = "median"
        m = report.build(c)["with_noise"]
        self.assertEqual(m["statistic"], "median")
        self.assertAlmostEqual(m["rrmse"], n["rrmse_other_statistic"]["rrmse"], places=12)
        self.assertAlmostEqual(m["rrmse_other_statistic"]["rrmse"], n["rrmse"], places=12)

    def test_the_replays_terms_one_at_a_time(self):
        c = hand_made_campaign(self)
        files = [c.path("noise-1.json")]

        def write(name, terms, added):
            points = [{"L_ns": 2000.0 + d, "T_model_ns": 5e8, "T_noise_mean_ns": 5e8 + a, "T_noise_median_ns": 5e8}
                      for d, a in zip((0.0, 10000.0, 20000.0), added)]
            with open(c.path(name), "w") as f:
                json.dump({"noise": {"files": files, "samples": 8, "terms": terms,
                                     "lanes": [{"lane": 0, "fraction": 0.01}], "points": points}}, f)

        write("analysis-noise.json", ["detours", "resume", "following"], (4e6, 6e6, 8e6))
        write("analysis-noise-detours.json", ["detours"], (1e6, 1.5e6, 2e6))
        self.assertNotIn("term_steps", report.build(c)["with_noise"])  # a step missing: none reported
        write("analysis-noise-resume.json", ["detours", "resume"], (2e6, 3e6, 4e6))
        r = report.build(c)
        steps = r["with_noise"]["term_steps"]
        self.assertEqual([s["terms"] for s in steps],
                         [["detours"], ["detours", "resume"], ["detours", "resume", "following"]])
        # Predicted 1.000, 1.050, 1.115 s without noise against 1.01, 1.06, 1.12 measured.
        mean = (1.01e9 + 1.06e9 + 1.12e9) / 3
        for step, added in zip(steps, ((1e6, 1.5e6, 2e6), (2e6, 3e6, 4e6), (4e6, 6e6, 8e6))):
            errors = [1.01e9 - 1.0e9 - added[0], 1.06e9 - 1.05e9 - added[1], 1.12e9 - 1.115e9 - added[2]]
            self.assertAlmostEqual(step["rrmse"], math.sqrt(sum(e * e for e in errors) / 3) / mean, places=9)
        # Three evenly spaced ΔL: the fitted slope is (last - first) / 20 µs, 5750 without noise.
        self.assertEqual([round(s["predicted_slope"], 6) for s in steps], [5800.0, 5850.0, 5950.0])
        self.assertEqual(steps[-1]["rrmse"], r["with_noise"]["rrmse"])
        text = report.markdown(c, r)
        self.assertIn(f"The replay's terms one at a time (`llamp analyze --noise-terms`, analysis-noise-detours.json "
                      f"and analysis-noise-resume.json): the detours alone {100 * steps[0]['rrmse']:.2f} %, response "
                      f"5800.0; + the resume block {100 * steps[1]['rrmse']:.2f} %, response 5850.0; + the following "
                      f"work {100 * steps[2]['rrmse']:.2f} %, response 5950.0; measured response", text)
        # A step that replayed other recordings (an older analysis) is not reported.
        files = [c.path("noise-2.json")]
        write("analysis-noise-resume.json", ["detours", "resume"], (2e6, 3e6, 4e6))
        self.assertNotIn("term_steps", report.build(c)["with_noise"])
        self.assertNotIn("The replay's terms one at a time", report.markdown(c, report.build(c)))

    def test_resume_cost_of_the_noise_recordings_is_reported(self):
        c = hand_made_campaign(self)
        points = [{"L_ns": 2000.0 + d, "T_model_ns": 5e8, "T_noise_mean_ns": 5e8 + 1e6, "T_noise_median_ns": 5e8}
                  for d in (0.0, 10000.0, 20000.0)]
        # lane 0: 500 ns extra after 30 µs, 1500 after 300 µs: 833.3 at 100 µs; lane 1 held at 400
        lanes = [{"lane": 0, "fraction": 0.01, "resume_extra_ns": [[0, 0], [30000, 500], [300000, 1500]]},
                 {"lane": 1, "fraction": 0.01, "resume_extra_ns": [[0, 0], [50000, 400]]}]
        with open(c.path("analysis-noise.json"), "w") as f:
            json.dump({"noise": {"files": [c.path("noise-1.json")], "samples": 8, "lanes": lanes,
                                 "points": points}}, f)
        r = report.build(c)
        extra = r["with_noise"]["resume_extra_at_100us_ns"]
        self.assertAlmostEqual(extra[0], 500 + 1000 * 70000 / 270000)
        self.assertAlmostEqual(extra[1], 400)
        self.assertIn("ran 400–759 ns longer after a 100 µs spin than hot)", report.markdown(c, r))
        self.assertNotIn("following_slowdown_at_100us", r["with_noise"])  # recordings without following work

        # With the work timed after the block: its slowdown at 100 µs per lane, in the sentence too.
        lanes[0]["resume_following"] = {"hot_ns": 2000.0, "slowdown": [[0, 0], [50000, 0.2], [150000, 0.6]]}
        lanes[1]["resume_following"] = {"hot_ns": 2400.0, "slowdown": [[0, 0], [100000, 0.45]]}
        with open(c.path("analysis-noise.json"), "w") as f:
            json.dump({"noise": {"files": [c.path("noise-1.json")], "samples": 8, "lanes": lanes,
                                 "points": points}}, f)
        r = report.build(c)
        self.assertEqual([round(s, 6) for s in r["with_noise"]["following_slowdown_at_100us"]], [0.4, 0.45])
        self.assertIn("runs slower by as much as the other MPI calls timed after the block did, 40–45 % after a "
                      "100 µs spin", report.markdown(c, r))

    def test_throughput_slices_of_the_noise_recordings(self):
        c = hand_made_campaign(self)
        self.assertIsNone(report.build(c)["throughput"])  # no recording
        c.noise_runs = 2
        rank = {"rank": 0, "detours": []}
        with open(c.path("noise-1.json"), "w") as f:  # recorded without throughput slices
            json.dump({"format": "llamp-noise", "version": 1, "duration_ns": 1, "threshold_ns": 1, "ranks": [rank]}, f)
        self.assertIsNone(report.build(c)["throughput"])
        slices = [{"slices": 100, "base_ns": 100, "median_ns": 110, "mean_ns": 150, "slow_fraction": 0.5},
                  {"slices": 100, "base_ns": 200, "median_ns": 200, "mean_ns": 220, "slow_fraction": 0.05}]
        with open(c.path("noise-2.json"), "w") as f:
            json.dump({"format": "llamp-noise", "version": 1, "duration_ns": 1, "threshold_ns": 1,
                       "throughput_duration_ns": 1,
                       "ranks": [dict(rank, throughput=slices[0]), dict(rank, rank=1, throughput=slices[1])]}, f)
        r = report.build(c)
        t = r["throughput"]
        self.assertEqual([x["file"] for x in t["recordings"]], ["noise-2.json"])
        self.assertEqual(t["slow_fraction_range"], [0.05, 0.5])
        self.assertAlmostEqual(t["mean_over_fast_range"][0], 1.1)
        self.assertAlmostEqual(t["mean_over_fast_range"][1], 1.5)
        self.assertIn("took at least 1.3× its fast time in 5.0–50.0 % of its slices", report.markdown(c, r))

    def test_tolerances(self):
        c = hand_made_campaign(self)
        t = {row["percent"]: row for row in report.build(c)["tolerance"]}
        # measured 1 %: bound 1.0201 s between 1.01 (0 µs) and 1.06 (10 µs) -> 2.02 µs
        self.assertAlmostEqual(t[1.0]["measured_delta_ns"], 2020.0, places=6)
        self.assertTrue(t[1.0]["measured_reached_in_range"])
        # predicted 1 %: the analyzer's max L 4 µs minus L0 2 µs
        self.assertAlmostEqual(t[1.0]["predicted_delta_ns"], 2000.0)
        self.assertEqual(t[1.0]["predicted_source"], "llamp analyze --tolerance")

    def test_files_written(self):
        c = hand_made_campaign(self)
        report.write(c, log=lambda m: None)
        for name in ("report.md", "report.json", "runs.csv", "summary.csv", "measured.csv", "campaign.png"):
            self.assertTrue(os.path.getsize(c.path(name)) > 0, name)
        with open(c.path("runs.csv")) as f:
            self.assertEqual(len(f.readlines()), 1 + 6 + 2)  # header, 6 ok, failed + timeout
        with open(c.path("report.md")) as f:
            text = f.read()
        self.assertIn("RRMSE 0.81 %", text)
        self.assertIn("excluded from every mean", text)
        # How every run was launched (pinning, environment), for a reviewer to see.
        launch = f"{' '.join(c.mpiexec)} -n 2 APP"
        self.assertIn(launch, text)
        with open(c.path("report.json")) as f:
            self.assertEqual(json.load(f)["launcher"], c.mpiexec)

    def test_note_when_threaded_ranks_share_one_core(self):
        c = hand_made_campaign(self)
        trace = c.path("trace-1")
        os.makedirs(trace)
        with open(os.path.join(trace, "meta.json"), "w") as f:
            json.dump({"format": "llamp-trace", "ranks": 2, "thread_level": "MPI_THREAD_MULTIPLE"}, f)
        with open(c.path("trace.done.json"), "w") as f:
            json.dump({"trace_dir": trace, "kept_trace": 1, "traced_runtime_ns": 1.0e9}, f)
        for launcher, noted in ((["mpiexec", "-bind-to", "core"], True), (["mpiexec", "-bind-to", "core:3"], False),
                                (["mpiexec"], False)):
            c.mpiexec = launcher
            r = report.build(c)
            self.assertEqual(r["threaded_ranks_on_one_core"], noted, launcher)
            self.assertEqual("threads shared that core" in report.markdown(c, r), noted, launcher)

    def test_tracer_writes_during_the_traced_runs_are_reported(self):
        c = hand_made_campaign(self)

        def traced_run(k, per_rank):
            trace = c.path(f"trace-{k}")
            os.makedirs(trace)
            for rank, cost in enumerate(per_rank):
                with open(os.path.join(trace, f"tracer-cost-{rank:05d}.json"), "w") as f:
                    json.dump(dict({"format": "llamp-tracer-cost", "rank": rank, "samples": 5, "encode_ns": 30.0,
                                    "record_ns": {}}, **cost), f)

        traced_run(1, [{"blocks_written_during_run": 0, "write_cpu_ns_during_run": 0}] * 2)
        traced_run(2, [{"blocks_written_during_run": 3, "write_cpu_ns_during_run": 1200000},
                       {"blocks_written_during_run": 5, "write_cpu_ns_during_run": 2500000}])
        traced_run(3, [{}, {}])  # files from before the writer's figures: left out
        with open(c.path("trace.done.json"), "w") as f:
            json.dump({"trace_dir": c.path("trace-1"), "kept_trace": 1, "traced_runtime_ns": 1.0e9,
                       "traced_runtimes_ns": [1.0e9, 1.01e9, 1.02e9]}, f)
        r = report.build(c)
        self.assertEqual(r["tracer_writes"], [{"trace": 1, "blocks": 0, "cpu_ns": 0},
                                              {"trace": 2, "blocks": 5, "cpu_ns": 2500000}])
        text = report.markdown(c, r)
        self.assertIn("compressed blocks during 1 of the 2 traced runs (at most 5 blocks and 2.50 ms of one "
                      "rank's CPU, trace-2)", text)
        self.assertIn("wrote no block during any of the 1 traced runs",
                      report._tracer_writes_sentence(r["tracer_writes"][:1]))
        self.assertEqual(report._tracer_writes_sentence([]), "")

    def test_long_critical_latency_list_is_summarised(self):
        many = [1000.0 * k for k in range(1, 101)]  # ΔL 1..100 µs: an app with many waits
        text = report._critical_list(many)
        self.assertTrue(text.startswith("100 of them, 1.00 µs"), text)
        self.assertIn("100.00 µs (all in analysis.json)", text)
        self.assertEqual(text.count("µs"), 10)
        self.assertEqual(report._critical_list([17000.0]), "17.00 µs")
        self.assertEqual(report._critical_list([]), "none")

    def test_prediction_from_every_traced_run(self):
        c = hand_made_campaign(self)
        with open(c.path("analysis.json")) as f:
            first = json.load(f)  # trace 1: 0.99 s + 5000 L up to L = 17 µs, 8000 beyond
        # trace 2, a slower draw: 1.03 s + 6000 L up to L = 12 µs (1.102 s), 9000 beyond (1.192 s at 22 µs)
        second = dict(first, runtime_ns=1.042e9, lambda_L=6000.0, critical_latencies_ns=[12000.0],
                      curve=[{"L_begin_ns": 0.0, "L_end_ns": 12000.0, "T_begin_ns": 1.03e9, "T_end_ns": 1.102e9,
                              "lambda_L": 6000.0},
                             {"L_begin_ns": 12000.0, "L_end_ns": 22000.0, "T_begin_ns": 1.102e9,
                              "T_end_ns": 1.192e9, "lambda_L": 9000.0}])
        for k, a in ((1, first), (2, second)):
            with open(ensemble.member_path(c, k), "w") as f:
                json.dump(a, f)
        with open(c.path("trace.done.json"), "w") as f:
            json.dump({"given": False, "kept_trace": 1, "traced_runtimes_ns": [1.0e9, 1.05e9],
                       "traced_runtime_ns": 1.0e9}, f)
        mean = ensemble.mean_analysis([first, second], ["analysis-trace-1.json", "analysis-trace-2.json"])
        # The mean curve, exactly: breakpoints 12 and 17 µs, slopes 5500, (5000 + 9000) / 2 = 7000 and
        # (8000 + 9000) / 2 = 8500, from 1.01 s at L = 0.
        self.assertEqual([(s["L_begin_ns"], s["L_end_ns"], s["lambda_L"]) for s in mean["curve"]],
                         [(0.0, 12000.0, 5500.0), (12000.0, 17000.0, 7000.0), (17000.0, 22000.0, 8500.0)])
        self.assertAlmostEqual(mean["curve"][0]["T_begin_ns"], 1.01e9)
        self.assertAlmostEqual(mean["curve"][2]["T_end_ns"], 1.1535e9)
        self.assertEqual(mean["critical_latencies_ns"], [12000.0, 17000.0])
        self.assertAlmostEqual(mean["runtime_ns"], 1.021e9)
        self.assertEqual(mean["lambda_L"], 5500.0)
        mean["traces"] = [1, 2]
        with open(c.path(ensemble.MEAN_NAME), "w") as f:
            json.dump(mean, f)

        r = report.build(c)
        self.assertEqual(r["prediction_from"], "every traced run (mean)")
        rows = {row["delta_ns"]: row for row in r["per_delta"]}
        # L = 2, 12, 22 µs: trace 1 predicts 1.0, 1.05, 1.115 s, trace 2 1.042, 1.102, 1.192 s
        for delta, mean_T, gap in ((0.0, 1.021e9, 0.042e9), (10000.0, 1.076e9, 0.052e9), (20000.0, 1.1535e9, 0.077e9)):
            self.assertAlmostEqual(rows[delta]["predicted_ns"], mean_T, delta=1)
            # two values `gap` apart: sample std gap/√2, over √2 -> gap / 2
            self.assertAlmostEqual(rows[delta]["predicted_se_ns"], gap / 2, delta=1)
        measured_mean = (1.01e9 + 1.06e9 + 1.12e9) / 3
        errors = [1.01e9 - 1.021e9, 1.06e9 - 1.076e9, 1.12e9 - 1.1535e9]
        self.assertAlmostEqual(r["rrmse"], math.sqrt(sum(e * e for e in errors) / 3) / measured_mean, places=9)
        per = r["per_trace_prediction"]
        self.assertEqual([t["trace"] for t in per["traces"]], [1, 2])
        one = math.sqrt((0.01e9 ** 2 + 0.01e9 ** 2 + 0.005e9 ** 2) / 3) / measured_mean  # trace 1 alone
        self.assertAlmostEqual(per["traces"][0]["rrmse"], one, places=9)
        floor = math.sqrt((0.021e9 ** 2 + 0.026e9 ** 2 + 0.0385e9 ** 2) / 3) / measured_mean
        self.assertAlmostEqual(per["rrmse_prediction_floor"], floor, places=6)
        # Beyond both floors: RRMSE 2.06 % against a noise floor of 1.33 % and a traces' floor of
        # 2.61 %: within the noise.
        self.assertLess(r["rrmse"] ** 2, r["rrmse_noise_floor"] ** 2 + floor ** 2)
        self.assertEqual(r["rrmse_beyond_noise"], 0.0)
        text = report.markdown(c, r)
        self.assertIn(f"**Beyond the noise: RRMSE {100 * r['rrmse_beyond_noise']:.2f} %**", text)
        self.assertIn("Prediction: the mean of the 2 traced runs' predictions", text)
        self.assertIn(f"the kept trace-1 alone (`--prediction-from kept-trace`) {100 * one:.2f} %", text)
        # Tolerances come from the mean curve (T(L0) 1.021 s; 1 % = 1.03121 s at ΔL = 10.22/5.5 µs)
        tol = {t["percent"]: t for t in r["tolerance"]}
        self.assertEqual(tol[1.0]["predicted_source"], "predicted curve")
        self.assertAlmostEqual(tol[1.0]["predicted_delta_ns"], 0.01021e9 / 5500, delta=20)

        # The figure's band: the lowest and highest traced run's prediction at each point
        point = next(p for p in r["predicted_curve"] if p["delta_ns"] == 20000.0)
        self.assertAlmostEqual(point["predicted_min_ns"], 1.115e9, delta=1)
        self.assertAlmostEqual(point["predicted_max_ns"], 1.192e9, delta=1)
        report.write(c, log=lambda _: None)
        self.assertTrue(os.path.getsize(c.path("campaign.png")) > 0)

        c.prediction_from = "kept-trace"  # the kept trace's analysis.json alone, as before
        r = report.build(c)
        self.assertEqual(r["prediction_from"], "kept trace")
        self.assertAlmostEqual(r["rrmse"], one, places=9)
        self.assertNotIn("per_trace_prediction", r)
        # trace 1 alone, 0.86 %, is within the noise floor of 1.33 % too
        self.assertLess(one, r["rrmse_noise_floor"])
        self.assertEqual(r["rrmse_beyond_noise"], 0.0)
        self.assertNotIn("predicted_min_ns", r["predicted_curve"][0])

    def test_where_the_error_at_zero_comes_from(self):
        c = hand_made_campaign(self)
        with open(c.path("analysis.json")) as f:
            first = json.load(f)  # trace 1's graph: 1.0 s at L0
        second = dict(first, runtime_ns=1.042e9,
                      curve=[dict(s, T_begin_ns=s["T_begin_ns"] + 0.042e9, T_end_ns=s["T_end_ns"] + 0.042e9)
                             for s in first["curve"]])
        for k, a in ((1, first), (2, second)):
            with open(ensemble.member_path(c, k), "w") as f:
                json.dump(a, f)
        mean = ensemble.mean_analysis([first, second], ["analysis-trace-1.json", "analysis-trace-2.json"])
        mean["traces"] = [1, 2]
        with open(c.path(ensemble.MEAN_NAME), "w") as f:
            json.dump(mean, f)
        done = {"given": False, "kept_trace": 1, "traced_runtimes_ns": [1.01e9, 1.06e9], "traced_runtime_ns": 1.01e9}
        with open(c.path("trace.done.json"), "w") as f:
            json.dump(done, f)
        # Without untraced reference runs the tracer and the host cannot be told apart: no split.
        r = report.build(c)
        self.assertIsNone(r["t0_split"])
        self.assertNotIn("Where T(0)'s error comes from", report.markdown(c, r))

        with open(c.path("trace.done.json"), "w") as f:
            json.dump(dict(done, reference_runtimes_ns=[1.02e9, 1.04e9], reference_runtime_ns=1.03e9), f)
        r = report.build(c)
        t = r["t0_split"]
        # predicted T(L0) 1.021 s (the two graphs' mean), measured at ΔL = 0: 1.00 and 1.02 s -> 1.01 s
        self.assertAlmostEqual(t["error_ns"], 0.011e9, delta=1)
        # graph: 1.021 - mean(1.01, 1.06) = -14 ms; its own runs -10 and -18 ms apart: se 8 / 2 = 4 ms
        self.assertAlmostEqual(t["terms"]["graph"]["ns"], -0.014e9, delta=1)
        self.assertAlmostEqual(t["terms"]["graph"]["se_ns"], 0.004e9, delta=1)
        self.assertAlmostEqual(t["graph_vs_own_run_pct"][1], 100 * -0.018 / 1.06, places=9)
        # tracer: 1.035 - 1.03 s; se from both spreads, hypot(25, 10) ms
        self.assertAlmostEqual(t["terms"]["tracer"]["ns"], 0.005e9, delta=1)
        self.assertAlmostEqual(t["terms"]["tracer"]["se_ns"], math.hypot(0.025e9, 0.01e9), delta=1)
        # host: the reference runs' 1.03 s against the measured 1.01 s
        self.assertAlmostEqual(t["terms"]["host"]["ns"], 0.02e9, delta=1)
        self.assertAlmostEqual(sum(x["ns"] for x in t["terms"].values()), t["error_ns"], delta=1)
        self.assertAlmostEqual(t["terms"]["host"]["pct"], 100 * 0.02 / 1.01, places=9)
        self.assertIn("**the graph** against the very run it was traced from -14.0 ± 4.0 ms (-1.39 %)",
                      report.markdown(c, r))

        c.prediction_from = "kept-trace"  # trace 1 alone: its graph against its own run, -10 ms
        t = report.build(c)["t0_split"]
        self.assertEqual(t["traces"], [1])
        self.assertAlmostEqual(t["terms"]["graph"]["ns"], -0.01e9, delta=1)
        self.assertIsNone(t["terms"]["graph"]["se_ns"])
        self.assertAlmostEqual(t["terms"]["tracer"]["ns"], -0.02e9, delta=1)
        self.assertAlmostEqual(t["error_ns"], 1.0e9 - 1.01e9, delta=1)

    def test_first_use_of_the_transport_is_reported(self):
        c = hand_made_campaign(self)
        r = report.build(c)
        self.assertIsNone(r["first_use"])  # no params.json: nothing measured, nothing said
        self.assertNotIn("first use", report.markdown(c, r))
        first = [{"bytes": 64, "launches": 3, "warm_rtt_ns": 300.0, "excess_ns": 1500.0, "slow_trips": 0},
                 {"bytes": 512, "launches": 3, "warm_rtt_ns": 900.0, "excess_ns": 2.3e6, "slow_trips": 64},
                 {"bytes": 4096, "launches": 3, "warm_rtt_ns": 2000.0, "excess_ns": 3.2e6, "slow_trips": 58.5}]
        with open(c.path("params.json"), "w") as f:
            json.dump({"format": "llamp-loggp", "version": 1, "L_ns": 2000.0, "o_ns": 100.0, "g_ns": 0.0,
                       "G_ns_per_byte": 0.1, "S_bytes": 8255,
                       "measurement": {"first_use_median": first,
                                       "first_use": {"trips": 200, "sizes": [dict(first[0], excess_ns=9.0)]}}}, f)
        r = report.build(c)
        self.assertEqual(r["first_use"], first)  # the median over launches, not launch 1's
        text = report.markdown(c, r)
        self.assertIn("64 B 0.00 ms (0 above 3× the warm 0.30 µs), 512 B 2.30 ms (64 above 3× the warm 0.90 µs), "
                      "4096 B 3.20 ms (58 above 3× the warm 2.00 µs); 5.50 ms in all", text)
        self.assertIn("The graph charges warm costs only (`--no-first-use`)", text)  # not made with the bands
        with open(c.path("app.goal.json"), "w") as f:
            json.dump({"schedgen_args": ["--S", "8255B", "--first-use", "512B:64:14000.0ns:2000.0ns"]}, f)
        self.assertIn("The graph charges it: the first messages of each pair of ranks",
                      report.markdown(c, report.build(c)))
        # A single launch's file (no median over launches) is read as it is.
        with open(c.path("params.json"), "w") as f:
            json.dump({"format": "llamp-loggp", "version": 1, "L_ns": 2000.0, "o_ns": 100.0, "g_ns": 0.0,
                       "G_ns_per_byte": 0.1, "S_bytes": 8255,
                       "measurement": {"first_use": {"trips": 200, "sizes": [dict(first[1], trips=200)]}}}, f)
        self.assertEqual(report.build(c)["first_use"][0]["excess_ns"], 2.3e6)

    def test_tolerance_not_reached(self):
        value, reached = stats.tolerance_from_curve([0, 10, 20], [1.0, 1.001, 1.002], 5)
        self.assertEqual((value, reached), (20, False))


if __name__ == "__main__":
    unittest.main()
