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

    def test_a_run_at_delta_l_without_the_injector_is_failed_not_averaged(self):
        # A prefix that passes the campaign's checks but loads Debian's unpatched MPICH: LLAMP_DELTA_L
        # is set and ignored, so no rank prints its injector statistics and the runtime measures ΔL = 0.
        prefix = os.path.join(temp_dir(self), "unpatched")
        os.makedirs(os.path.join(prefix, "lib"))
        with open(os.path.join(prefix, "llamp-env.sh"), "w") as f:
            f.write("# sets nothing: the runs find Debian's MPICH\n")
        os.symlink("/usr/lib/x86_64-linux-gnu/libmpich.so.12", os.path.join(prefix, "lib", "libmpich.so.12"))
        out, result = small_campaign(self, [], extra=["--delta-l", "20", "--reps", "1", "--injector-prefix", prefix],
                                     check=False)
        self.assertNotEqual(result.returncode, 0, result.stdout)
        r = rows(out)
        self.assertEqual([(x["attempt"], x["status"]) for x in r], [("1", "failed"), ("2", "failed")])
        with open(os.path.join(out, "report.json")) as f:
            report = json.load(f)
        self.assertNotIn("mean_ns", report["per_delta"][0])
        self.assertEqual(report["injector_delivery"], [])
        self.assertIn("no llamp-inject statistics line from rank(s) 0, 1: LLAMP_DELTA_L was not injected",
                      report["failures"][0]["reason"])

    def test_hanging_run_times_out_and_is_retried(self):
        out, _ = small_campaign(self, ["--hang-once", "@/marker"], extra=["--timeout", "5"])
        r = rows(out)
        self.assertEqual([(x["slot"], x["attempt"], x["status"]) for x in r],
                         [("0", "1", "timeout"), ("0", "2", "ok"), ("1", "1", "ok")])

    def test_probes_inside_the_jobs_judge_them(self):
        # The host's vCPU placement cannot be changed on demand, so a stand-in for llamp-coreprobe
        # answers the probes outside the jobs from a list (ns): every launch reads slow after
        # the job, slot 0 also before it. The timer's probes inside the jobs are real and fast
        # (the limit, 1 µs, is far above anything real here, 12-220 ns): they judge, nothing is
        # launched again, and slot 0 waited for a fast probe before it started.
        if len(os.sched_getaffinity(0)) < 2:
            self.skipTest("one CPU: no pair of cores to probe inside the jobs")
        d = temp_dir(self)
        # launches in order: params-1, slot 0, params-2 (spread among the runs), slot 1
        fake = fake_coreprobe(d, ["30", "2000", "2000", "34", "2000", "31", "2000", "35", "2000"])
        out = os.path.join(d, "c")
        campaign("--build-dir", BUILD_DIR, "--mpiexec", MPIEXEC, "-n", "2", "--delta-l", "0", "--reps", "2",
                 "--no-prediction", "--param-runs", "2", "--loggp-arg=--rounds", "--loggp-arg=1",
                 "--loggp-arg=--reps", "--loggp-arg=10", "--injector-prefix", "", "-o", out,
                 "--coreprobe", fake, "--core-limit", "1us", "--", TEST_APP, "--compute-ms", "5")
        with open(os.path.join(out, "prepare-cores.json")) as f:
            prepared = json.load(f)
        for k in ("params-1", "params-2"):
            self.assertEqual(prepared[k]["slow_cores_launches"], 0, prepared)
            self.assertEqual(prepared[k]["core_after_ns"], 2000)
            self.assertGreater(prepared[k]["core_init_ns"], 0)  # llamp-loggp ran with the timer too
            self.assertGreater(prepared[k]["core_finalize_ns"], 0)
        r = rows(out)
        self.assertEqual([(x["slot"], x["attempt"], x["status"]) for x in r], [("0", "1", "ok"), ("1", "1", "ok")])
        self.assertEqual(float(r[0]["core_before_ns"]), 34.0)  # waited past the 2 µs probe
        for x in r:
            self.assertEqual(float(x["core_after_ns"]), 2000.0)
            self.assertGreater(float(x["core_init_ns"]), 0)  # before MPI_Init, after MPI_Finalize
            self.assertGreater(float(x["core_finalize_ns"]), 0)
        with open(os.path.join(out, "cores.csv")) as f:
            probes = list(csv.DictReader(f))
        # (and every 100 ms during a launch that lasts that long: "in-run during")
        inside = [(p["launch"], p["when"]) for p in probes if p["when"] in ("in-run init", "in-run finalize")]
        self.assertEqual(inside, [(launch, w) for launch in ("params-1", "slot-0000-a1", "params-2", "slot-0001-a1")
                                  for w in ("in-run init", "in-run finalize")])
        with open(os.path.join(out, "report.md")) as f:
            markdown = f.read()
        self.assertIn("0 of 2 measured attempts were slow-cores", markdown)
        self.assertIn("Parameter launches and traced runs: 0 launched again", markdown)


def fake_coreprobe(directory, values):
    """A stand-in for llamp-coreprobe that answers one value (ns) of `values` per call, then 30."""
    path = os.path.join(directory, "probe-values")
    with open(path, "w") as f:
        f.write("\n".join(values) + "\n")
    fake = os.path.join(directory, "fake-coreprobe")
    with open(fake, "w") as f:
        f.write(f"""#!/bin/sh
v=$(head -n 1 '{path}'); tail -n +2 '{path}' > '{path}.t'; mv '{path}.t' '{path}'
[ -n "$v" ] || v=30
echo '{{"cpus":[0,1],"pairs":[{{"cpus":[0,1],"one_way_ns":'$v'}}],"max_one_way_ns":'$v'}}'
""")
    os.chmod(fake, os.stat(fake).st_mode | stat.S_IEXEC)
    return fake


