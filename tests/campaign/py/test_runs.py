"""Real MPI runs through the campaign: a run that fails is retried once and both attempts are on
record; a run that fails twice leaves its slot open (non-zero exit, listed in the report) and is
never averaged in; `resume` tries it again; a hanging run is killed at the timeout and retried; a
run whose cores the probe found slow is launched again and kept out of every mean."""
import csv
import json
import os
import stat
import unittest

from campaign_testlib import BUILD_DIR, MPIEXEC, TEST_APP, campaign, hand_made_params, temp_dir


def rows(out):
    with open(os.path.join(out, "runs.csv")) as f:
        return list(csv.DictReader(f))


def small_campaign(test, app_args, extra=(), check=True):
    d = temp_dir(test)
    out = os.path.join(d, "c")
    result = campaign("--build-dir", BUILD_DIR, "--mpiexec", MPIEXEC, "-n", "2", "--delta-l", "0", "--reps", "2",
                      "--no-prediction", "--params", hand_made_params(d), "--injector-prefix", "", "-o", out,
                      # the retry tests count attempts: a real probe could add slow-cores ones
                      "--core-limit", "off", *extra,
                      "--", TEST_APP, "--compute-ms", "5", *[a.replace("@", d) for a in app_args], check=check)
    return out, result


class RunsTest(unittest.TestCase):
    def test_failed_run_is_retried_once_and_recorded(self):
        out, _ = small_campaign(self, ["--fail-once", "@/marker"])
        r = rows(out)
        self.assertEqual([(x["slot"], x["attempt"], x["status"]) for x in r],
                         [("0", "1", "failed"), ("0", "2", "ok"), ("1", "1", "ok")])
        with open(os.path.join(out, "report.json")) as f:
            report = json.load(f)
        row = report["per_delta"][0]
        self.assertEqual((row["runs_ok"], row["attempts"], row["failed"]), (2, 3, 1))
        ok = [int(x["runtime_ns"]) for x in r if x["status"] == "ok"]
        self.assertAlmostEqual(row["mean_ns"], sum(ok) / 2)
        self.assertEqual(len(report["failures"]), 1)

    def test_run_failing_twice_stays_open_until_resumed(self):
        out, result = small_campaign(self, ["--fail-always"], check=False)
        self.assertEqual(result.returncode, 3, result.stderr)
        r = rows(out)
        self.assertEqual(len(r), 4)  # 2 slots x (attempt + retry)
        self.assertTrue(all(x["status"] == "failed" for x in r))
        with open(os.path.join(out, "report.json")) as f:
            report = json.load(f)
        self.assertEqual(report["slots_without_success"], [0, 1])
        self.assertNotIn("mean_ns", report["per_delta"][0])
        with open(os.path.join(out, "report.md")) as f:
            self.assertIn("Slots with no successful run", f.read())
        # Resuming adds attempts 3 and 4 instead of overwriting 1 and 2.
        campaign("resume", out, check=False)
        self.assertEqual(sorted({x["attempt"] for x in rows(out)}), ["1", "2", "3", "4"])

    def test_hanging_run_times_out_and_is_retried(self):
        out, _ = small_campaign(self, ["--hang-once", "@/marker"], extra=["--timeout", "5"])
        r = rows(out)
        self.assertEqual([(x["slot"], x["attempt"], x["status"]) for x in r],
                         [("0", "1", "timeout"), ("0", "2", "ok"), ("1", "1", "ok")])

    def test_core_probes_judge_launches_and_slow_ones_go_again(self):
        # The host's vCPU placement cannot be changed on demand, so a stand-in for llamp-coreprobe
        # answers the probes outside the jobs from a list (ns); the timer's probes inside the runs
        # are real. The limit, 1 µs, is far above anything real here (12-220 ns), so only the
        # list can say slow.
        if len(os.sched_getaffinity(0)) < 2:
            self.skipTest("one CPU: no pair of cores to probe inside the runs")
        d = temp_dir(self)
        values = os.path.join(d, "probe-values")
        with open(values, "w") as f:
            # params-1: slow after (no probe inside llamp-loggp: the outside ones judge), again;
            # params-2; slot 0: slow before (waits), slow after but fast inside (kept); slot 1.
            f.write("\n".join(["30", "2000", "30", "31", "32", "33", "2000", "34", "2000", "35", "36"]) + "\n")
        fake = os.path.join(d, "fake-coreprobe")
        with open(fake, "w") as f:
            f.write(f"""#!/bin/sh
v=$(head -n 1 '{values}'); tail -n +2 '{values}' > '{values}.t'; mv '{values}.t' '{values}'
[ -n "$v" ] || v=30
echo '{{"cpus":[0,1],"pairs":[{{"cpus":[0,1],"one_way_ns":'$v'}}],"max_one_way_ns":'$v'}}'
""")
        os.chmod(fake, os.stat(fake).st_mode | stat.S_IEXEC)
        out = os.path.join(d, "c")
        campaign("--build-dir", BUILD_DIR, "--mpiexec", MPIEXEC, "-n", "2", "--delta-l", "0", "--reps", "2",
                 "--no-prediction", "--param-runs", "2", "--loggp-arg=--rounds", "--loggp-arg=1",
                 "--loggp-arg=--reps", "--loggp-arg=10", "--injector-prefix", "", "-o", out,
                 "--coreprobe", fake, "--core-limit", "1us", "--", TEST_APP, "--compute-ms", "5")
        with open(os.path.join(out, "prepare-cores.json")) as f:
            prepared = json.load(f)
        self.assertEqual(prepared["params-1"]["slow_cores_launches"], 1)
        self.assertEqual((prepared["params-1"]["core_before_ns"], prepared["params-1"]["core_after_ns"]), (30, 31))
        self.assertEqual(prepared["params-2"]["slow_cores_launches"], 0)
        r = rows(out)
        self.assertEqual([(x["slot"], x["attempt"], x["status"]) for x in r], [("0", "1", "ok"), ("1", "1", "ok")])
        self.assertEqual(float(r[0]["core_before_ns"]), 34.0)  # waited past the 2 µs probe
        self.assertEqual(float(r[0]["core_after_ns"]), 2000.0)  # after the job; inside it judged
        for x in r:
            # The runtime timer probed inside every job (real hand-offs between the two pinned
            # ranks), before MPI_Init and after MPI_Finalize.
            self.assertGreater(float(x["core_init_ns"]), 0)
            self.assertGreater(float(x["core_finalize_ns"]), 0)
        with open(os.path.join(out, "cores.csv")) as f:
            probes = list(csv.DictReader(f))
        outside = [p for p in probes if p["when"] in ("before", "after")]
        self.assertEqual([p["one_way_ns"] for p in outside],
                         ["30.0", "2000.0", "30.0", "31.0", "32.0", "33.0", "2000.0", "34.0", "2000.0", "35.0", "36.0"])
        inside = [(p["launch"], p["when"]) for p in probes if p["when"].startswith("in-run")]
        self.assertEqual(inside, [(f"slot-{s}-a1", w) for s in ("0000", "0001") for w in ("in-run init",
                                                                                       "in-run finalize")])
        with open(os.path.join(out, "report.md")) as f:
            markdown = f.read()
        self.assertIn("0 of 2 measured attempts were slow-cores", markdown)
        self.assertIn("Parameter launches and traced runs: 1 launched again", markdown)


