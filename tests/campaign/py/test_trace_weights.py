"""--trace-weights rounds: the mean prediction counts every round as often as it has ok measured
runs, shared by the traced runs launched in it, so that traced runs bunched in some rounds (as
--trace-floor-target adds them) do not pull the prediction towards the host of those rounds."""
import json
import math
import os
import unittest

from campaign_testlib import temp_dir

from campaign import config, ensemble, prepare, report, schedule, stats, trace_weights

T0 = 1_800_000_000.0  # a launch time (Unix seconds)


def run(rnd, started, status="ok"):
    return {"round": rnd, "status": status, "started_unix": started}


def four_rounds_of_six():
    """Rounds 0-3, six ok runs each, launched 10 s apart from T0 (round q: T0 + 60 q .. T0 + 60 q + 50),
    and a failed attempt in round 1 that must not count."""
    records = [run(q, T0 + 60 * q + 10 * i) for q in range(4) for i in range(6)]
    return records + [run(1, T0 + 65, "failed")]


class ByRoundTest(unittest.TestCase):
    def test_rounds_share_their_runs_among_their_traced_runs(self):
        # trace 1 before every run (round 0), trace 2 inside round 1, traces 3-5 inside round 2, none
        # in round 3: round 3's six runs go to round 2's three traced runs, the nearest round with some.
        times = {1: T0 - 5, 2: T0 + 75, 3: T0 + 125, 4: T0 + 135, 5: T0 + 145}
        weights = trace_weights.by_round(four_rounds_of_six(), times)
        self.assertEqual(weights, {1: 6.0, 2: 6.0, 3: 4.0, 4: 4.0, 5: 4.0})
        self.assertEqual(sum(weights.values()), 24.0)  # every ok measured run once
        self.assertEqual(trace_weights.weights_for(trace_weights.ROUNDS, four_rounds_of_six(), times),
                         [6.0, 6.0, 4.0, 4.0, 4.0])
        self.assertEqual(trace_weights.weights_for(trace_weights.EQUAL, four_rounds_of_six(), times), [1.0] * 5)
        self.assertAlmostEqual(trace_weights.effective_count([6.0, 6.0, 4.0, 4.0, 4.0]), 24.0 ** 2 / 120.0)

    def test_a_round_between_two_with_traced_runs_lends_to_both(self):
        # traced runs in rounds 0 and 2 only: round 1 lies as near to both, round 3 nearest to round 2;
        # a traced run after the last measured run belongs to the last round.
        times = {1: T0 + 5, 2: T0 + 125, 3: T0 + 1000}
        weights = trace_weights.by_round(four_rounds_of_six(), times)
        # round 0 -> trace 1 (6); round 1 -> traces 1, 2 (3 each); round 2 -> trace 2 (6);
        # round 3 -> trace 3 (6)
        self.assertEqual(weights, {1: 9.0, 2: 9.0, 3: 6.0})

    def test_equal_weights_before_any_measured_run(self):
        self.assertEqual(trace_weights.by_round([run(0, T0, "failed")], {1: T0, 2: T0 + 1}), {1: 1.0, 2: 1.0})
        with self.assertRaisesRegex(ValueError, "trace weights 'median'"):
            trace_weights.weights_for("median", [], {1: T0})


class WeightedStatsTest(unittest.TestCase):
    def test_equal_weights_are_the_plain_mean_and_standard_error(self):
        xs = [1.0, 2.0, 4.0, 7.0]
        self.assertAlmostEqual(stats.weighted_mean(xs, [3.0] * 4), stats.mean(xs))
        self.assertAlmostEqual(stats.weighted_standard_error(xs, [3.0] * 4), stats.standard_error(xs))

    def test_weighted_standard_error_by_hand(self):
        xs, w = [1.0, 3.0], [3.0, 1.0]
        # mean 1.5; n_eff 16 / 10 = 1.6; weighted variance (3 * 0.25 + 2.25) / 4 = 0.75, * 1.6 / 0.6 = 2;
        # se = sqrt(2 / 1.6)
        self.assertAlmostEqual(stats.weighted_mean(xs, w), 1.5)
        self.assertAlmostEqual(stats.weighted_standard_error(xs, w), math.sqrt(2.0 / 1.6))
        self.assertEqual(stats.weighted_standard_error(xs, [1.0, 0.0]), 0.0)  # one draw: no spread known


def line(t0_ns, slope):
    """analysis-trace-k.json content: T = t0 + slope L over L = 0..20 µs (L0 = 0)."""
    return {"format": "llamp-analysis", "version": 1, "latency_variable": "L", "L0_ns": 0.0, "runtime_ns": t0_ns,
            "lambda_L": slope, "rho_L": 0.0, "critical_latencies_ns": [],
            "curve": [{"L_begin_ns": 0.0, "L_end_ns": 20000.0, "T_begin_ns": t0_ns,
                       "T_end_ns": t0_ns + slope * 20000.0, "lambda_L": slope}], "tolerance": []}