class GuardedLaunchTest(unittest.TestCase):
    """cores.guarded: a launch without probes inside it (no runtime timer) is judged by the probes
    outside and launched again while they say slow-cores. No MPI: the launch is a function."""

    def test_outside_probes_judge_a_launch_without_inside_ones(self):
        from campaign import config, cores
        d = temp_dir(self)
        c = config.Campaign(out_dir=d, app=["a"], ranks=2, deltas_ns=[0.0], core_limit="1us", core_retries=3,
                            tools=config.Tools(coreprobe=fake_coreprobe(d, ["30", "2000", "31", "2000", "32", "33"])))
        launches = []
        _, guard, slow = cores.guarded(c, "params-1", 2, lambda g: launches.append(g.shm_name), log=lambda *_: None)
        self.assertEqual((len(launches), slow, guard.slow), (3, 2, False))
        self.assertEqual((guard.before_ns, guard.after_ns), (32, 33))

    def test_retries_end_with_the_last_launch_kept(self):
        from campaign import config, cores
        d = temp_dir(self)
        c = config.Campaign(out_dir=d, app=["a"], ranks=2, deltas_ns=[0.0], core_limit="1us", core_retries=1,
                            core_wait_s=0, tools=config.Tools(coreprobe=fake_coreprobe(d, ["2000"] * 8)))
        _, guard, slow = cores.guarded(c, "trace-1", 2, lambda g: None, log=lambda *_: None)
        self.assertEqual((slow, guard.slow), (1, True))
        self.assertIn("the host had placed them apart", guard.reason())


class OneCoreFloorTest(unittest.TestCase):
    """--core-limit auto also sets a floor (0.6 x the calibration's reference): ranks on one
    physical core (SMT siblings, ~12 ns against ~26 ns here) are out of place too."""

    def campaign_with_host_file(self, probes, record):
        from campaign import config
        d = temp_dir(self)
        c = config.Campaign(out_dir=d, app=["a"], ranks=2, deltas_ns=[0.0], core_limit="auto", core_retries=3,
                            core_wait_s=0, tools=config.Tools(coreprobe=fake_coreprobe(d, probes)))
        with open(c.path(f"cores-{os.uname().nodename}.json"), "w") as f:
            json.dump(record, f)
        return c

    def test_outside_probes_below_the_floor_launch_again(self):
        from campaign import cores
        c = self.campaign_with_host_file(["12", "12", "26", "27"], {"fastest_ns": 26.0, "limit_ns": 78.0,
                                                                   "floor_ns": 15.6})
        reasons = []
        _, guard, slow = cores.guarded(c, "params-1", 2, lambda g: None, log=reasons.append)
        self.assertEqual((slow, guard.slow, guard.before_ns, guard.after_ns), (1, False, 26, 27))
        self.assertIn("on one physical core", reasons[0])
        self.assertIn("floor 16 ns", reasons[0])

    def test_smallest_probe_during_the_run_judges_it(self):
        from campaign import cores
        # a host file of stop 13 has no floor: 0.6 x its fastest probe
        c = self.campaign_with_host_file([], {"fastest_ns": 25.0, "limit_ns": 75.0})
        guard = cores.Guard(c, "slot-0000-a1", 2, log=lambda *_: None)
        self.assertEqual((guard.limit, guard.floor), (75.0, 15.0))
        guard.in_run({"init": 25, "finalize": 26, "during": 27, "during_min": 12})
        self.assertTrue(guard.slow)
        self.assertEqual(guard.fields()["core_during_min_ns"], 12)
        self.assertIn("smallest 12", guard.reason())
        guard.in_run({"init": 25, "finalize": 26, "during": 27, "during_min": 24})
        self.assertFalse(guard.slow)

    def test_calibration_reference_is_the_median_of_the_fast_probes(self):
        from campaign import config, cores
        # stop 14's cg campaign: five probes apart, one on one core, the rest sharing a cache
        seen = ["159", "153", "159", "166", "165", "25", "26", "27", "13", "24", "26", "25", "26", "24", "24", "24",
                "24", "25", "24", "24"]
        self.assertEqual(cores.reference_ns([float(x) for x in seen]), 24.0)
        d = temp_dir(self)
        c = config.Campaign(out_dir=d, app=["a"], ranks=2, deltas_ns=[0.0], core_limit="auto",
                            tools=config.Tools(coreprobe=fake_coreprobe(d, seen)))
        self.assertEqual(cores.limits_ns(c, 2, log=lambda *_: None), (72.0, 0.6 * 24.0))
        with open(c.path(f"cores-{os.uname().nodename}.json")) as f:
            self.assertEqual(json.load(f)["fastest_ns"], 13.0)

    def test_a_few_much_faster_probes_are_not_the_usual_placement(self):
        from campaign import cores
        # stop 29's ring campaign on the 16-vCPU Xeon: cores apart on the mesh (64-107 ns) and two
        # probes with the vCPUs on one physical core; their 22 ns as the reference rejected every launch
        xeon = [21.0, 22.0] + [68.0 + i for i in range(40)]
        self.assertEqual(cores.reference_ns(xeon), 88.0)
        # a quarter of them is a placement the host takes often: the group within 3 x the fastest counts
        self.assertEqual(cores.reference_ns([12.0] * 5 + [26.0] * 15), 26.0)
        self.assertEqual(cores.reference_ns([26.0] * 5 + [157.0] * 15), 26.0)
        self.assertEqual(cores.reference_ns([26.0] * 4 + [157.0] * 16), 157.0)
        # stop 36's Intel VM: a quarter of the probes with the vCPUs on one physical core (14 ns), the
        # rest sharing a cache (55-100 ns): the latter is the usual placement, the siblings fall below
        # the floor; a host whose probes are all siblings keeps them as its reference
        intel = [14.0, 14.0, 13.0, 14.0, 15.0] + [55.0 + 3 * i for i in range(15)]
        self.assertEqual(cores.reference_ns(intel), 76.0)
        self.assertEqual(cores.reference_ns([14.0] * 20), 14.0)
        self.assertEqual(cores.reference_ns([13.0] * 12 + [70.0] * 8), 70.0)

    def test_an_explicit_limit_sets_no_floor(self):
        from campaign import config, cores
        d = temp_dir(self)
        c = config.Campaign(out_dir=d, app=["a"], ranks=2, deltas_ns=[0.0], core_limit="90ns",
                            tools=config.Tools(coreprobe=fake_coreprobe(d, ["5", "5"])))
        _, guard, slow = cores.guarded(c, "params-1", 2, lambda g: None, log=lambda *_: None)
        self.assertEqual((slow, guard.floor, guard.slow), (0, None, False))


