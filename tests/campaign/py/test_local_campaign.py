"""A tiny local campaign end to end with the real pieces: llamp-loggp, the tracer, llamp schedgen,
llamp analyze, runs with the runtime timer, report and figure. Without the patched MPICH it can
only use ΔL = 0; with $LLAMP_PATCHED_MPICH_PREFIX (or the build script's cache) it adds 20 µs."""
import csv
import json
import os
import statistics
import unittest

from campaign_testlib import BUILD_DIR, TEST_APP, campaign, hand_made_params, temp_dir

from campaign import prediction, prepare


def injector_prefix():
    p = os.environ.get("LLAMP_PATCHED_MPICH_PREFIX") or os.path.join(
        os.environ.get("LLAMP_CACHE_DIR", "/var/cache/llamp"), "mpich-ucx-llamp", "prefix")
    # Programs built against Debian's MPICH load libmpich.so.12; the prefix must provide that name.
    return p if os.path.exists(os.path.join(p, "lib", "libmpich.so.12")) else ""


def report_records(out):
    """The record.json of every measured run attempt."""
    runs_dir = os.path.join(out, "runs")
    for name in sorted(os.listdir(runs_dir)):
        with open(os.path.join(runs_dir, name, "record.json")) as f:
            yield json.load(f)


class LocalCampaignTest(unittest.TestCase):
    def test_tiny_campaign(self):
        out = os.path.join(temp_dir(self), "c")
        prefix = injector_prefix()
        deltas = "0,20" if prefix else "0"
        # --floor-target far below any real floor: one round is added after the 2 planned (--max-reps 3);
        # --trace-floor-target too: the added round brings two traced runs among its runs, after the 3
        # planned (--max-trace-runs 5), so --trace-target (tried after them) adds none.
        # An explicit --core-limit: every launch is still probed and judged, but `auto` calibrates
        # once per host, and a VM host that moves the vCPUs between the calibration (~160 ns apart)
        # and the launches (~25 ns sharing a cache) for longer than the retries left a slot without
        # a run (CI, stop 16). auto's limit and floor are tested with fake probes (campaign_runs_retry).
        campaign("--build-dir", BUILD_DIR, "-n", "2", "--delta-l", deltas, "--reps", "2", "--core-limit", "1us",
                 "--floor-target", "0.0001", "--max-reps", "3",
                 "--trace-target", "0.0001", "--trace-floor-target", "0.0001", "--max-trace-runs", "5",
                 "--injector-prefix", prefix, "--loggp-arg=--rounds", "--loggp-arg=1",
                 "--loggp-arg=--reps", "--loggp-arg=10", "-o", out,
                 "--", TEST_APP, "--compute-ms", "40", "--iterations", "20")
        with open(os.path.join(out, "report.json")) as f:
            report = json.load(f)
        self.assertEqual(len(report["per_delta"]), len(deltas.split(",")))
        self.assertEqual((report["reps"], report["rounds"], report["floor_target_pct"]), (2, 3, 0.0001))
        for row in report["per_delta"]:
            self.assertEqual(row["runs_ok"], 3)
            self.assertGreater(row["predicted_ns"], 0)
            # Plumbing checks, not speed checks (a unit mix-up between ns, µs and s is off by 1000):
            # both contain the app's 40 ms of computation, and the prediction, made of intervals
            # of the traced run, is not an order of magnitude beyond that run.
            self.assertGreaterEqual(row["mean_ns"], 40e6, row)
            self.assertGreaterEqual(row["predicted_ns"], 40e6, row)
            self.assertLess(row["predicted_ns"], 10 * report["traced_runtime_ns"] + 1e9, row)
        # Three traced runs (the default --trace-runs) and the two --trace-floor-target added, each
        # after an untraced reference run; the graph comes from the traced run closest to the
        # references' median, among all five.
        self.assertEqual(len(report["traced_runtimes_ns"]), 5)
        self.assertEqual(len(report["reference_runtimes_ns"]), 5)
        self.assertEqual(report["trace_target_pct"], 0.0001)
        self.assertEqual((report["trace_floor_target_pct"], report["max_trace_runs"]), (0.0001, 5))
        self.assertEqual(report["traces_added"], {"trace_target": 0, "trace_floor_target": 2, "every_round": 0})
        self.assertEqual(report["trace_selection"], "closest to the untraced reference")
        reference = statistics.median(report["reference_runtimes_ns"])
        self.assertEqual(report["reference_runtime_ns"], reference)
        self.assertEqual(abs(report["traced_runtime_ns"] - reference),
                         min(abs(t - reference) for t in report["traced_runtimes_ns"]))
        self.assertEqual(report["traced_runtimes_ns"][report["kept_trace"] - 1], report["traced_runtime_ns"])
        self.assertEqual(report["trace_dir"], os.path.join(out, f"trace-{report['kept_trace']}"))
        # Traces 2 and 3 ran among the measured runs, not before them, and the added traces 4 and 5
        # among the added round's runs, not after the last.
        self.assertTrue(report["traces_interleaved"])
        started = sorted(r["started_unix"] for r in report_records(out))
        for k in (2, 3, 4, 5):
            done_at = os.path.getmtime(os.path.join(out, f"trace-{k}.done"))
            self.assertTrue(started[0] < done_at < started[-1], (k, done_at, started))
        # Every run, traced or not, pinned one rank per core (2 ranks, Hydra, at least 2 cores here).
        if len(os.sched_getaffinity(0)) >= 2:
            for r in report_records(out):
                with open(os.path.join(out, r["directory"], "output.log")) as f:
                    self.assertIn(" -bind-to core -n 2 ", f.readline())
        self.assertGreaterEqual(report["rrmse"], 0)
        self.assertEqual(len(report["tolerance"]), 3)
        # Every run at ΔL = 20 µs kept both ranks' injector statistics: the app's messages held and
        # released (its iterations exchange messages), the application gate, nothing left at finalize.
        delivery = report["injector_delivery"]
        if prefix:
            self.assertEqual([(d["delta_ns"], d["runs"], d["rank_lines"]) for d in delivery], [(20000.0, 3, 6)])
            self.assertGreater(delivery[0]["held_per_rank"], 0)
            self.assertEqual((delivery[0]["turns"], delivery[0]["dropped_at_finalize"]), (["gate"], 0))
            self.assertGreaterEqual(delivery[0]["lateness_max_ns"], delivery[0]["lateness_p99_ns"])
            for r in report_records(out):
                self.assertEqual(len(r.get("inject_stats", [])), 2 if r["delta_ns"] > 0 and r["status"] == "ok" else 0)
        else:
            self.assertEqual(delivery, [])
        # Three noise recordings over the two planned rounds (the default --noise-runs), 2 and 3 among
        # the measured runs; the added third round keeps that share (3 rounds x 3/2, rounded up: 5) and
        # brings 4 and 5 among its runs, before its last. The prediction with noise uses all five.
        for k in (1, 2, 3, 4, 5):
            self.assertTrue(os.path.getsize(os.path.join(out, f"noise-{k}.json")) > 0, k)
        planned_end = max(r["started_unix"] for r in report_records(out) if r["round"] < 2)
        for k in (2, 3, 4, 5):
            done_at = os.path.getmtime(os.path.join(out, f"noise-{k}.json"))
            self.assertTrue(started[0] < done_at < started[-1], (k, done_at, started))
            if k > 3:
                self.assertGreater(done_at, planned_end, k)
        noise = report["with_noise"]
        self.assertEqual(noise["files"], [f"noise-{k}.json" for k in range(1, 6)])
        self.assertEqual(noise["planned_recordings"], 3)
        self.assertGreaterEqual(noise["rrmse"], 0)
        # ... which the campaign is judged by; the LogGPS prediction alone stays in `rrmse`.
        self.assertEqual((report["judged"]["prediction"], report["judged"]["rrmse"]),
                         ("with the machine's noise", noise["rrmse"]))
        for row in report["per_delta"]:
            self.assertGreaterEqual(row["predicted_noise_ns"], row["predicted_ns"] - 1, row)
        # llamp-noise timed its resume cost, and the prediction with noise replayed it (one value per lane).
        self.assertEqual(len(noise["resume_extra_at_100us_ns"]), 2)
        # ... and the slowdown of the other MPI work it timed after that block, per lane.
        self.assertEqual(len(noise["following_slowdown_at_100us"]), 2)
        # The replay's terms one at a time, from the same five recordings: detours, + the resume
        # block, + the following work (the judged prediction), each with its RRMSE and response.
        self.assertEqual([s["terms"] for s in noise["term_steps"]],
                         [["detours"], ["detours", "resume"], ["detours", "resume", "following"]])
        self.assertEqual(noise["term_steps"][-1]["rrmse"], noise["rrmse"])
        # The replay's samples' mean is added (the runs are judged by their means), their median reported
        # beside it; `report --noise-statistic median` judges by the median, from the same analysis.
        self.assertEqual((noise["statistic"], noise["rrmse_other_statistic"]["statistic"]), ("mean", "median"))
        with open(os.path.join(out, "analysis-noise.json")) as f:
            points = json.load(f)["noise"]["points"]
        added = {round(p["L_ns"] - report["L0_ns"], 1): p["T_noise_mean_ns"] - p["T_model_ns"] for p in points}
        for row in report["per_delta"]:
            self.assertAlmostEqual(row["predicted_noise_ns"] - row["predicted_ns"], added[round(row["delta_ns"], 1)],
                                   delta=1)
        campaign("report", out, "--noise-statistic", "median")
        with open(os.path.join(out, "report.json")) as f:
            by_median = json.load(f)["with_noise"]
        self.assertEqual(by_median["statistic"], "median")
        self.assertAlmostEqual(by_median["rrmse"], noise["rrmse_other_statistic"]["rrmse"], places=12)
        campaign("report", out, "--noise-statistic", "mean")
        for step in noise["term_steps"]:
            self.assertGreaterEqual(step["rrmse"], 0, step)
            self.assertIn("predicted_slope", step)
        for name in ("params.json", "analysis.json", "app.goal", "report.md", "runs.csv", "summary.csv",
                     "campaign.png"):
            self.assertTrue(os.path.getsize(os.path.join(out, name)) > 0, name)

        # The parameters are the median of five llamp-loggp launches (the default --param-runs), the
        # first before the runs and the others among them, and the analysis is of all five.
        with open(os.path.join(out, "params.json")) as f:
            measurement = json.load(f)["measurement"]
        launches = measurement["launches"]
        self.assertEqual(len(launches), 5)
        self.assertEqual(measurement["combined_launches"], [1, 2, 3, 4, 5])
        with open(os.path.join(out, "params.json")) as f, open(os.path.join(out, "analysis.json")) as g:
            self.assertAlmostEqual(json.load(g)["params"]["L_ns"], json.load(f)["L_ns"])
        for k in range(1, 6):
            self.assertTrue(os.path.exists(os.path.join(out, f"params-{k}.json")), k)
        self.assertEqual(len(report["parameter_launches_L_plus_o_ns"]), 5)
        # The machine's busy-wait overrun (llamp-loggp) is reported next to the latency response.
        self.assertGreaterEqual(report["busy_wait_overrun"], 0)
        with open(os.path.join(out, "report.md")) as f:
            markdown = f.read()
        self.assertIn("Busy waits on this machine overran by", markdown)
        self.assertIn("The replay's terms one at a time (`llamp analyze --noise-terms`", markdown)
        # ... and how cold a waiting core comes back: a 16 KiB copy hot and after a 1 ms wait, the
        # median over the five launches.
        hot, after = report["cold_copy_ns"]
        self.assertGreater(hot, 0)
        self.assertGreater(after, 0)
        self.assertEqual(measurement["cold_copy_median_ns"], [hot, after])
        self.assertIn("A core that waited comes back cold: a 16 KiB copy took", markdown)
        self.assertIn("Rounds: 3 (2 planned; --floor-target 0.0001 %", markdown)
        self.assertIn("noise-5.json; 2 of them in the rounds added after the planned ones", markdown)
        self.assertIn("--trace-floor-target 0.0001 %: 2 traced run(s) added among the added rounds' runs while that "
                      "floor was above it, up to --max-trace-runs 5 and --max-reps; it stayed above (about ", markdown)
        self.assertIn("The noise floor stayed above 0.0001 % (--max-reps); about ", markdown)
        # llamp-coreprobe ran before and after every launch (--core-limit given), and
        # every run in the means was probed fast inside the job, where the probes that judge a run
        # are (cores.Guard.values: the vCPUs may move while the machine idles between jobs).
        if len(os.sched_getaffinity(0)) >= 2:
            self.assertIn("Core hand-off (llamp-coreprobe", markdown)
            with open(os.path.join(out, "cores.csv")) as f:
                launches = {row["launch"] for row in csv.DictReader(f)}
            self.assertTrue({f"params-{k}" for k in range(1, 6)} | {f"trace-{k}" for k in (1, 2, 3)} <= launches)
            with open(os.path.join(out, "cores.csv")) as f:
                order = [row["launch"] for row in csv.DictReader(f)]
            first_run = min(i for i, name in enumerate(order) if name.startswith("slot-"))
            self.assertLess(order.index("params-1"), first_run)
            self.assertGreater(order.index("params-2"), first_run)
            for r in report_records(out):
                if r["status"] == "ok":
                    inside = [v for v in (r.get("core_init_ns"), r.get("core_finalize_ns")) if v is not None]
                    judged = inside or [r["core_before_ns"], r["core_after_ns"]]
                    self.assertLessEqual(max(judged), r["core_limit_ns"], r)

        # The graph was made after the parameters, with their collective overhead (if any was
        # measured), their rendezvous threshold, eager receives copied out in progress, cold
        # rendezvous handshakes (if measured, with S) and the first-use bands of their probe (one
        # per size measured), and says so.
        with open(os.path.join(out, "params.json")) as f:
            params = json.load(f)
        with open(os.path.join(out, "app.goal.json")) as f:
            made_with = json.load(f)["schedgen_args"]
        expected = []
        for option, key in (("--collective-overhead", "o_coll_ns"), ("--probe-overhead", "o_probe_ns")):
            if params.get(key, 0) > 0:
                expected += [option, f"{params[key]:.1f}ns"]
        if params["S_bytes"] < 2**63:
            expected += ["--S", f"{params['S_bytes']}B"]
        expected += ["--eager-progress"]
        if params["S_bytes"] < 2**63 and params.get("o_rndv_cold_ns", 0) > 0:
            self.assertTrue(params["measurement"]["cold_handshake"]["measured"])
            expected += ["--cold-handshake", f"{params['o_rndv_cold_ns']:.1f}ns:100000ns"]
        bands = prepare.first_use_bands(params)
        self.assertEqual([b.split(":")[0] for b in bands],
                         [f"{x['bytes']}B" for x in params["measurement"].get("first_use_median")
                          or params["measurement"]["first_use"]["sizes"]])
        self.assertTrue(bands)
        expected += [a for b in bands for a in ("--first-use", b)]
        self.assertEqual(made_with, expected)
        self.assertEqual(report["schedgen_args"], made_with)

        # `repredict` in the moved folder: graph and analysis again from the kept trace, with other
        # schedgen arguments; the measured runs stay, the old graph is kept as app.goal.previous.
        moved = out + "-moved"
        os.rename(out, moved)
        campaign("repredict", moved, "--schedgen-arg=--no-initiation-time")
        self.assertTrue(os.path.getsize(os.path.join(moved, "app.goal.previous")) > 0)
        with open(os.path.join(moved, "logs", "schedgen.log")) as f:
            last = [line for line in f if line.startswith("$ ")][-1]
        self.assertIn(os.path.join(moved, f"trace-{report['kept_trace']}") + " ", last)
        self.assertIn("--no-initiation-time", last)
        with open(os.path.join(moved, "campaign.json")) as f:
            self.assertEqual(json.load(f)["schedgen_args"], ["--no-initiation-time"])
        with open(os.path.join(moved, "app.goal.json")) as f:
            self.assertEqual(json.load(f)["schedgen_args"][0], "--no-initiation-time")
        with open(os.path.join(moved, "report.json")) as f:
            again = json.load(f)
        self.assertEqual([r["mean_ns"] for r in again["per_delta"]], [r["mean_ns"] for r in report["per_delta"]])
        self.assertEqual(again["trace_dir"], os.path.join(moved, f"trace-{report['kept_trace']}"))
        # The prediction is the mean of every traced run's (campaign/ensemble.py): each of the five
        # traced runs' graphs, made again with the new schedgen arguments, analysed alike.
        self.assertEqual(again["prediction_from"], "every traced run (mean)")
        self.assertEqual([t["trace"] for t in again["per_trace_prediction"]["traces"]], [1, 2, 3, 4, 5])
        members = []
        for k in range(1, 6):
            with open(os.path.join(moved, f"analysis-trace-{k}.json")) as f:
                member = json.load(f)
            self.assertEqual(member["made_from"]["schedgen_args"][0], "--no-initiation-time")
            members.append(prediction.Prediction(member))
        # Weighted by round (campaign/trace_weights.py): together the weights count every ok measured
        # run once.
        weights = [t["weight"] for t in again["per_trace_prediction"]["traces"]]
        self.assertEqual(again["per_trace_prediction"]["trace_weights"], "rounds")
        self.assertAlmostEqual(sum(weights), sum(r["runs_ok"] for r in again["per_delta"]))
        for row in again["per_delta"]:
            L = again["L0_ns"] + row["delta_ns"]
            expected = sum(w * p.runtime_ns(L) for w, p in zip(weights, members)) / sum(weights)
            self.assertAlmostEqual(row["predicted_ns"], expected, delta=1e-6 * expected)
        # --no-schedgen-args goes back to the default schedgen (stop 64 needed a no-op argument to)
        campaign("repredict", moved, "--no-schedgen-args")
        with open(os.path.join(moved, "campaign.json")) as f:
            self.assertEqual(json.load(f)["schedgen_args"], [])
        with open(os.path.join(moved, "app.goal.json")) as f:
            self.assertNotIn("--no-initiation-time", json.load(f)["schedgen_args"])
        # ... and the kept trace's alone on request.
        campaign("repredict", moved, "--prediction-from", "kept-trace")
        with open(os.path.join(moved, "report.json")) as f:
            kept = json.load(f)
        self.assertEqual(kept["prediction_from"], "kept trace")
        with open(os.path.join(moved, "analysis.json")) as f:
            alone = prediction.Prediction(json.load(f))
        for row in kept["per_delta"]:
            self.assertAlmostEqual(row["predicted_ns"], alone.runtime_ns(kept["L0_ns"] + row["delta_ns"]), delta=1)


