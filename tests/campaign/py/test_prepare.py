"""Preparation helpers without MPI runs: the reference message size `--o-size auto` derives from a
GOAL graph (mean send size, rounded down to a power of two, at most 4 KiB), the analyzer range, the
schedgen arguments the parameters add, and the launcher arguments that pin ranks to cores."""
import json
import os
import subprocess
import unittest

from campaign_testlib import temp_dir

from campaign import config, environment, prepare


def write_params(d, params):
    """params.json in campaign folder d: JSON text as given, or a dict."""
    with open(os.path.join(d, "params.json"), "w") as f:
        f.write(params if isinstance(params, str) else json.dumps(params))


class BuildGraphTest(unittest.TestCase):
    def test_a_schedgen_that_writes_no_graph_is_a_clear_error(self):
        # `repredict --schedgen-arg=--help` made schedgen print its help and exit 0; the campaign then
        # failed with a Python traceback on the missing graph. /bin/true stands in for it (that path
        # only: it writes nothing and succeeds).
        c = config.Campaign(out_dir=temp_dir(self), app=["app"], ranks=2, deltas_ns=[0.0], reps=1)
        c.tools.llamp = "/bin/true"
        c.schedgen_args = ["--help"]
        with self.assertRaises(prepare.StepError) as e:
            prepare.build_graph(c, trace_dir=c.out_dir)
        self.assertIn("schedgen exited without writing a graph (its arguments: ", str(e.exception))
        self.assertIn("--help", str(e.exception))
        self.assertFalse(os.path.exists(c.path("app.goal")))