class RecalibrationTest(unittest.TestCase):
    """A calibration taken while the host kept the vCPUs apart (stop 16's CI: reference 157 ns, then
    every launch of a slot rejected at 12-27 ns as "on one physical core") is corrected by the first
    probe three times faster, and what its limits accepted is judged again."""

    APART = {"host": os.uname().nodename, "probes_ns": [157.0] * 20, "fastest_ns": 157.0, "reference_ns": 157.0,
             "limit_ns": 471.0, "floor_ns": 94.2}

    def setUp(self):
        from campaign import cores
        spacing, cores.RECALIBRATION_SPACING_S = cores.RECALIBRATION_SPACING_S, 0.0  # 20 s per recalibration
        self.addCleanup(setattr, cores, "RECALIBRATION_SPACING_S", spacing)

    def campaign_calibrated_apart(self, probes):
        from campaign import config
        d = temp_dir(self)
        c = config.Campaign(out_dir=d, app=["a"], ranks=2, deltas_ns=[0.0, 1000.0], core_limit="auto",
                            core_retries=3, core_wait_s=0, tools=config.Tools(coreprobe=fake_coreprobe(d, probes)))
        with open(c.path(f"cores-{os.uname().nodename}.json"), "w") as f:
            json.dump(self.APART, f)
        return c

    def host_record(self, c):
        with open(c.path(f"cores-{os.uname().nodename}.json")) as f:
            return json.load(f)

    def test_a_probe_three_times_faster_calibrates_again(self):
        from campaign import cores
        # the probe before the launch (25 ns), then 20 calibration probes, then the one after it
        c = self.campaign_calibrated_apart(["25"] + ["26"] * 19 + ["12", "27"])
        logged = []
        _, guard, slow = cores.guarded(c, "params-1", 2, lambda g: None, log=logged.append)
        self.assertEqual((slow, guard.slow, guard.limit), (0, False, 78.0))
        record = self.host_record(c)
        self.assertEqual((record["reference_ns"], record["limit_ns"], record["floor_ns"]), (26.0, 78.0, 0.6 * 26.0))
        self.assertEqual(len(record["probes_ns"]), 40)  # the calibration's and the new ones, not the trigger
        self.assertEqual(record["recalibrations"][0]["trigger_ns"], 25.0)
        self.assertEqual(record["recalibrations"][0]["reference_before_ns"], 157.0)
        self.assertIn("calibrated again", logged[0])

    def test_one_odd_probe_does_not_move_the_reference(self):
        from campaign import cores
        # before (5 ns: recalibrates), 20 calibration probes, after; the launch is judged out by its
        # 5 ns (below the floor) and launched again between two probes that read as the calibration
        c = self.campaign_calibrated_apart(["5"] + ["157"] * 20 + ["157"] * 3)
        _, guard, slow = cores.guarded(c, "params-1", 2, lambda g: None, log=lambda *_: None)
        self.assertEqual((guard.limit, slow, guard.slow), (471.0, 1, False))
        self.assertEqual(self.host_record(c)["reference_ns"], 157.0)
        # after MAX_RECALIBRATIONS such odd probes the limits are kept without probing again
        record = self.host_record(c)
        record["recalibrations"] *= cores.MAX_RECALIBRATIONS
        with open(c.path(f"cores-{os.uname().nodename}.json"), "w") as f:
            json.dump(record, f)
        self.assertEqual(cores.recalibrate(c, 2, 5.0, log=lambda *_: None), (471.0, 94.2))
        self.assertEqual(len(self.host_record(c)["probes_ns"]), 40)

    def test_a_passing_fast_placement_keeps_the_reference(self):
        from campaign import cores, rejudge, report
        # stop 47's AMD VM: usually ~220 ns, and for a few seconds at a time 30-60 ns, where cg ran
        # 23 % slower. A probe at 57 ns, then 20 probes of which 6 read that fast: the reference
        # stays, and the launch in the passing placement is judged out by the floor.
        c = self.campaign_calibrated_apart(["57"] + ["60"] * 6 + ["220"] * 14 + ["221"] * 3)
        record = dict(self.APART, probes_ns=[226.0] * 20, fastest_ns=226.0, reference_ns=226.0, limit_ns=678.0,
                      floor_ns=135.6)
        with open(c.path(f"cores-{os.uname().nodename}.json"), "w") as f:
            json.dump(record, f)
        self.write_run(c, 0, "ok", 225.0, limits=(678.0, 135.6))  # accepted before
        logged = []
        _, guard, slow = cores.guarded(c, "params-1", 2, lambda g: None, log=logged.append)
        self.assertEqual((guard.limit, guard.floor, slow, guard.slow), (678.0, 135.6, 1, False))
        record = self.host_record(c)
        self.assertEqual(record["reference_ns"], 226.0)
        self.assertEqual(len(record["probes_ns"]), 40)
        again = record["recalibrations"][0]
        self.assertEqual((again["trigger_ns"], again["new_probes"], again["new_probes_that_fast"], again["moved"]),
                         (57.0, 20, 6, False))
        self.assertIn("a passing placement, the reference stays 226 ns", logged[0])
        self.assertEqual(rejudge.rejudge(c, log=lambda *_: None), 0)  # the same limits: nothing taken back
        text = report._core_probe_paragraph({}, {"hosts": [record], "limit_ns": [678.0], "floor_ns": [135.6],
                                                 "probed_attempts": 2, "slow_cores_attempts": 1,
                                                 "accepted_probe_median_ns": None, "prepare": {}})
        self.assertIn("6 of 20 more probes", text)
        self.assertIn("a passing placement, so the reference stayed 226 ns", text)
        # most of the 20 that fast: the host's usual placement is the fast one, as in stop 16's CI
        c = self.campaign_calibrated_apart(["57"] + ["60"] * 11 + ["220"] * 9 + ["60"] * 3)
        with open(c.path(f"cores-{os.uname().nodename}.json"), "w") as f:
            json.dump(record | {"recalibrations": []}, f)
        cores.guarded(c, "params-1", 2, lambda g: None, log=lambda *_: None)
        self.assertTrue(self.host_record(c)["recalibrations"][0]["moved"])
        self.assertLess(self.host_record(c)["reference_ns"], 100.0)

    def test_launches_in_a_row_outside_the_band_widen_it(self):
        from campaign import cores, rejudge, report
        # stop 47's AMD VM calibrated at 27-60 ns (reference 43 ns) and then ran minutes at ~220 ns:
        # six launches in a row judged apart widen the band to them, and the next launch is accepted
        c = self.campaign_calibrated_apart(["220", "221"] * 8 + ["40", "41"])
        record = dict(self.APART, probes_ns=[43.0] * 20, fastest_ns=43.0, reference_ns=43.0, limit_ns=129.0,
                      floor_ns=25.8)
        with open(c.path(f"cores-{os.uname().nodename}.json"), "w") as f:
            json.dump(record, f)
        self.write_run(c, 0, "ok", 44.0, limits=(129.0, 25.8))  # accepted in the calibrated placement
        logged = []
        # --core-retries 3, but the streak began within them: launched on until it widens the band
        # (six launches apart), then once more, accepted
        _, guard, slow = cores.guarded(c, "params-1", 2, lambda g: None, log=logged.append)
        self.assertEqual((slow, guard.slow, guard.limit, guard.floor), (6, False, 3 * 221.0, 25.8))
        record = self.host_record(c)
        self.assertNotIn("streak", record)
        self.assertEqual(record["reference_ns"], 43.0)
        again = record["recalibrations"][0]
        self.assertEqual((again["side"], again["placement_ns"], again["limit_before_ns"], again["limit_ns"]),
                         ("apart", 221.0, 129.0, 663.0))
        self.assertEqual(again["stall_launches"], ["params-1"] * 6)
        self.assertTrue(any("6 launches in a row ran apart" in line for line in logged))
        _, guard, slow = cores.guarded(c, "params-2", 2, lambda g: None, log=logged.append)
        self.assertEqual((slow, guard.slow), (0, False))  # ~220 ns is inside the band now
        # the calibrated placement is still accepted, and nothing accepted before is taken back
        _, guard, slow = cores.guarded(c, "params-3", 2, lambda g: None, log=logged.append)
        self.assertEqual((slow, guard.slow), (0, False))
        self.assertEqual(rejudge.rejudge(c, log=lambda *_: None), 0)
        text = report._core_probe_paragraph({}, {"hosts": [self.host_record(c)], "limit_ns": [663.0],
                                                 "floor_ns": [25.8], "probed_attempts": 9,
                                                 "slow_cores_attempts": 6, "accepted_probe_median_ns": None,
                                                 "prepare": {}})
        self.assertIn("6 launches in a row ran apart", text)
        self.assertIn("limit 663 ns, floor 26 ns", text)
        # the launch that widens the band is launched again even past --core-retries
        c = self.campaign_calibrated_apart(["220", "221", "222", "223"])
        c.core_retries = 0
        with open(c.path(f"cores-{os.uname().nodename}.json"), "w") as f:
            json.dump(record | {"streak": {"side": "apart", "launches": ["trace-1"] * 5, "probes_ns": [220.0] * 10},
                                "limit_ns": 129.0, "recalibrations": []}, f)
        _, guard, slow = cores.guarded(c, "trace-2", 2, lambda g: None, log=lambda *_: None)
        self.assertEqual((slow, guard.slow, guard.limit), (1, False, 660.0))
        # a streak that began before the retries ran out goes on past them until it widens the band
        # (table AG7's persistent: its slot was given up after five of the six launches)
        c = self.campaign_calibrated_apart(["220", "221"] * 7)
        c.core_retries = 1
        with open(c.path(f"cores-{os.uname().nodename}.json"), "w") as f:
            json.dump(record | {"limit_ns": 129.0, "recalibrations": []}, f)
        _, guard, slow = cores.guarded(c, "trace-3", 2, lambda g: None, log=lambda *_: None)
        self.assertEqual((slow, guard.slow, guard.limit), (6, False, 663.0))
        self.assertEqual(self.host_record(c)["recalibrations"][0]["stall_launches"], ["trace-3"] * 6)
        # one that begins past them does not: a host changing sides gets --core-retries only
        c = self.campaign_calibrated_apart(["220", "221"] * 7)
        c.core_retries = 0
        with open(c.path(f"cores-{os.uname().nodename}.json"), "w") as f:
            json.dump(record | {"limit_ns": 129.0, "recalibrations": []}, f)
        _, guard, slow = cores.guarded(c, "trace-4", 2, lambda g: None, log=lambda *_: None)
        self.assertEqual((slow, guard.slow), (0, True))
        self.assertEqual(self.host_record(c)["streak"]["launches"], ["trace-4"])
        self.assertFalse(cores.streak_may_still_widen(c, 1))
        self.assertTrue(cores.streak_may_still_widen(c, 0))
        # a launch inside the band ends a streak
        c = self.campaign_calibrated_apart(["500", "500", "157", "157"])
        cores.guarded(c, "params-1", 2, lambda g: None, log=lambda *_: None)
        self.assertNotIn("streak", self.host_record(c))

    def test_a_faster_placement_within_the_factor_keeps_the_calibration(self):
        from campaign import cores
        # one physical core (12 ns) against a shared cache (26 ns) is 2x: the floor's business
        c = self.campaign_calibrated_apart([])
        record = dict(self.APART, probes_ns=[26.0] * 20, fastest_ns=26.0, reference_ns=26.0, limit_ns=78.0,
                      floor_ns=15.6)
        with open(c.path(f"cores-{os.uname().nodename}.json"), "w") as f:
            json.dump(record, f)
        self.assertFalse(cores.faster_than_calibrated(c, 12.0, 78.0))
        self.assertTrue(cores.faster_than_calibrated(c, 8.0, 78.0))
        c.core_limit = "1us"
        self.assertFalse(cores.faster_than_calibrated(c, 8.0, 1000.0))  # an explicit limit is the user's

    def write_run(self, c, slot, status, during_ns, limits=(471.0, 94.2)):
        directory = c.path("runs", f"slot-{slot:04d}-a1")
        os.makedirs(directory)
        run = {"slot": slot, "round": 0, "delta_ns": 0.0, "attempt": 1, "status": status, "runtime_ns": 1,
               "reason": "", "core_before_ns": 30.0, "core_init_ns": during_ns, "core_finalize_ns": during_ns,
               "core_during_ns": during_ns, "core_during_min_ns": during_ns, "core_after_ns": 30.0,
               "core_limit_ns": limits[0], "core_floor_ns": limits[1]}
        with open(os.path.join(directory, "record.json"), "w") as f:
            json.dump(run, f)

    def test_what_the_old_limits_accepted_is_judged_again(self):
        from campaign import cores, rejudge, runs
        c = self.campaign_calibrated_apart(["25"] + ["26"] * 20)
        self.write_run(c, 0, "ok", 160.0)  # apart: accepted under the old limits
        self.write_run(c, 1, "ok", 26.0, limits=(78.0, 15.6))  # launched after the recalibration
        names = {"params-1": 160.0, "params-2": 26.0, "trace-1-reference": 160.0, "trace-2": 27.0}
        ledger = {n: {"core_before_ns": v, "core_after_ns": v, "core_limit_ns": 471.0, "core_floor_ns": 94.2,
                      "slow_cores_launches": 0, "kept_slow": False} for n, v in names.items()}
        with open(c.path("prepare-cores.json"), "w") as f:
            json.dump(ledger, f)
        for name in ("params-1.json", "params-2.json", "params.json", "trace-1.done", "trace-2.done",
                     "trace.done.json", "app.goal", "app.goal.json", "analysis.json", "analysis-noise.json"):
            open(c.path(name), "w").close()
        self.assertEqual(rejudge.rejudge(c, log=lambda *_: None), 0)  # no recalibration yet: nothing to judge

        cores.guarded(c, "params-3", 2, lambda g: None, log=lambda *_: None)  # recalibrates at 25 ns
        logged = []
        self.assertEqual(rejudge.rejudge(c, log=logged.append), 3)
        records = {r["slot"]: r for r in runs.load_records(c)}
        self.assertEqual(records[0]["status"], "slow-cores")
        self.assertIn("calibrated again", records[0]["reason"])
        self.assertEqual((records[0]["first_judged_limit_ns"], records[0]["core_limit_ns"]), (471.0, 78.0))
        self.assertEqual(records[1]["status"], "ok")
        self.assertFalse(runs.slot_done(runs.load_records(c), 0))
        left = {n for n in os.listdir(c.out_dir)}
        self.assertNotIn("params-1.json", left)  # launched again by measure_parameters
        self.assertNotIn("params.json", left)  # combined again from the launches
        self.assertNotIn("trace-1.done", left)  # reference and traced run again
        self.assertNotIn("trace.done.json", left)  # the choice of trace again
        self.assertFalse({"app.goal", "analysis.json", "analysis-noise.json"} & left)
        self.assertTrue({"params-2.json", "trace-2.done"} <= left)
        with open(c.path("prepare-cores.json")) as f:
            self.assertEqual(set(json.load(f)), {"params-2", "trace-2"})
        self.assertIn("3 accepted launch(es)", logged[0])
        self.assertEqual(self.host_record(c)["recalibrations"][0]["taken_back"],
                         ["slot-0000-a1", "params-1", "trace-1-reference"])
        from campaign import report
        text = report._core_probe_paragraph({}, {"hosts": [self.host_record(c)], "limit_ns": [78.0], "floor_ns": [15.6],
                                       "probed_attempts": 2, "slow_cores_attempts": 1,
                                       "accepted_probe_median_ns": None, "prepare": {}})
        self.assertIn("Calibrated again", text)
        self.assertIn("3 launch(es) the earlier limits had accepted", text)
        self.assertEqual(rejudge.rejudge(c, log=lambda *_: None), 0)  # taken back once


