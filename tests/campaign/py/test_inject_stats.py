"""The injector's delivery in the report: the LLAMP_INJECT_STATS lines of the runs at ΔL > 0 parsed,
summarised per ΔL on hand-made figures, shown in report.md, and a run whose ranks printed none (the
unpatched MPICH loaded) recorded as failed, never averaged in."""
import json
import os
import unittest

from campaign_testlib import temp_dir
from test_report import hand_made_campaign

from campaign import inject_stats, report, runs

# The format injector/src/ucx_binding.c prints (print_stats), one line per rank.
LINE = ("llamp-inject: rank={rank} delta_l_ns=10000 delayed={delayed} lateness_median_ns={median} "
        "lateness_p99_ns={p99} lateness_max_ns={max} lateness_mean_ns={mean} lateness_total_ns={total} "
        "lateness_count={timed} dropped_at_finalize={dropped} stamped={stamped} due_when_seen={due} "
        "due_outside_mpi={outside} by_type=EAGER_ONLY:{delayed} turns=gate watch=off\n")


def line(rank, delayed, median, p99, mx, total, dropped=0, stamped=None, due=0, outside=0):
    timed = delayed - due - outside
    return LINE.format(rank=rank, delayed=delayed, median=median, p99=p99, max=mx, mean=total // timed if timed else 0,
                       total=total, timed=timed, dropped=dropped, stamped=delayed if stamped is None else stamped,
                       due=due, outside=outside)


class ParseTest(unittest.TestCase):
    def test_lines_of_every_rank_among_the_applications_output(self):
        text = ("$ mpiexec -n 2 app\nresult 42\n" + line(1, 300, 30, 4000, 9000, 60000, due=100)
                + "checksum 7\n" + line(0, 200, 40, 5000, 8000, 50000, dropped=2))
        parsed = inject_stats.parse(text)
        self.assertEqual(sorted(parsed), [0, 1])
        self.assertEqual(parsed[1]["delayed"], 300)
        self.assertEqual(parsed[1]["due_when_seen"], 100)
        self.assertEqual(parsed[1]["lateness_mean_ns"], 300)
        self.assertEqual(parsed[0]["dropped_at_finalize"], 2)
        self.assertEqual(parsed[0]["turns"], "gate")
        self.assertEqual((parsed[0]["watch"], parsed[1]["lateness_count"]), ("off", 200))
        self.assertEqual(inject_stats.missing_ranks(parsed, 2), [])
        self.assertEqual(inject_stats.missing_ranks(parsed, 3), [2])
        self.assertEqual([x["rank"] for x in inject_stats.for_record(parsed)], [0, 1])

    def test_a_line_cut_by_other_output_keeps_its_whole_fields_only(self):
        # rank 1's line stops in the middle of a value: that value and what follows are not taken,
        # so the rank counts as missing (its counts are incomplete)
        text = line(0, 10, 1, 2, 3, 40) + "llamp-inject: rank=1 delta_l_ns=10000 delayed=1x\n"
        parsed = inject_stats.parse(text)
        self.assertEqual(parsed[1], {"delta_l_ns": 10000})
        self.assertEqual(inject_stats.missing_ranks(parsed, 2), [1])

    def test_a_line_inside_another_ranks_line_is_read_as_its_own(self):
        # stop 59 (4 ranks, glibc 2.39): rank 0's line came in two pieces with rank 3's whole line
        # between them; rank 3's counts must not be read as rank 0's, and neither rank is missing
        zero, three = line(0, 8002, 32, 1286, 126328, 942569), line(3, 8000, 39, 3820, 183197, 1059121)
        cut = zero.index(" by_type=")
        text = line(2, 8001, 29, 1649, 57087, 607203) + zero[:cut] + three + zero[cut:]
        parsed = inject_stats.parse(text)
        self.assertEqual(sorted(parsed), [0, 2, 3])
        self.assertEqual((parsed[0]["delayed"], parsed[0]["lateness_total_ns"]), (8002, 942569))
        self.assertNotIn("by_type", parsed[0])  # its tail came on a line of its own
        self.assertEqual((parsed[3]["delayed"], parsed[3]["lateness_total_ns"], parsed[3]["watch"]),
                         (8000, 1059121, "off"))
        self.assertEqual(inject_stats.missing_ranks(parsed, 4), [1])

    def test_lines_without_a_lateness_count_time_the_releases_not_due_when_seen(self):
        # the injector before lateness_count: delayed − due_when_seen releases were timed
        c = hand_made_campaign(self)
        old = line(0, 120, 40, 5000, 9000, 200000, due=20).replace(" lateness_count=100", "").replace(
            " due_outside_mpi=0", "")
        add_stats(c, {10000.0: [[old, old]]})
        row = report.build(c)["injector_delivery"][0]
        self.assertAlmostEqual(row["lateness_mean_ns"], 200000 / 100)
        self.assertIsNone(row["due_outside_mpi"])
        self.assertIn("Lines without due_outside_mpi", report.markdown(c, report.build(c)))

    def test_no_line_in_a_run_without_the_injector(self):
        parsed = inject_stats.parse("$ mpiexec -n 2 app\nresult 42\n")
        self.assertEqual(inject_stats.missing_ranks(parsed, 2), [0, 1])