class TracesInStepTest(unittest.TestCase):
    def test_rounds_added_after_the_traces_floor_was_met_bring_a_traced_run(self):
        """--trace-floor-target far above any floor: met at once; the rounds --floor-target adds still
        bring one traced run each, among their runs, so the traced runs span the campaign's time."""
        d = temp_dir(self)
        out = os.path.join(d, "c")
        campaign("--build-dir", BUILD_DIR, "-n", "2", "--delta-l", "0", "--reps", "2", "--core-limit", "off",
                 "--floor-target", "0.0001", "--max-reps", "4", "--trace-runs", "2", "--trace-floor-target", "1000",
                 "--max-trace-runs", "3", "--noise-runs", "1", "--params", hand_made_params(d),
                 "--injector-prefix", "", "-o", out, "--", TEST_APP, "--compute-ms", "5", "--iterations", "5")
        with open(os.path.join(out, "report.json")) as f:
            report = json.load(f)
        self.assertEqual(report["rounds"], 4)
        # round 3 brought traced run 3; round 4 none: --max-trace-runs 3
        self.assertEqual(report["traces_added"], {"trace_target": 0, "trace_floor_target": 0, "every_round": 1})
        self.assertEqual(len(report["traced_runtimes_ns"]), 3)
        second = [r["started_unix"] for r in report_records(out) if r["round"] == 1]
        third = [r["started_unix"] for r in report_records(out) if r["round"] == 2]
        done_at = os.path.getmtime(os.path.join(out, "trace-3.done"))
        self.assertTrue(max(second) < done_at < max(third), (second, done_at, third))
        with open(os.path.join(out, "report.md")) as f:
            self.assertIn("1 more, one in each round added after it was met, so that the traced runs span the "
                          "campaign's time", f.read())