class SlowCoresRetryTest(unittest.TestCase):
    """run_slot's loop over slow-cores attempts. A run the probes inside the job find slow cannot
    be produced on demand, so run_attempt is replaced by a list of outcomes."""

    def run_slot_with(self, statuses, core_retries=3, max_attempts=2, streaks=None):
        """streaks: per attempt, the length of the host's streak of launches outside the band after
        it (what note_launch leaves in the host file), or "widened"."""
        from campaign import config, cores, runs, schedule
        c = config.Campaign(out_dir=temp_dir(self), app=["a"], ranks=2, deltas_ns=[0.0],
                            core_retries=core_retries, max_attempts=max_attempts)
        outcomes = iter(statuses)
        streak_after = iter(streaks or [])
        tried = []

        def fake_attempt(campaign, slot, attempt, log=print):
            tried.append(attempt)
            status = next(outcomes)
            record = {"status": status, "runtime_ns": 1 if status == runs.OK else None, "reason": status}
            streak = next(streak_after, 0)
            host = {"host": os.uname().nodename}
            if streak == "widened":
                record["band_widened"] = True
            elif streak:
                host["streak"] = {"side": "apart", "launches": [f"slot-0000-a{attempt}"] * streak, "probes_ns": []}
            cores.save_host_record(campaign, host)
            return record

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

    def test_a_streak_that_began_within_the_retries_goes_on_until_it_widens_the_band(self):
        # table AG7's persistent: one launch on one physical core, then five apart, and the slot was
        # given up one launch before the streak of six widened the band
        record, tried = self.run_slot_with(["slow-cores"] * 7 + ["ok"], core_retries=5,
                                           streaks=[1, 1, 2, 3, 4, 5, "widened", 0])
        self.assertEqual((record["status"], tried), ("ok", [1, 2, 3, 4, 5, 6, 7, 8]))
        # a streak that begins past the retries, or one that ends, does not keep the slot going
        record, tried = self.run_slot_with(["slow-cores"] * 5, core_retries=2, streaks=[1, 1, 1, 1, 1])
        self.assertEqual((record["status"], tried), ("slow-cores", [1, 2, 3]))
        record, tried = self.run_slot_with(["slow-cores"] * 5, core_retries=2, streaks=[1, 2, 3, 1, 2])
        self.assertEqual((record["status"], tried), ("slow-cores", [1, 2, 3, 4]))