class PrepareTest(unittest.TestCase):
    def goal(self, text):
        path = os.path.join(temp_dir(self), "app.goal")
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_mean_send_size_rounded_down(self):
        g = self.goal("num_ranks 2\nrank 0 {\nl0: send 8b to 1 tag 0\nl1: send 1024b to 1\n"
                      "l2: send 1024b to 1 tag 3 cpu 0\nl3: recv 65536b from 1\n}\n"
                      "rank 1 {\nl0: recv 8b from 0\nl1: calc 100\n}\n")
        self.assertEqual(prepare.reference_size_from_graph(g), 512)  # mean 685.3 B; receives ignored

    def test_capped_and_empty(self):
        self.assertEqual(prepare.reference_size_from_graph(self.goal("rank 0 {\nl0: send 1048576b to 1\n}\n")), 4096)
        self.assertEqual(prepare.reference_size_from_graph(self.goal("rank 0 {\nl0: calc 5\n}\n")), 1)

    def test_largest_size_for_the_bandwidth_fit(self):
        # --max-size auto: the largest send rounded up to a power of two, at least 64 KiB (three
        # rendezvous sizes to fit); receives do not count.
        self.assertEqual(prepare.largest_size_from_graph(self.goal(
            "rank 0 {\nl0: send 262144b to 1\nl1: send 32768b to 1\nl2: recv 1048576b from 1\n}\n")), 262144)
        self.assertEqual(prepare.largest_size_from_graph(self.goal("rank 0 {\nl0: send 300000b to 1\n}\n")), 524288)
        self.assertEqual(prepare.largest_size_from_graph(self.goal("rank 0 {\nl0: send 8192b to 1\n}\n")), 65536)
        self.assertEqual(prepare.largest_size_from_graph(self.goal("rank 0 {\nl0: calc 5\n}\n")), 65536)

    def test_analysis_range_never_empty(self):
        c = config.Campaign(out_dir="/nonexistent", app=["a"], ranks=2, deltas_ns=[0.0])
        self.assertEqual(prepare.analysis_range_ns(c, {"L_ns": 0.0}), (0, 1000))
        c.deltas_ns = [0.0, 100000.0]
        self.assertEqual(prepare.analysis_range_ns(c, {"L_ns": 12.5}), (0, 100013))

    def test_collective_overhead_from_the_parameters(self):
        d = temp_dir(self)
        c = config.Campaign(out_dir=d, app=["a"], ranks=2, deltas_ns=[0.0], schedgen_args=["--algo", "bcast=binomial"])
        # No params.json yet (the graph `--o-size auto` needs comes first): the campaign's own arguments.
        self.assertEqual(prepare.schedgen_arguments(c), ["--algo", "bcast=binomial"])
        write_params(d, '{"L_ns": 10, "o_coll_ns": 137.26}')
        self.assertEqual(prepare.schedgen_arguments(c),
                         ["--algo", "bcast=binomial", "--collective-overhead", "137.3ns", "--eager-progress"])
        # An explicit one wins; a measured 0 adds nothing.
        c.schedgen_args = ["--collective-overhead=1us"]
        self.assertEqual(prepare.schedgen_arguments(c), ["--collective-overhead=1us", "--eager-progress"])
        c.schedgen_args = []
        write_params(d, '{"L_ns": 10, "o_coll_ns": 0}')
        self.assertEqual(prepare.schedgen_arguments(c), ["--eager-progress"])

    def test_probe_overhead_from_the_parameters(self):
        d = temp_dir(self)
        c = config.Campaign(out_dir=d, app=["a"], ranks=2, deltas_ns=[0.0], schedgen_args=[])
        write_params(d, '{"L_ns": 10, "o_coll_ns": 84.9, "o_probe_ns": 159.04}')
        self.assertEqual(prepare.schedgen_arguments(c),
                         ["--collective-overhead", "84.9ns", "--probe-overhead", "159.0ns", "--eager-progress"])
        # Each given one wins on its own; the other is still added.
        c.schedgen_args = ["--probe-overhead=1us"]
        self.assertEqual(prepare.schedgen_arguments(c),
                         ["--probe-overhead=1us", "--collective-overhead", "84.9ns", "--eager-progress"])

    def test_first_use_bands_from_the_parameters(self):
        # Per size, the first slow_trips messages of each direction carry the excess: the senders'
        # share per message is the send cost, the rest the receive cost; above S all of it is the
        # receiver's; a launch without the senders' share gives the receivers everything. A given
        # --first-use wins, and --no-first-use (first_use False) adds none.
        d = temp_dir(self)
        c = config.Campaign(out_dir=d, app=["a"], ranks=2, deltas_ns=[0.0], schedgen_args=[])
        rows = [{"bytes": 64, "excess_ns": 240e3, "slow_trips": 3, "send_excess_ns": 60e3},
                {"bytes": 512, "excess_ns": 2.048e6, "slow_trips": 64, "send_excess_ns": 1.792e6},
                {"bytes": 4096, "excess_ns": 1e6, "slow_trips": 0, "send_excess_ns": 0.0},
                {"bytes": 32768, "excess_ns": 0.8e6, "slow_trips": 3.5, "send_excess_ns": 0.8e6}]
        params = {"L_ns": 10, "S_bytes": 8255, "measurement": {"first_use_median": rows}}
        bands = ["64B:3:10000.0ns:30000.0ns", "512B:64:14000.0ns:2000.0ns", "4096B:0:0.0ns:0.0ns",
                 "32768B:4:0.0ns:100000.0ns"]
        self.assertEqual(prepare.first_use_bands(params), bands)
        del rows[0]["send_excess_ns"]
        self.assertEqual(prepare.first_use_bands(params)[0], "64B:3:0.0ns:40000.0ns")
        rows[0]["send_excess_ns"] = 60e3
        write_params(d, params)
        self.assertEqual(prepare.schedgen_arguments(c),
                         ["--S", "8255B", "--eager-progress"] + [a for b in bands for a in ("--first-use", b)])
        c.schedgen_args = ["--first-use=64B:1:1us:1us"]
        self.assertEqual(prepare.schedgen_arguments(c),
                         ["--first-use=64B:1:1us:1us", "--S", "8255B", "--eager-progress"])
        c.schedgen_args, c.first_use = [], False
        self.assertEqual(prepare.schedgen_arguments(c), ["--S", "8255B", "--eager-progress"])
        # Parameters from before the probe: no bands.
        write_params(d, {"L_ns": 10})
        c.first_use = True
        self.assertEqual(prepare.schedgen_arguments(c), ["--eager-progress"])

    def test_rendezvous_threshold_from_the_parameters(self):
        # The graph's rendezvous receives wait for the receiver's progress above params.json's S;
        # a given --S wins, an S of "inf" (UINT64_MAX) adds nothing.
        d = temp_dir(self)
        c = config.Campaign(out_dir=d, app=["a"], ranks=2, deltas_ns=[0.0], schedgen_args=[])
        write_params(d, '{"L_ns": 10, "o_coll_ns": 84.9, "S_bytes": 8255}')
        self.assertEqual(prepare.schedgen_arguments(c),
                         ["--collective-overhead", "84.9ns", "--S", "8255B", "--eager-progress"])
        c.schedgen_args = ["--S=inf"]
        self.assertEqual(prepare.schedgen_arguments(c), ["--S=inf", "--collective-overhead", "84.9ns", "--eager-progress"])
        c.schedgen_args = []
        write_params(d, '{"L_ns": 10, "S_bytes": 18446744073709551615}')
        self.assertEqual(prepare.schedgen_arguments(c), ["--eager-progress"])

    def test_eager_progress_unless_told_otherwise(self):
        # An eager receive's copy waits for the receiver's progressing call as a rendezvous
        # handshake does (MPICH without an asynchronous progress thread); a given
        # --[no-]eager-progress or --async-progress wins.
        d = temp_dir(self)
        c = config.Campaign(out_dir=d, app=["a"], ranks=2, deltas_ns=[0.0], schedgen_args=[])
        write_params(d, '{"L_ns": 10, "S_bytes": 8255}')
        self.assertEqual(prepare.schedgen_arguments(c), ["--S", "8255B", "--eager-progress"])
        for given in (["--no-eager-progress"], ["--async-progress"], ["--eager-progress"]):
            c.schedgen_args = given
            self.assertEqual(prepare.schedgen_arguments(c), given + ["--S", "8255B"])

    def test_cold_handshake_from_the_parameters(self):
        # llamp-loggp's o_rndv_cold_ns and the computation it was measured after become
        # --cold-handshake, with --S only (it prices handshakes the gate starts); a given
        # --cold-handshake or --async-progress wins, and a parameter file without it adds nothing.
        d = temp_dir(self)
        c = config.Campaign(out_dir=d, app=["a"], ranks=2, deltas_ns=[0.0], schedgen_args=[])
        params = {"L_ns": 10, "S_bytes": 8255, "o_rndv_cold_ns": 2850.04,
                  "measurement": {"cold_handshake": {"compute_ns": 100000.0}}}
        write_params(d, params)
        self.assertEqual(prepare.schedgen_arguments(c),
                         ["--S", "8255B", "--eager-progress", "--cold-handshake", "2850.0ns:100000ns"])
        c.schedgen_args = ["--cold-handshake=0ns:0ns"]
        self.assertEqual(prepare.schedgen_arguments(c), c.schedgen_args + ["--S", "8255B", "--eager-progress"])
        c.schedgen_args = ["--async-progress"]
        self.assertEqual(prepare.schedgen_arguments(c), c.schedgen_args + ["--S", "8255B"])
        c.schedgen_args = []
        for change in ({"S_bytes": 2**64 - 1}, {"o_rndv_cold_ns": 0.0}):
            write_params(d, dict(params, **change))
            self.assertNotIn("--cold-handshake", prepare.schedgen_arguments(c), change)
        # The median over launches, like the other parameters.
        launches = [dict(params, o_rndv_cold_ns=v) for v in (2800.0, 4500.0, 3100.0)]
        self.assertAlmostEqual(prepare.combine_parameter_files(launches)["o_rndv_cold_ns"], 3100.0)

    def test_parameters_of_several_launches(self):
        a = {"format": "llamp-loggp", "version": 1, "L_ns": 10.0, "o_ns": 100.0, "g_ns": 50.0, "G_ns_per_byte": 0.08,
             "S_bytes": 8255, "o_send_ns": 50.0, "o_recv_ns": 150.0, "o_coll_ns": 140.0,
             "o_probe_ns": 160.0, "o_rndv_ns": 1900.0, "measurement": {"tool": "llamp-loggp", "host": "vm"}}
        b = dict(a, L_ns=310.0, o_send_ns=80.0, S_bytes=8191, o_rndv_ns=1750.0,
                 measurement={"tool": "llamp-loggp", "host": "other"})
        c = dict(a, L_ns=40.0, S_bytes=8255)
        p = prepare.combine_parameter_files([a, b, c])
        self.assertAlmostEqual(p["L_ns"], 40.0)  # the median: one launch slow mid-job does not move it
        self.assertAlmostEqual(p["o_send_ns"], 50.0)
        self.assertAlmostEqual(p["o_coll_ns"], 140.0)
        self.assertAlmostEqual(p["o_probe_ns"], 160.0)
        self.assertAlmostEqual(p["o_rndv_ns"], 1900.0)
        self.assertEqual(p["S_bytes"], 8255)  # the median
        self.assertEqual(p["measurement"]["host"], "vm")
        self.assertEqual([x["L_ns"] for x in p["measurement"]["launches"]], [10.0, 310.0, 40.0])
        self.assertEqual(a["L_ns"], 10.0)  # the inputs are left alone
        # The machine's busy-wait overrun, per launch and averaged.
        a["measurement"] = {"busy_wait_overrun": {"mean": 0.01}}
        b["measurement"] = {"busy_wait_overrun": {"mean": 0.03}}
        p = prepare.combine_parameter_files([a, b])
        self.assertAlmostEqual(p["L_ns"], 160.0)  # an even count: the mean of the middle two
        self.assertEqual([x["busy_wait_overrun"] for x in p["measurement"]["launches"]], [0.01, 0.03])
        self.assertAlmostEqual(p["measurement"]["busy_wait_overrun_mean"], 0.02)
        self.assertNotIn("cold_copy_median_ns", p["measurement"])  # no launch measured it
        # How cold a waiting core comes back: per launch, and the median of each figure.
        for f, (hot, after) in zip((a, b, c), ((400.0, 1300.0), (450.0, 900.0), (420.0, 2500.0))):
            f["measurement"] = {"cold_copy": {"hot_ns": hot, "after_wait_ns": after}}
        p = prepare.combine_parameter_files([a, b, c])
        self.assertEqual([x["cold_copy_ns"] for x in p["measurement"]["launches"]],
                         [[400.0, 1300.0], [450.0, 900.0], [420.0, 2500.0]])
        self.assertEqual(p["measurement"]["cold_copy_median_ns"], [420.0, 1300.0])
        self.assertNotIn("first_use_median", p["measurement"])  # no launch measured it
        # The transport's first use: per launch, and per size the median over the launches that
        # measured that size (an older launch without 4096 B leaves that size two launches).
        def first(excess_512, excess_4096=None):
            sizes = [{"bytes": 512, "trips": 200, "first_rtt_ns": 9e4, "warm_rtt_ns": 900.0,
                      "excess_ns": excess_512, "slow_trips": 60}]
            if excess_4096 is not None:
                sizes.append({"bytes": 4096, "trips": 200, "first_rtt_ns": 9e4, "warm_rtt_ns": 2000.0,
                              "excess_ns": excess_4096, "slow_trips": 58})
            return {"first_use": {"trips": 200, "sizes": sizes}}
        a["measurement"], b["measurement"], c["measurement"] = first(2e6, 3e6), first(4e6), first(1e6, 5e6)
        # The senders' share, where every launch measured it (512 B here; b's 4096 B is missing, and
        # c's 4096 B has none: a launch from before it was measured).
        for f, share in zip((a, b, c), (1.5e6, 3e6, 0.5e6)):
            f["measurement"]["first_use"]["sizes"][0]["send_excess_ns"] = share
        a["measurement"]["first_use"]["sizes"][1]["send_excess_ns"] = 1e6
        p = prepare.combine_parameter_files([a, b, c])
        self.assertEqual([len(x["first_use"]) for x in p["measurement"]["launches"]], [2, 1, 2])
        self.assertEqual(p["measurement"]["launches"][0]["first_use"][0],
                         {"bytes": 512, "warm_rtt_ns": 900.0, "excess_ns": 2e6, "slow_trips": 60,
                          "send_excess_ns": 1.5e6})
        self.assertEqual(p["measurement"]["first_use_median"],
                         [{"bytes": 512, "launches": 3, "warm_rtt_ns": 900.0, "excess_ns": 2e6, "slow_trips": 60,
                           "send_excess_ns": 1.5e6},
                          {"bytes": 4096, "launches": 2, "warm_rtt_ns": 2000.0, "excess_ns": 4e6,
                           "slow_trips": 58}])