class QuietGateTest(unittest.TestCase):
    def test_probes_before_the_preparation_and_every_round(self):
        """--quiet-gate 100 --quiet-gate-slowdown 1000: every probe passes (no CPU loses more than all of
        its spin, nor computes 11x slower than its fastest probe), so the gate
        probes once per gate with the real llamp-noise, before the preparation, the two planned
        rounds and the one --floor-target adds, each before that round's first run."""
        d = temp_dir(self)
        out = os.path.join(d, "c")
        campaign("--build-dir", BUILD_DIR, "-n", "2", "--delta-l", "0", "--reps", "2", "--core-limit", "off",
                 "--floor-target", "0.0001", "--max-reps", "3", "--trace-runs", "1", "--noise-runs", "1",
                 "--params", hand_made_params(d), "--quiet-gate", "100", "--quiet-gate-probe", "50ms",
                 "--quiet-gate-slowdown", "1000", "--injector-prefix", "", "-o", out, "--", TEST_APP,
                 "--compute-ms", "5", "--iterations", "5")
        with open(os.path.join(out, "quiet-gate.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual([r["label"] for r in rows], ["preparation", "round 1", "round 2", "round 3"])
        self.assertEqual({r["outcome"] for r in rows}, {"quiet"})
        for r in rows:
            lost = [float(x) for x in r["lost_per_rank_pct"].split(";")]
            self.assertEqual(len(lost), 2)
            self.assertTrue(all(0 <= x < 100 for x in lost), lost)
            self.assertEqual(float(r["lost_max_pct"]), max(lost))
        records = list(report_records(out))
        for k in (1, 2, 3):
            first_run = min(x["started_unix"] for x in records if x["round"] == k - 1)
            self.assertLessEqual(float(rows[k]["unix_time"]), first_run)
        with open(os.path.join(out, "report.json")) as f:
            gate = json.load(f)["quiet_gate"]
        self.assertEqual((gate["gates"], gate["probes"], gate["gates_that_waited"], gate["timed_out"]), (4, 4, 0, 0))
        with open(os.path.join(out, "report.md")) as f:
            self.assertIn("Quiet gate (`--quiet-gate 100`; docs/campaign.md, 'The quiet gate'): 4 gates", f.read())

    def test_probes_before_every_launch_with_throughput_slices(self):
        """--quiet-gate-every launch: one probe before the preparation and one before each measured
        run, each timing throughput slices on both ranks (--quiet-gate-slowdown 1000: every probe
        passes), each row before its run's start; no round gate. --quiet-gate-after 1000: one probe
        after each measured run, the traced run and its reference run, each after its launch ended."""
        d = temp_dir(self)
        out = os.path.join(d, "c")
        campaign("--build-dir", BUILD_DIR, "-n", "2", "--delta-l", "0", "--reps", "4", "--core-limit", "off",
                 "--trace-runs", "1", "--noise-runs", "1", "--params", hand_made_params(d), "--quiet-gate", "100",
                 "--quiet-gate-probe", "50ms", "--quiet-gate-throughput", "50ms", "--quiet-gate-slowdown", "1000",
                 "--quiet-gate-every", "launch", "--quiet-gate-after", "1000", "--injector-prefix", "", "-o", out,
                 "--", TEST_APP, "--compute-ms", "5", "--iterations", "5")
        with open(os.path.join(out, "quiet-gate.csv")) as f:
            every_row = list(csv.DictReader(f))
        rows = [r for r in every_row if r["when"] == "before"]
        after = [r for r in every_row if r["when"] == "after"]
        records = sorted((x for x in report_records(out) if x["attempt"] == 1), key=lambda x: x["started_unix"])
        self.assertGreaterEqual(len(records), 4)  # 4 rounds of ΔL = 0, and any --floor-target adds
        self.assertEqual([r["label"] for r in rows],
                         ["preparation"] + [f"round {x['round'] + 1} slot {x['slot']}" for x in records])
        for r, x in zip(rows[1:], records):
            self.assertLessEqual(float(r["unix_time"]), x["started_unix"])
        for r in every_row:
            slices = [float(v) for v in r["slice_median_per_rank_ns"].split(";")]
            self.assertEqual(len(slices), 2)
            self.assertTrue(all(v > 0 for v in slices), slices)
            self.assertGreaterEqual(float(r["slowed_max_pct"]), 0.0)
        self.assertEqual(rows[0]["slowed_max_pct"], "0.00")  # the first probe is its own reference
        self.assertEqual(sorted(r["label"] for r in after),
                         sorted(["trace-1-reference", "trace-1"]
                                + [f"round {x['round'] + 1} slot {x['slot']} attempt 1" for x in records]))
        self.assertEqual({r["outcome"] for r in after}, {"quiet"})
        ended = {f"round {x['round'] + 1} slot {x['slot']} attempt 1": x["started_unix"] + x["wall_s"] for x in records}
        for r in after:
            if r["label"] in ended:
                self.assertGreaterEqual(float(r["unix_time"]), ended[r["label"]])
        with open(os.path.join(out, "report.json")) as f:
            gate = json.load(f)["quiet_gate"]
        self.assertEqual((gate["every"], gate["gates"], gate["gates_that_waited"]), ("launch", 1 + len(records), 0))
        self.assertEqual((gate["after_checks"], gate["after_noisy"]), (2 + len(records), 0))
        self.assertEqual(len(gate["fastest_slice_per_rank_ns"]), 2)

if __name__ == "__main__":
    unittest.main()