class NoisyHostTest(unittest.TestCase):
    """--quiet-gate-after: a real run or traced run after which the quiet gate's probe says a noisy
    spell began is noisy-host, never averaged in, and launched again once the gate finds the host
    quiet. A spell cannot be produced on demand, so the probes are scripted; the launches are real."""

    def noisy_campaign(self, probes):
        from campaign import config, quiet_gate, schedule
        d = temp_dir(self)
        c = config.Campaign(out_dir=d, app=[TEST_APP, "--compute-ms", "5", "--iterations", "2"], ranks=2,
                            deltas_ns=[0.0], reps=1, mpiexec=[MPIEXEC], core_limit="off", quiet_gate_pct=9.0,
                            quiet_gate_after_pct=9.0, noisy_retries=2, quiet_gate_pause_s=0.0,
                            tools=config.find_tools(BUILD_DIR, {}), schedule=schedule.make_schedule([0.0], 1, 1))
        c.save()
        slices = iter(probes)
        original = quiet_gate.probe
        quiet_gate.probe = lambda campaign: quiet_gate.Probe([0.05, 0.05], next(slices))
        self.addCleanup(setattr, quiet_gate, "probe", original)
        quiet_gate.wait_for_quiet(c, "preparation", lambda *_: None)  # the ranks' fastest slices: 70 us
        return c

    def outcomes(self, c):
        from campaign import quiet_gate
        return [(r["label"], r["when"], r["outcome"]) for r in quiet_gate.load(c)]

    def test_a_run_into_a_spell_is_launched_again_and_not_averaged(self):
        from campaign import report, runs
        fast, slow = [70000.0, 70000.0], [70000.0, 80000.0]  # rank 1 14.3 % slower
        c = self.noisy_campaign([fast, slow, fast, fast])
        record = runs.run_slot(c, c.schedule[0], log=lambda *_: None)
        self.assertEqual((record["status"], record["attempt"]), ("ok", 2))
        first = [r for r in runs.load_records(c) if r["attempt"] == 1][0]
        self.assertEqual(first["status"], "noisy-host")
        self.assertIsNotNone(first["runtime_ns"])  # measured, on record, but no measurement of ΔL
        self.assertIn("a rank computed 14.3 % slower than its fastest probe (> 9 %)", first["reason"])
        self.assertEqual(self.outcomes(c), [("preparation", "before", "quiet"),
                                            ("round 1 slot 0 attempt 1", "after", "noisy"),
                                            ("round 1 slot 0 attempt 1 again", "before", "quiet"),
                                            ("round 1 slot 0 attempt 2", "after", "quiet")])
        result = report.build(c)
        row = result["per_delta"][0]
        self.assertEqual((row["runs_ok"], row["attempts"], row["noisy_host"]), (1, 2, 1))
        self.assertEqual(row["mean_ns"], record["runtime_ns"])
        self.assertIn("1 measured attempt(s) were noisy-host", report._noisy_host_sentence(result))
        s = result["quiet_gate"]
        self.assertEqual((s["gates"], s["after_checks"], s["after_noisy"]), (2, 2, 1))

    def test_noisy_retries_end_with_the_slot_open(self):
        from campaign import runs
        fast, slow = [70000.0, 70000.0], [70000.0, 80000.0]
        c = self.noisy_campaign([fast, slow, fast, slow, fast, slow])
        record = runs.run_slot(c, c.schedule[0], log=lambda *_: None)
        self.assertEqual((record["status"], record["attempt"]), ("noisy-host", 3))  # --noisy-retries 2
        self.assertFalse(runs.slot_done(runs.load_records(c), 0))

    def test_a_spell_that_outlasts_the_gate_leaves_the_slot_open(self):
        from campaign import runs
        fast, slow = [70000.0, 70000.0], [70000.0, 80000.0]
        c = self.noisy_campaign([fast, slow, slow])
        c.quiet_gate_wait_s = 0.0  # the relaunch gate's first noisy probe times out
        logged = []
        record = runs.run_slot(c, c.schedule[0], log=logged.append)
        self.assertEqual((record["status"], record["attempt"]), ("noisy-host", 1))
        self.assertEqual(self.outcomes(c)[-1], ("round 1 slot 0 attempt 1 again", "before", "timed-out"))
        self.assertIn("left open", logged[-1])

    def test_traced_and_reference_runs_into_a_spell_are_launched_again(self):
        from campaign import prepare
        fast, slow = [70000.0, 70000.0], [80000.0, 70000.0]
        # the reference run once, then the traced run once, ran into a spell
        c = self.noisy_campaign([fast, slow, fast, fast, slow, fast, fast])
        logged = []
        prepare.trace_once(c, 1, logged.append)
        self.assertTrue(prepare.trace_done(c, 1))
        self.assertEqual(self.outcomes(c), [("preparation", "before", "quiet"),
                                            ("trace-1-reference", "after", "noisy"),
                                            ("trace-1-reference again", "before", "quiet"),
                                            ("trace-1-reference", "after", "quiet"),
                                            ("trace-1", "after", "noisy"),
                                            ("trace-1 again", "before", "quiet"),
                                            ("trace-1", "after", "quiet")])
        self.assertTrue(any(line.startswith("trace-1: noisy-host, launching again") for line in logged), logged)
        self.assertTrue(os.listdir(prepare.trace_run_dirs(c, 1)[0]))  # the trace of the launch kept

    def test_a_traced_run_in_a_spell_that_outlasts_the_gate_is_kept(self):
        from campaign import prepare
        fast, slow = [70000.0, 70000.0], [80000.0, 70000.0]
        c = self.noisy_campaign([fast, fast, slow, slow])
        c.quiet_gate_wait_s = 0.0
        logged = []
        prepare.trace_once(c, 1, logged.append)
        self.assertTrue(prepare.trace_done(c, 1))
        self.assertEqual([o[0] for o in self.outcomes(c)],
                         ["preparation", "trace-1-reference", "trace-1", "trace-1 again"])
        self.assertEqual(logged[-2], "trace-1: the host stayed noisy for --quiet-gate-wait; the noisy-host launch "
                                     "is kept")