class InterleavedParametersTest(unittest.TestCase):
    """Parameter launch 1 before the runs gives a provisional params.json; the others, spread among
    the runs (interleaved_parameter_slots), make it again with the analyses it fed dropped. The
    launches are hand-made files here (measure_parameters launches only what is missing)."""

    def launch(self, c, k, L):
        with open(c.path(f"params-{k}.json"), "w") as f:
            json.dump({"format": "llamp-loggp", "version": 1, "L_ns": L, "o_ns": 100.0, "g_ns": 0.0,
                       "G_ns_per_byte": 0.15, "S_bytes": 8255, "measurement": {"tool": "llamp-loggp"}}, f)

    def test_provisional_then_all_launches(self):
        c = config.Campaign(out_dir=temp_dir(self), app=["a"], ranks=2, deltas_ns=[0.0, 1000.0], reps=5,
                            param_runs=5)
        c.schedule = [object()] * 10
        self.assertEqual(prepare.interleaved_parameter_slots(c), {2: [2], 4: [3], 6: [4], 8: [5]})
        self.launch(c, 1, 100.0)
        prepare.measure_parameters(c, log=lambda *_: None, first_only=True)
        with open(c.path("params.json")) as f:
            params = json.load(f)
        self.assertEqual((params["L_ns"], params["measurement"]["combined_launches"]), (100.0, [1]))
        for k, L in ((2, 10.0), (3, 20.0), (4, 30.0), (5, 40.0)):
            self.launch(c, k, L)
        for name in ("analysis.json", "analysis-noise.json"):
            open(c.path(name), "w").close()
        prepare.measure_parameters(c, log=lambda *_: None)
        with open(c.path("params.json")) as f:
            params = json.load(f)
        self.assertEqual((params["L_ns"], params["measurement"]["combined_launches"]), (30.0, [1, 2, 3, 4, 5]))
        self.assertFalse(os.path.exists(c.path("analysis.json")))  # it analysed the provisional parameters
        self.assertFalse(os.path.exists(c.path("analysis-noise.json")))
        open(c.path("analysis.json"), "w").close()
        prepare.measure_parameters(c, log=lambda *_: None)  # nothing new: params.json and the analysis stay
        self.assertTrue(os.path.exists(c.path("analysis.json")))


