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

    def test_slow_cores_run_is_launched_again_and_never_averaged(self):
        # The host's vCPU placement cannot be changed on demand, so a stand-in for llamp-coreprobe
        # answers from a list: slot 0's first run ends slow (2 µs after), slot 1 starts slow and
        # must wait for a fast probe before it launches. The limit, 1 µs, is far above what the
        # timer's real probes inside the runs can read (12-220 ns here), so only the list decides.
        d = temp_dir(self)
        values = os.path.join(d, "probe-values")
        with open(values, "w") as f:
            f.write("\n".join(["30", "2000", "30", "31", "2000", "32", "33"]) + "\n")
        fake = os.path.join(d, "fake-coreprobe")
        with open(fake, "w") as f:
            f.write(f"""#!/bin/sh
v=$(head -n 1 '{values}'); tail -n +2 '{values}' > '{values}.t'; mv '{values}.t' '{values}'
[ -n "$v" ] || v=30
echo '{{"cpus":[0,1],"pairs":[{{"cpus":[0,1],"one_way_ns":'$v'}}],"max_one_way_ns":'$v'}}'
""")
        os.chmod(fake, os.stat(fake).st_mode | stat.S_IEXEC)
        out, _ = small_campaign(self, [], extra=["--coreprobe", fake, "--core-limit", "1us"])
        r = rows(out)
        self.assertEqual([(x["slot"], x["attempt"], x["status"]) for x in r],
                         [("0", "1", "slow-cores"), ("0", "2", "ok"), ("1", "1", "ok")])
        self.assertEqual((float(r[0]["core_before_ns"]), float(r[0]["core_after_ns"])), (30.0, 2000.0))
        self.assertEqual(float(r[2]["core_before_ns"]), 32.0)  # waited past the 2 µs probe
        with open(os.path.join(out, "report.json")) as f:
            report = json.load(f)
        row = report["per_delta"][0]
        self.assertEqual((row["runs_ok"], row["attempts"], row["slow_cores"], row["failed"]), (2, 3, 1, 0))
        ok = [int(x["runtime_ns"]) for x in r if x["status"] == "ok"]
        self.assertAlmostEqual(row["mean_ns"], sum(ok) / 2)
        self.assertEqual(report["failures"], [])
        self.assertEqual(report["core_probes"]["slow_cores_attempts"], 1)
        with open(os.path.join(out, "cores.csv")) as f:
            rows_ = list(csv.DictReader(f))
        outside = [p for p in rows_ if p["when"] in ("before", "after")]
        self.assertEqual([p["one_way_ns"] for p in outside],
                         ["30.0", "2000.0", "30.0", "31.0", "2000.0", "32.0", "33.0"])
        self.assertEqual([p["slow"] for p in outside], ["0", "1", "0", "0", "1", "0", "0"])
        # The runtime timer probed inside every job too (real hand-offs between the two pinned
        # ranks), before MPI_Init and after MPI_Finalize; both are in the records.
        if len(os.sched_getaffinity(0)) >= 2:
            inside = [p for p in rows_ if p["when"].startswith("in-run")]
            self.assertEqual([(p["launch"], p["when"]) for p in inside],
                             [(f"slot-{s}-a{a}", w) for s, a in (("0000", 1), ("0000", 2), ("0001", 1))
                              for w in ("in-run init", "in-run finalize")])
            for x in r:
                self.assertGreater(float(x["core_init_ns"]), 0)
                self.assertGreater(float(x["core_finalize_ns"]), 0)
        with open(os.path.join(out, "report.md")) as f:
            self.assertIn("1 of 3 measured attempts were slow-cores", f.read())


if __name__ == "__main__":
    unittest.main()