class NoisyComputeTest(unittest.TestCase):
    """--noisy-compute: a launch in which a rank computed (outside MPI, as the real runtime timer
    measures it) far longer than in the campaign's quick launches of its kind is noisy-host, on
    record, never averaged in, and launched again. The host's slowing is played by the app: with
    --slow-once its rank 0 computes 3 x as long in its first run; the launches are real."""

    def compute_campaign(self):
        from campaign import config, schedule
        d = temp_dir(self)
        # 100 ms against 300: a rank the machine preempts outside MPI computes longer too (that is the
        # point), and only more than 100 ms of it in one run would pass for the slowing played here
        c = config.Campaign(out_dir=d, app=[TEST_APP, "--compute-ms", "100", "--iterations", "2"], ranks=2,
                            deltas_ns=[0.0], reps=2, mpiexec=[MPIEXEC], core_limit="off", noisy_compute_pct=100.0,
                            noisy_retries=2, tools=config.find_tools(BUILD_DIR, {}),
                            schedule=schedule.make_schedule([0.0], 2, 1))
        c.save()
        return c, os.path.join(d, "slow-once")

    def test_a_run_that_computed_slowly_is_launched_again_and_not_averaged(self):
        from campaign import report, runs
        c, marker = self.compute_campaign()
        first = runs.run_slot(c, c.schedule[0], log=lambda *_: None)
        self.assertEqual((first["status"], first["attempt"]), ("ok", 1))
        c.app += ["--slow-once", marker]
        record = runs.run_slot(c, c.schedule[1], log=lambda *_: None)
        self.assertEqual((record["status"], record["attempt"]), ("ok", 2))
        slow = [r for r in runs.load_records(c) if r["slot"] == 1 and r["attempt"] == 1][0]
        self.assertEqual(slow["status"], "noisy-host")
        self.assertRegex(slow["reason"], r"^in the run rank 0 computed \d+\.\d % longer outside MPI than in the "
                                         r"quick untraced launches \(\d+\.\d ms against \d+\.\d ms; limit 100 %\)$")
        self.assertGreater(slow["compute_slowed_pct"], 150)  # 3 x 100 ms against 100 ms
        self.assertLess(record["compute_slowed_pct"], 100)
        result = report.build(c)
        row = result["per_delta"][0]
        self.assertEqual((row["runs_ok"], row["attempts"], row["noisy_host"]), (2, 3, 1))
        self.assertEqual(sorted(row["runtimes_ns"]), sorted([first["runtime_ns"], record["runtime_ns"]]))
        self.assertIn("1 because a rank computed too slowly outside MPI (`--noisy-compute`)",
                      report._noisy_host_sentence(result))
        self.assertEqual(result["noisy_compute"]["noisy_host"], 1)
        report.write_csvs(c, result)
        self.assertEqual([r["compute_slowed_pct"] != "" for r in rows(c.out_dir)], [True, True, True])

    def test_a_campaign_that_began_slowly_launches_its_first_run_again_at_the_end(self):
        """The first launch has nothing to be compared with and passes; the campaign's end judges
        it against the quick launches and launches its slot again (compute_check.rejudge, run_local)."""
        out, result = small_campaign(self, ["--compute-ms", "100", "--slow-once", "@/slow"],
                                     extra=["--noisy-compute", "100"])
        self.assertEqual(result.returncode, 0, result.stderr)
        got = [(r["slot"], r["attempt"], r["status"]) for r in rows(out)]
        self.assertEqual(got, [("0", "1", "noisy-host"), ("0", "2", "ok"), ("1", "1", "ok")])
        first = rows(out)[0]
        self.assertTrue(first["reason"].startswith("in the run rank 0 computed "), first["reason"])
        self.assertTrue(first["reason"].endswith("(judged again at the campaign's end)"), first["reason"])
        self.assertIn("--noisy-compute: 1 accepted launch(es) computed more than 100 % longer than the campaign's "
                      "quick launches and are launched again (slot-0000-a1)", result.stdout + result.stderr)

    def test_a_slots_noisy_host_launches_are_bounded_over_the_campaign_until_the_check_widens(self):
        """--noisy-retries bounds a slot's noisy-host attempts over the whole campaign (the end's
        re-judge passes call run_slot again: stop 59 launched one slot 16 times). Where nearly every
        launch fails the check, it widens to the ordinary launch, and the slot is launched again."""
        from campaign import compute_check, config, report, runs, schedule
        from test_compute_check import judged
        c, marker = self.compute_campaign()
        c.schedule = schedule.make_schedule([0.0], 3, 1)
        c.save()
        quiet = lambda *_: None  # noqa: E731
        for attempt in (1, 2, 3):  # slot 0: its 1 + 2 noisy-host launches are spent
            d = c.path("runs", f"slot-0000-a{attempt}")
            os.makedirs(d)
            with open(os.path.join(d, "record.json"), "w") as f:
                json.dump({"slot": 0, "round": 0, "delta_ns": 0.0, "attempt": attempt, "status": "noisy-host",
                           "reason": "in the run rank 0 computed 40.0 % longer", "compute_slowed_pct": 40.0}, f)
        self.assertEqual(runs.run_slot(c, c.schedule[0], quiet)["attempt"], 3)
        self.assertFalse(os.path.exists(c.path("runs", "slot-0000-a4")))  # not launched again
        for slot in range(100, 120):  # what the machine's other launches looked like: all slow
            judged(c, slot, "noisy-host", 40.0)
        self.assertEqual(runs.run_slot(c, c.schedule[1], quiet)["status"], "ok")  # the quick launch
        c.app += ["--slow-once", marker]
        logged = []
        slow = runs.run_slot(c, c.schedule[2], logged.append)
        # kept: against the ordinary launches, the median of this one and the quick one, it is the median
        self.assertEqual((slow["status"], slow["attempt"], slow["compute_stage"]), ("ok", 1, "ordinary"))
        self.assertEqual(slow["compute_slowed_pct"], 0.0)
        self.assertTrue(any(line.startswith("--noisy-compute: widened: 23 of 24 measured attempts")
                            for line in logged), logged)
        record = runs.run_slot(c, c.schedule[0], quiet)
        self.assertEqual((record["status"], record["attempt"]), ("ok", 4))
        self.assertEqual(report.build(c)["noisy_compute"]["widened"], compute_check.widened(c))

    def test_a_reference_run_that_computed_slowly_is_launched_again(self):
        from campaign import prepare
        c, marker = self.compute_campaign()
        prepare.trace_once(c, 1, lambda *_: None)
        c.app += ["--slow-once", marker]
        logged = []
        prepare.trace_once(c, 2, logged.append)
        self.assertTrue(prepare.trace_done(c, 2))
        self.assertTrue(any(line.startswith("trace-2-reference: noisy-host, launching again once the host is "
                                            "quiet (in it rank 0 computed") for line in logged), logged)
        # the traced run came after the slow one (the marker was taken) and is compared with traced run 1
        self.assertFalse(any(line.startswith("trace-2: noisy-host") for line in logged), logged)
        from campaign import compute_check
        self.assertEqual(compute_check.check(c, prepare.reference_run_dir(c, 2))[0], "")


