"""The campaign through Slurm, end to end, on a private one-node cluster (slurm_cluster.sh):
prepare job, array of runs (a failing run retried inside its task), report job; then a lost run
(its record removed, as after a node crash) is resubmitted alone by `resume --mode slurm`.
Exits 77 (ctest: skipped) when the slurm-wlm / munge packages are not installed."""
import csv
import json
import os
import subprocess
import sys
import time
import unittest

from campaign_testlib import BUILD_DIR, MPIEXEC, TEST_APP, campaign, hand_made_params, temp_dir

HERE = os.path.dirname(os.path.abspath(__file__))
CLUSTER = os.path.join(HERE, "..", "slurm_cluster.sh")
FULL_PIPELINE = all(os.path.exists(os.path.join(BUILD_DIR, p)) for p in ("bin/llamp", "lib/libllamptrace.so"))


def wait_for_jobs(env, out, timeout=600):
    deadline = time.time() + timeout
    while time.time() < deadline:
        q = subprocess.run(["squeue", "-h", "-o", "%i %r"], env=env, capture_output=True, text=True)
        if q.returncode == 0 and not q.stdout.strip():
            return
        if "DependencyNeverSatisfied" in q.stdout:
            logs = subprocess.run(f"tail -n 5 {out}/slurm/*.out", shell=True, capture_output=True, text=True).stdout
            raise AssertionError(f"a Slurm job's dependency failed:\n{q.stdout}\n{logs}")
        time.sleep(1)
    raise AssertionError("Slurm jobs still queued or running after the timeout")


class SlurmCampaignTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cluster_dir = subprocess.run(
            ["mktemp", "-d", "/tmp/llamp-slurm-XXXXXX"], capture_output=True, text=True).stdout.strip()
        start = subprocess.run([CLUSTER, "start", cls.cluster_dir], capture_output=True, text=True)
        if start.returncode == 77:
            print(f"SKIPPED: {start.stderr.strip()}", file=sys.stderr)
            subprocess.run(["rm", "-rf", cls.cluster_dir])
            sys.exit(77)
        if start.returncode != 0:
            subprocess.run(["rm", "-rf", cls.cluster_dir])  # tearDownClass does not run after this
            raise RuntimeError(f"private Slurm cluster did not start: {start.stderr}")
        cls.env = dict(os.environ, SLURM_CONF=os.path.join(cls.cluster_dir, "slurm.conf"))

    @classmethod
    def tearDownClass(cls):
        subprocess.run([CLUSTER, "stop", cls.cluster_dir])
        subprocess.run(["rm", "-rf", cls.cluster_dir])

    def run_campaign(self, *args):
        old = os.environ.get("SLURM_CONF")
        os.environ["SLURM_CONF"] = self.env["SLURM_CONF"]
        try:
            return campaign(*args)
        finally:
            if old is None:
                os.environ.pop("SLURM_CONF")
            else:
                os.environ["SLURM_CONF"] = old

    def test_campaign_through_sbatch_and_resume(self):
        d = temp_dir(self)
        out = os.path.join(d, "campaign")
        # No untraced reference runs before the traced ones (the local e2e campaign has them): the
        # app's one failure must hit a measured run, whose retry this test checks.
        prediction = (["--no-trace-reference"] if FULL_PIPELINE
                      else ["--no-prediction", "--params", hand_made_params(d)])
        # Submitted from another directory: nothing may depend on the caller's working directory.
        self.addCleanup(os.chdir, os.getcwd())
        os.chdir(d)
        self.run_campaign("--mode", "slurm", "--build-dir", BUILD_DIR, "--mpiexec", MPIEXEC, "-n", "2",
                          "--delta-l", "0", "--reps", "3", "--sbatch-arg=--overcommit", "--injector-prefix", "",
                          "--core-limit", "1us",  # not auto: see test_local_campaign
                          "--loggp-arg=--rounds", "--loggp-arg=1", "--loggp-arg=--reps", "--loggp-arg=10",
                          *prediction, "-o", "campaign",
                          "--", TEST_APP, "--compute-ms", "20", "--fail-once-untraced", os.path.join(d, "marker"))
        wait_for_jobs(self.env, out)
        with open(os.path.join(out, "runs.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(sum(r["status"] == "ok" for r in rows), 3, rows)
        self.assertEqual(sum(r["status"] == "failed" for r in rows), 1, rows)  # retried inside its task
        with open(os.path.join(out, "report.json")) as f:
            report = json.load(f)
        self.assertEqual(report["per_delta"][0]["runs_ok"], 3)
        if FULL_PIPELINE:
            self.assertIn("rrmse", report)
            self.assertGreater(report["per_delta"][0]["predicted_ns"], 0)
            # The prepare job traced three times (default --trace-runs) and, without reference
            # runs, kept the median run.
            self.assertEqual(len(report["traced_runtimes_ns"]), 3)
            self.assertEqual(report["trace_selection"], "median")
            self.assertEqual(report["traced_runtime_ns"], sorted(report["traced_runtimes_ns"])[1])
            # ... and recorded the machine's noise three times (default --noise-runs) for the
            # prediction with noise.
            self.assertEqual(report["with_noise"]["files"], ["noise-1.json", "noise-2.json", "noise-3.json"])
            self.assertGreater(report["per_delta"][0]["predicted_noise_ns"], 0)

        # Lose slot 1's successful run, then resume: only slot 1 is submitted again.
        lost = [r for r in rows if r["slot"] == "1" and r["status"] == "ok"][0]
        subprocess.run(["rm", "-rf", os.path.join(out, lost["directory"])], check=True)
        self.run_campaign("resume", out, "--mode", "slurm", "--sbatch-arg=--overcommit")
        wait_for_jobs(self.env, out)
        with open(os.path.join(out, "slurm", "jobs.json")) as f:
            history = json.load(f)
        self.assertEqual(history[-1]["pending_slots"], [1])
        self.assertNotIn("prepare", history[-1]["jobs"])  # preparation is not redone
        with open(os.path.join(out, "report.json")) as f:
            self.assertEqual(json.load(f)["per_delta"][0]["runs_ok"], 3)


if __name__ == "__main__":
    unittest.main()