class SlowCoresRetryTest(unittest.TestCase):
    """run_slot's loop over slow-cores attempts. A run the probes inside the job find slow cannot
    be produced on demand, so run_attempt is replaced by a list of outcomes."""

    def run_slot_with(self, statuses, core_retries=3, max_attempts=2):
        from campaign import config, runs, schedule
        c = config.Campaign(out_dir=temp_dir(self), app=["a"], ranks=2, deltas_ns=[0.0],
                            core_retries=core_retries, max_attempts=max_attempts)
        outcomes = iter(statuses)
        tried = []

        def fake_attempt(campaign, slot, attempt, log=print):
            tried.append(attempt)
            status = next(outcomes)
            return {"status": status, "runtime_ns": 1 if status == runs.OK else None, "reason": status}

        original = runs.run_attempt
        runs.run_attempt = fake_attempt
        try:
            record = runs.run_slot(c, schedule.Slot(slot=0, round=0, delta_ns=0.0), log=lambda *_: None)
        finally:
            runs.run_attempt = original
        return record, tried

    def test_slow_cores_attempts_do_not_use_up_the_failure_retry(self):
        record, tried = self.run_slot_with(["slow-cores", "failed", "slow-cores", "ok"])
        self.assertEqual((record["status"], tried), ("ok", [1, 2, 3, 4]))

    def test_after_the_last_core_retry_the_slot_stays_open(self):
        record, tried = self.run_slot_with(["slow-cores"] * 5, core_retries=2)
        self.assertEqual((record["status"], tried), ("slow-cores", [1, 2, 3]))

if __name__ == "__main__":
    unittest.main()