def add_stats(c, by_delta):
    """Adds hand-made per-rank lines to the ok records of each ΔL, run by run in slot order."""
    for name in sorted(os.listdir(c.path("runs"))):
        path = c.path("runs", name, "record.json")
        with open(path) as f:
            record = json.load(f)
        pending = by_delta.get(record["delta_ns"])
        if record["status"] != "ok" or not pending:
            continue
        record["inject_stats"] = inject_stats.for_record(inject_stats.parse("".join(pending.pop(0))))
        with open(path, "w") as f:
            json.dump(record, f)


class DeliveryTest(unittest.TestCase):
    def campaign_with_stats(self):
        c = hand_made_campaign(self)  # measured means 1.01, 1.06, 1.12 s at ΔL 0, 10, 20 µs
        add_stats(c, {
            10000.0: [[line(0, 100, 20, 3000, 7000, 100000), line(1, 140, 40, 5000, 9000, 200000, due=20, outside=20)],
                      [line(0, 100, 30, 4000, 8000, 300000), line(1, 100, 50, 6000, 6000, 400000)]],
            20000.0: [[line(0, 50, 10, 1000, 2000, 50000, dropped=1), line(1, 50, 10, 1000, 2000, 50000)]],
        })
        return c

    def test_summary_per_delta_on_hand_made_lines(self):
        c = self.campaign_with_stats()
        r = report.build(c)
        rows = {row["delta_ns"]: row for row in r["injector_delivery"]}
        self.assertEqual(sorted(rows), [10000.0, 20000.0])  # nothing at ΔL = 0
        ten = rows[10000.0]
        self.assertEqual((ten["runs"], ten["rank_lines"]), (2, 4))
        self.assertAlmostEqual(ten["held_per_rank"], (100 + 140 + 100 + 100) / 4)
        self.assertAlmostEqual(ten["lateness_median_ns"], (30 + 40) / 2)  # median of 20, 30, 40, 50
        self.assertAlmostEqual(ten["lateness_p99_ns"], (4000 + 5000) / 2)
        self.assertEqual(ten["lateness_max_ns"], 9000)
        # 1 ms of late time over the 400 releases that were timed (of 440: 20 were due when seen, 20
        # released in the first pass of an MPI call)
        self.assertAlmostEqual(ten["lateness_mean_ns"], 1e6 / 400)
        self.assertAlmostEqual(ten["late_per_rank_ns"], 1e6 / 4)
        self.assertAlmostEqual(ten["due_when_seen"], 20 / 440)
        self.assertAlmostEqual(ten["due_outside_mpi"], 20 / 440)
        self.assertEqual(ten["turns"], ["gate"])
        # the measured means' increase over ΔL = 0 (1.06 − 1.01 s), and measured − LogGPS (1.06 − 1.05 s)
        self.assertAlmostEqual(ten["measured_increase_ns"], 0.05e9, delta=1)
        self.assertAlmostEqual(ten["measured_minus_loggps_ns"], 0.01e9, delta=1)
        self.assertNotIn("replay_adds_ns", ten)  # no analysis with noise
        # two runs at one ΔL and one at the other leave no degree of freedom for a line within ΔL
        self.assertIsNone(r["injector_late_spread"])
        self.assertEqual(rows[20000.0]["dropped_at_finalize"], 1)
        self.assertEqual(rows[20000.0]["runs"], 1)

        text = report.markdown(c, r)
        self.assertIn("The injector's delivery", text)
        self.assertIn("| 10.0 µs | 2 | 110 | 35 ns | 4.50 µs | 2500 ns | 0.25 ms | 10.00 ms | – | 4.5 % | 4.5 % |", text)
        self.assertIn("Messages still held at MPI_Finalize: 1 (", text)
        self.assertIn("took turns by gate", text)

    def test_replay_share_beside_the_late_releases(self):
        c = self.campaign_with_stats()
        points = [{"L_ns": 2000.0 + d, "T_model_ns": 5e8, "T_noise_mean_ns": 5e8 + added, "T_noise_median_ns": 6e8}
                  for d, added in ((0.0, 4e6), (10000.0, 6e6), (20000.0, 8e6))]
        with open(c.path("analysis-noise.json"), "w") as f:
            json.dump({"noise": {"files": [], "samples": 32, "lanes": [{"lane": 0, "fraction": 0.01}],
                                 "points": points}}, f)
        rows = {row["delta_ns"]: row for row in report.build(c)["injector_delivery"]}
        self.assertAlmostEqual(rows[10000.0]["replay_adds_ns"], 6e6)
        self.assertAlmostEqual(rows[20000.0]["replay_adds_ns"], 8e6)

    def test_no_section_without_lines(self):
        c = hand_made_campaign(self)  # records from before LLAMP_INJECT_STATS was set
        r = report.build(c)
        self.assertEqual(r["injector_delivery"], [])
        self.assertNotIn("The injector's delivery", report.markdown(c, r))