class BindingTest(unittest.TestCase):
    def setUp(self):
        self.hydra = os.environ.get("LLAMP_TEST_MPIEXEC") or "mpiexec.mpich"
        self.cores = len(os.sched_getaffinity(0))
        self.notes = []

    def bind(self, launcher, bind_to, ranks, mode="local"):
        return environment.binding_args(launcher, bind_to, ranks, mode, log=self.notes.append)

    def test_hydra_pins_one_rank_per_core(self):
        self.assertEqual(self.bind(self.hydra, "core", 1), ["-bind-to", "core"])
        self.assertEqual(self.bind(self.hydra, "core", self.cores), ["-bind-to", "core"])
        self.assertEqual(self.notes, [])

    def test_not_pinned_when_asked_oversubscribed_or_not_hydra(self):
        self.assertEqual(self.bind(self.hydra, "none", 1), [])
        self.assertEqual(self.bind(self.hydra, "core", self.cores + 1), [])
        self.assertIn("not pinned", self.notes[-1])
        # A Slurm node's cores are not this machine's: the allocation decides there.
        self.assertEqual(self.bind(self.hydra, "core", self.cores + 1, mode="slurm"), ["-bind-to", "core"])
        self.assertEqual(self.bind("/bin/echo", "core", 1), [])  # prints "--version", not Hydra's banner
        self.assertIn("not MPICH's Hydra", self.notes[-1])

    def test_ranks_stay_inside_the_affinity_mask(self):
        # taskset / a cpuset: Hydra's -bind-to core would put rank 0 on the machine's core 0.
        everything = os.sched_getaffinity(0)
        last = max(everything)
        if len(everything) < 2:
            self.skipTest("needs two CPUs")
        os.sched_setaffinity(0, {last})
        try:
            args = self.bind(self.hydra, "core", 1)
            self.assertEqual(args, ["-bind-to", f"user:{last}"])
            self.assertIn(f"CPUs {last} only", self.notes[-1])
            self.assertEqual(self.bind(self.hydra, "hwthread", 1), ["-bind-to", f"user:{last}"])
            self.assertEqual(self.bind(self.hydra, "core", 2), [])  # one CPU left: not pinned
            # The rank Hydra starts with these arguments runs on that CPU, not on CPU 0.
            out = subprocess.run([self.hydra, *args, "-n", "1", "grep", "Cpus_allowed_list", "/proc/self/status"],
                                 capture_output=True, text=True, timeout=60)
            self.assertEqual(out.stdout.split(), ["Cpus_allowed_list:", str(last)], out.stderr)
        finally:
            os.sched_setaffinity(0, everything)
        self.assertEqual(self.bind(self.hydra, "core", 1), ["-bind-to", "core"])  # the whole machine

    def test_several_cores_per_rank_for_threads(self):
        self.assertEqual(self.bind(self.hydra, f"core:{self.cores}", 1), ["-bind-to", f"core:{self.cores}"])
        self.assertEqual(self.bind(self.hydra, f"core:{self.cores}", 2), [])  # 2 x all cores: oversubscribed
        with self.assertRaises(SystemExit):
            self.bind(self.hydra, "cores", 1)


if __name__ == "__main__":
    unittest.main()