class EnvironmentTest(unittest.TestCase):
    def test_references_and_traced_runs_read_LLAMP_DELTA_L_like_the_runs_at_zero(self):
        """The patched MPICH parses LLAMP_DELTA_L in MPI_Init; a reference or traced run without the
        variable is not the run at ΔL = 0 it stands for (a long double parse once made app_halo3d ~5 %
        slower with the variable at 0). Every launch of the app carries it, 0 except the injected runs."""
        d = temp_dir(self)
        seen = os.path.join(d, "seen")
        wrapper = os.path.join(d, "app")
        with open(wrapper, "w") as f:
            f.write(f"""#!/bin/sh
echo "${{LLAMP_DELTA_L-unset}} ${{LLAMP_TRACE_DIR:+traced}} $(basename "$LLAMP_RUNTIME_DIR")" >> '{seen}'
exec '{TEST_APP}' "$@"
""")
        os.chmod(wrapper, os.stat(wrapper).st_mode | stat.S_IEXEC)
        prefix = os.environ.get("LLAMP_PATCHED_MPICH_PREFIX", "")
        deltas = "0,20" if prefix and os.path.exists(os.path.join(prefix, "lib", "libmpich.so.12")) else "0"
        campaign("--build-dir", BUILD_DIR, "--mpiexec", MPIEXEC, "-n", "2", "--delta-l", deltas, "--reps", "1",
                 "--trace-runs", "1", "--params", hand_made_params(d), "--injector-prefix",
                 prefix if deltas != "0" else "", "--core-limit", "off", "-o", os.path.join(d, "c"),
                 "--", wrapper, "--compute-ms", "5", "--iterations", "2")
        with open(seen) as f:
            launches = [line.split() for line in f]
        by_kind = {}
        for fields in launches:
            value, rest = fields[0], fields[1:]
            kind = "traced" if "traced" in rest else "reference" if rest and rest[-1].endswith("-reference") else "run"
            by_kind.setdefault(kind, set()).add(value)
        self.assertEqual(by_kind.get("reference"), {"0"}, launches)
        self.assertEqual(by_kind.get("traced"), {"0"}, launches)
        self.assertEqual(by_kind.get("run"), {"0"} if deltas == "0" else {"0", "20000ns"}, launches)


if __name__ == "__main__":
    unittest.main()