class WeightedMeanPredictionTest(unittest.TestCase):
    def campaign(self):
        """Two ΔL (0, 10 µs), three rounds of two ok runs (launched T0 + 60 q and T0 + 60 q + 10): the
        host was slow in round 0 (2.0 s) and fast in rounds 1-2 (1.0 s, + 1000 s/s of ΔL). Traced run
        1 ran in round 0; traced runs 2-5 all in round 1; none in round 2."""
        out = temp_dir(self)
        deltas = [0.0, 10000.0]
        c = config.Campaign(out_dir=out, app=["app"], ranks=2, deltas_ns=deltas, reps=3,
                            schedule=schedule.make_schedule(deltas, 3, 1))
        c.save()
        for s in c.schedule:
            d = c.path("runs", f"slot-{s.slot:04d}-a1")
            os.makedirs(d)
            base = 2.0e9 if s.round == 0 else 1.0e9
            with open(os.path.join(d, "record.json"), "w") as f:
                json.dump({"slot": s.slot, "round": s.round, "delta_ns": s.delta_ns, "attempt": 1, "status": "ok",
                           "runtime_ns": base + 1000.0 * s.delta_ns, "rank_runtimes_ns": None, "wall_s": 1.0,
                           "started_unix": T0 + 60 * s.round + (10 if s.slot % 2 else 0), "reason": "",
                           "host": "h", "directory": os.path.relpath(d, out)}, f)
        with open(c.path("params.json"), "w") as f:
            json.dump({"L_ns": 0.0}, f)
        finished = {1: T0 - 5, 2: T0 + 61, 3: T0 + 62, 4: T0 + 63, 5: T0 + 64}
        for k, t in finished.items():
            trace_dir = prepare.trace_run_dirs(c, k)[0]
            os.makedirs(trace_dir)
            open(trace_dir + ".done", "w").close()
            os.utime(trace_dir + ".done", (t, t))
            analysis = dict(line(2.0e9 if k == 1 else 1.0e9, 1000.0), made_from=ensemble._made_from(c, k))
            with open(ensemble.member_path(c, k), "w") as f:
                json.dump(analysis, f)
        with open(c.path("trace.done.json"), "w") as f:
            json.dump({"given": False, "kept_trace": 2, "traced_runtimes_ns": [2.0e9] + [1.0e9] * 4,
                       "traced_runtime_ns": 1.0e9, "reference_runtimes_ns": [2.1e9] + [1.1e9] * 4,
                       "reference_runtime_ns": 1.1e9}, f)
        return c

    def test_the_mean_counts_each_round_as_the_measured_means_do(self):
        c = self.campaign()
        self.assertTrue(ensemble.enabled(c))
        ensemble.analyze(c, log=lambda _: None)
        with open(c.path(ensemble.MEAN_NAME)) as f:
            mean = json.load(f)
        # round 0 (2 runs) -> trace 1; rounds 1 and 2 (4 runs) -> traces 2-5, 1 each
        self.assertEqual(mean["weights"], [2.0, 1.0, 1.0, 1.0, 1.0])
        self.assertEqual(mean["trace_weights"], "rounds")
        # measured means: 4/3 s and 4/3 s + 10 ms; weighted: (2 * 2 + 4 * 1) / 6 = 4/3 s at L0
        self.assertAlmostEqual(mean["runtime_ns"], 4.0e9 / 3, delta=1)
        r = report.build(c)
        self.assertAlmostEqual(r["rrmse"], 0.0, places=9)
        per = r["per_trace_prediction"]
        self.assertEqual([t["weight"] for t in per["traces"]], [2.0, 1.0, 1.0, 1.0, 1.0])
        self.assertAlmostEqual(per["effective_traces"], 36.0 / 8.0)
        # equal weights: 1.2 s at L0, 1/3 s - 1.2 s = 0.1333 s low at both ΔL
        measured_mean = 4.0e9 / 3 + 5.0e6
        self.assertAlmostEqual(per["rrmse_equal_weights"], (4.0e9 / 3 - 1.2e9) / measured_mean, places=9)
        # T(0)'s split weighs the traced runs and their reference runs alike, so its terms add up to the
        # weighted prediction's error (0 here): the tracer -0.1 s (traced 4/3 s, references 1.4333 s)
        # and the host +0.1 s.
        t0 = r["t0_split"]
        self.assertAlmostEqual(t0["error_ns"], 0.0, delta=1)
        self.assertAlmostEqual(t0["terms"]["graph"]["ns"], 0.0, delta=1)
        self.assertAlmostEqual(t0["terms"]["tracer"]["ns"], -0.1e9, delta=1)
        self.assertAlmostEqual(t0["terms"]["host"]["ns"], 0.1e9, delta=1)
        text = report.markdown(c, r)
        self.assertIn("The mean is weighted by round (`--trace-weights rounds`)", text)
        self.assertIn("trace-1 2.0, trace-2 1.0", text)
        self.assertIn(f"RRMSE would be {100 * per['rrmse_equal_weights']:.2f} % instead of 0.00 %", text)

        c.trace_weights = trace_weights.EQUAL  # as before: every traced run alike
        ensemble.analyze(c, log=lambda _: None)
        r = report.build(c)
        self.assertAlmostEqual(r["rrmse"], per["rrmse_equal_weights"], places=9)
        self.assertNotIn("rrmse_equal_weights", r["per_trace_prediction"])
        self.assertNotIn("weighted by round", report.markdown(c, r))


if __name__ == "__main__":
    unittest.main()