def record(delta_ns, runtime_ns, late_per_rank_ns, status="ok"):
    """A run's record as runs.py keeps it, with two ranks' lines of the given late times."""
    return {"delta_ns": delta_ns, "runtime_ns": runtime_ns, "status": status,
            "inject_stats": [{"rank": rank, "delayed": 100, "lateness_total_ns": late}
                             for rank, late in enumerate(late_per_rank_ns)]}


class LateSpreadTest(unittest.TestCase):
    """inject_stats.late_spread: the runs' spread at one ΔL against their late releases."""

    def test_runtimes_that_follow_the_late_time_three_to_one(self):
        records = [record(10000.0, 1.0e9 + 3 * (a + b), (a, b)) for a, b in ((1e6, 0), (2e6, 1e6), (0, 4e6))]
        records += [record(20000.0, 1.5e9 + 3 * late, (late, 0)) for late in (5e6, 9e6)]
        # not counted: ΔL = 0, a failed run, a run without the injector's lines
        records += [record(0.0, 0.9e9, (0, 0)), record(10000.0, 9e9, (1e9, 0), status="failed"),
                    dict(record(20000.0, 7e9, (0, 0)), inject_stats=[])]
        spread = inject_stats.late_spread(records)
        self.assertEqual((spread["runs"], spread["deltas"]), (5, 2))
        self.assertAlmostEqual(spread["slope"], 3.0)
        self.assertAlmostEqual(spread["slope_se"], 0.0)
        self.assertAlmostEqual(spread["correlation"], 1.0)
        self.assertAlmostEqual(spread["explained"], 1.0)
        self.assertAlmostEqual(spread["residual_sd_ns"], 0.0, delta=1)  # ns, of runtimes of 1 s
        # late times 1, 3, 4 ms about their mean 8/3 and 5, 9 ms about 7: squares sum to 14/3 + 8 ms²,
        # over 5 runs less 2 means
        self.assertAlmostEqual(spread["late_sd_ns"], ((14 / 3 + 8) / 3) ** 0.5 * 1e6)
        self.assertAlmostEqual(spread["runtime_sd_ns"], 3 * spread["late_sd_ns"])

        text = "\n".join(report._late_spread_paragraph(spread))
        self.assertIn("(5 runs at 2 ΔL values)", text)
        self.assertIn("slope 3.00 ± 0.00 (a run whose ranks released 1 ms later in all took 3.00 ms longer)", text)
        self.assertIn("accounts for 100 % of the runtimes' spread", text)
        self.assertIn("A slope well above 1", text)
        self.assertIn("(the recordings) (docs/campaign.md, \"The injector's delivery\").", text)

    def test_runtimes_that_do_not_follow_it(self):
        # at each ΔL the slow run and the fast run had the same late times
        records = [record(10000.0, runtime, (late, 0)) for runtime, late in
                   ((1.0e9, 1e6), (1.2e9, 1e6), (1.0e9, 3e6), (1.2e9, 3e6))]
        spread = inject_stats.late_spread(records)
        self.assertAlmostEqual(spread["slope"], 0.0)
        self.assertAlmostEqual(spread["explained"], 0.0)
        self.assertAlmostEqual(spread["residual_sd_ns"], (4 * 0.1e9 ** 2 / 2) ** 0.5)
        self.assertIn("mostly not the host's stalls", "".join(report._late_spread_paragraph(spread)))

    def test_a_slope_near_one(self):
        records = [record(10000.0, 1.0e9 + late + noise, (late, 0))
                   for late, noise in ((1e6, 1e4), (2e6, -1e4), (3e6, 1e4), (4e6, -1e4))]
        spread = inject_stats.late_spread(records)
        self.assertAlmostEqual(spread["slope"], 1.0, delta=0.02)
        self.assertIn("A slope near 1", "".join(report._late_spread_paragraph(spread)))

    def test_none_without_two_runs_at_some_delta(self):
        self.assertIsNone(inject_stats.late_spread([record(10000.0, 1e9, (1e6, 0)), record(20000.0, 2e9, (2e6, 0))]))
        # equal late times leave no line to fit
        self.assertIsNone(inject_stats.late_spread([record(10000.0, t, (1e6, 0)) for t in (1e9, 2e9, 3e9)]))
        self.assertEqual(report._late_spread_paragraph(None), [])


class CheckInjectionTest(unittest.TestCase):
    """runs._check_injection on a run's output.log (the real path is tested with Debian's unpatched
    MPICH in test_local_campaign)."""

    def record_for(self, text):
        d = temp_dir(self)
        with open(os.path.join(d, "output.log"), "w") as f:
            f.write(text)
        record = {"status": runs.OK, "reason": "", "directory": "runs/slot-0001-a1"}
        runs._check_injection(record, d, 2)
        return record

    def test_every_rank_printed(self):
        record = self.record_for(line(0, 1, 1, 1, 1, 1) + line(1, 1, 1, 1, 1, 1))
        self.assertEqual(record["status"], runs.OK)
        self.assertEqual([x["rank"] for x in record["inject_stats"]], [0, 1])

    def test_a_rank_without_its_line_fails_the_run(self):
        record = self.record_for(line(0, 1, 1, 1, 1, 1))
        self.assertEqual(record["status"], runs.FAILED)
        self.assertIn("rank(s) 1: LLAMP_DELTA_L was not injected", record["reason"])
        self.assertIn("runs/slot-0001-a1/output.log", record["reason"])


if __name__ == "__main__":
    unittest.main()
