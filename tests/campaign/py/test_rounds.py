"""--floor-target: when a campaign adds a round (the noise floor of the measured means above the
target, fewer than --max-reps rounds), and what the added round is (the next round of the same
seeded shuffle, saved in campaign.json). --trace-floor-target: when it adds a traced run (the
traces' floor of the traced runs so far, against the measured means so far, above the target)."""
import json
import math
import os
import unittest

from campaign_testlib import temp_dir
from test_report import write_record

from campaign import config, ensemble, noise, prepare, report, rounds, runs, schedule


def campaign_with_runs(test, target_pct, max_reps):
    out = temp_dir(test)
    deltas = [0.0, 10000.0]
    c = config.Campaign(out_dir=out, app=["app"], ranks=2, deltas_ns=deltas, reps=2, seed=7,
                        floor_target_pct=target_pct, max_reps=max_reps,
                        schedule=schedule.make_schedule(deltas, 2, 7))
    c.save()
    # std of each pair 0.01414 s, so std²/n = 1e-4 s² at both ΔL: floor = 0.01 / 1.035 = 0.966 %.
    by_delta = {0.0: [1.00e9, 1.02e9], 10000.0: [1.05e9, 1.07e9]}
    for s in c.schedule:
        write_record(c, s.slot, s.round, s.delta_ns, 1, "ok", by_delta[s.delta_ns][s.round])
    return c


class RoundsTest(unittest.TestCase):
    def test_floor_above_the_target_asks_for_a_round(self):
        c = campaign_with_runs(self, target_pct=0.5, max_reps=4)
        more, floor = rounds.wants_another_round(c, runs.load_records(c))
        self.assertTrue(more)
        self.assertAlmostEqual(100 * floor, 100 * 0.01 / 1.035, places=6)

    def test_floor_below_the_target_or_max_reps_reached_stops(self):
        c = campaign_with_runs(self, target_pct=1.0, max_reps=4)
        self.assertFalse(rounds.wants_another_round(c, runs.load_records(c))[0])
        c = campaign_with_runs(self, target_pct=0.5, max_reps=2)
        self.assertFalse(rounds.wants_another_round(c, runs.load_records(c))[0])

    def test_off_without_a_target(self):
        c = campaign_with_runs(self, target_pct=0.0, max_reps=0)
        self.assertEqual(rounds.wants_another_round(c, runs.load_records(c)), (False, None))

    def test_unknown_floor_counts_as_unmet(self):
        c = campaign_with_runs(self, target_pct=0.5, max_reps=4)
        first_round_only = [r for r in runs.load_records(c) if r["round"] == 0]
        self.assertEqual(rounds.wants_another_round(c, first_round_only), (True, None))

    def test_a_delta_with_fewer_than_two_ok_runs_asks_for_a_round(self):
        # Floor below the target (1 %), but ΔL = 10 µs has one ok run: the other was slow-cores.
        c = campaign_with_runs(self, target_pct=1.0, max_reps=4)
        records = runs.load_records(c)
        late = next(r for r in records if r["delta_ns"] == 10000.0 and r["round"] == 1)
        write_record(c, late["slot"], 1, 10000.0, 1, "slow-cores", 1.07e9)
        records = runs.load_records(c)
        self.assertEqual(rounds.thin_deltas(c, records), [10000.0])
        more, floor = rounds.wants_another_round(c, records)
        self.assertTrue(more)
        self.assertLess(100 * floor, 1.0)
        self.assertIn("fewer than two ok runs at ΔL = 10 µs", rounds._why(c, records, floor))
        # ... and not past --max-reps.
        c.max_reps = 2
        self.assertFalse(rounds.wants_another_round(c, records)[0])

    def test_what_a_target_left_unmet_would_cost(self):
        # The floor falls with sqrt(runs): 0.966 % after 2 rounds needs 2 (0.966 / 0.5)^2 = 7.5,
        # i.e. 8 rounds, and the report says so when --max-reps stopped the campaign above it.
        c = campaign_with_runs(self, target_pct=0.5, max_reps=2)
        _, floor = rounds.wants_another_round(c, runs.load_records(c))
        self.assertEqual(rounds.count_to_reach(2, floor, 0.5), 8)
        self.assertEqual(rounds.count_to_reach(8, 0.005, 0.5), 8)
        result = {"rounds": 2, "reps": 2, "floor_target_pct": 0.5, "rrmse_noise_floor": floor}
        self.assertIn("about 8 rounds would reach it", report._rounds_sentence(result))
        result["rrmse_noise_floor"] = 0.004
        self.assertNotIn("would reach it", report._rounds_sentence(result))

    def test_added_round_continues_the_seeded_shuffle_and_is_saved(self):
        c = campaign_with_runs(self, target_pct=0.5, max_reps=4)
        new = rounds.add_round(c)
        self.assertEqual([s.slot for s in new], [4, 5])
        self.assertEqual({s.round for s in new}, {2})
        self.assertEqual(sorted(s.delta_ns for s in new), [0.0, 10000.0])
        self.assertEqual(c.schedule, schedule.make_schedule(c.deltas_ns, 3, 7))
        self.assertEqual(config.load(c.out_dir).schedule, c.schedule)
        self.assertEqual(rounds.rounds_in(c.schedule), 3)


def traced(c, k, added_because=""):
    """Traced run k's done mark, and why it was added (no trace inside: its analysis below is the
    one the floor reads)."""
    os.makedirs(prepare.trace_run_dirs(c, k)[0], exist_ok=True)
    open(prepare.trace_run_dirs(c, k)[0] + ".done", "w").close()
    if added_because:
        with open(prepare.trace_run_dirs(c, k)[0] + ".added", "w") as f:
            f.write(added_because)


def analysed(c, k, t0_ns, slope):
    """analysis-trace-k.json as ensemble.py leaves it for traced run k: T = t0 + slope * L over 0-20 µs
    (L0 = 0), recorded as made from the campaign's present inputs, so it is current."""
    analysis = {"format": "llamp-analysis", "version": 1, "latency_variable": "L", "L0_ns": 0.0,
                "runtime_ns": t0_ns, "lambda_L": slope, "rho_L": 0.0, "critical_latencies_ns": [],
                "curve": [{"L_begin_ns": 0.0, "L_end_ns": 20000.0, "T_begin_ns": t0_ns,
                           "T_end_ns": t0_ns + slope * 20000.0, "lambda_L": slope}],
                "tolerance": [], "made_from": ensemble._made_from(c, k)}
    with open(ensemble.member_path(c, k), "w") as f:
        json.dump(analysis, f)


class TraceFloorTest(unittest.TestCase):
    def campaign(self, target_pct, max_trace_runs):
        c = campaign_with_runs(self, target_pct=0.0, max_reps=0)
        c.trace_runs, c.trace_floor_target_pct, c.max_trace_runs = 2, target_pct, max_trace_runs
        with open(c.path("params.json"), "w") as f:
            json.dump({"L_ns": 0.0}, f)
        return c

    def test_floor_of_the_traced_runs_so_far_against_the_measured_means(self):
        c = self.campaign(0.5, 6)
        records = runs.load_records(c)
        self.assertIsNone(ensemble.traces_floor(c, records))  # no traced run yet
        traced(c, 1)
        analysed(c, 1, 1.00e9, 2000.0)
        self.assertIsNone(ensemble.traces_floor(c, records))  # one: no spread yet
        traced(c, 2)
        analysed(c, 2, 1.04e9, 4000.0)
        # ΔL 0: 1.00 and 1.04 s; 10 µs: 1.02 and 1.08 s. se = gap / 2: 0.02 and 0.03 s; measured
        # means 1.01 and 1.06 s.
        floor = math.sqrt((0.02e9 ** 2 + 0.03e9 ** 2) / 2) / 1.035e9
        self.assertAlmostEqual(ensemble.traces_floor(c, records), floor, places=9)
        self.assertTrue(rounds.wants_another_trace(c, floor))  # 2.46 % > 0.5 %
        c.trace_floor_target_pct = 3.0
        self.assertFalse(rounds.wants_another_trace(c, floor))

    def test_rounds_added_after_the_floor_was_met_keep_tracing_up_to_max_trace_runs(self):
        c = self.campaign(0.5, 3)
        traced(c, 1)
        traced(c, 2)
        self.assertFalse(rounds.wants_another_trace(c, 0.001))  # 0.1 % < 0.5 %: the floor is met
        self.assertTrue(rounds.keeps_traces_in_step(c))  # a round added for the noise still brings one
        traced(c, 3, "every-round")
        self.assertFalse(rounds.keeps_traces_in_step(c))  # --max-trace-runs 3 reached
        self.assertEqual(prepare.added_because(c, 3), "every-round")
        c.trace_floor_target_pct, c.max_trace_runs = 0.0, 10
        self.assertFalse(rounds.keeps_traces_in_step(c))  # without --trace-floor-target, the traced runs planned

    def test_unknown_floor_asks_for_a_trace_up_to_max_trace_runs(self):
        c = self.campaign(0.5, 3)
        traced(c, 1)
        self.assertTrue(rounds.wants_another_trace(c, None))
        traced(c, 2)
        traced(c, 3, "trace-floor-target")
        self.assertEqual(prepare.traced_count(c), 3)
        self.assertFalse(rounds.wants_another_trace(c, 0.05))  # --max-trace-runs 3 reached
        self.assertEqual(prepare.added_because(c, 3), "trace-floor-target")
        self.assertEqual(prepare.added_because(c, 2), "")
        # A recalibration that takes traced run 3 back (rejudge.py removes its done mark) leaves it
        # counted, so it is launched again, for the same reason.
        os.remove(prepare.trace_run_dirs(c, 3)[0] + ".done")
        self.assertEqual(prepare.traced_count(c), 3)
        self.assertEqual(prepare.added_because(c, 3), "trace-floor-target")

    def test_traced_runs_an_added_round_brings(self):
        # Floor 2 % against a target of 0.5 % with 4 traced runs: 4 * 16 = 64 in all, 60 more, over
        # the 4 rounds left (2 of 6 scheduled) -> 15.
        c = self.campaign(0.5, 80)
        c.max_reps = 6
        for k in range(1, 5):
            traced(c, k, "trace-floor-target" if k > 2 else "")
        self.assertEqual(rounds.traces_for_next_round(c, 0.02), 15)
        # --max-trace-runs 10 leaves 6, spread over the same 4 rounds: 2 now, not all 6 at once.
        c.max_trace_runs = 10
        self.assertEqual(rounds.traces_for_next_round(c, 0.02), 2)
        # Just above the target: at least one. Unknown (one traced run): one, to make two.
        self.assertEqual(rounds.traces_for_next_round(c, 0.0051), 1)
        c2 = self.campaign(0.5, 40)
        c2.trace_runs = 1
        traced(c2, 1)
        self.assertEqual(rounds.traces_for_next_round(c2, None), 1)

    def test_off_without_a_target(self):
        c = self.campaign(0.0, 2)
        self.assertFalse(rounds.wants_another_trace(c, None))
        self.assertFalse(rounds.wants_another_trace(c, 0.5))


class NoiseRecordingsTest(unittest.TestCase):
    """Added rounds bring llamp-noise recordings, so that the prediction with noise replays the machine
    of the campaign's whole time (the host's noise drifts over minutes)."""

    def campaign(self, noise_runs):
        c = campaign_with_runs(self, target_pct=0.5, max_reps=8)  # 2 planned rounds
        c.noise_runs, c.tools.noise = noise_runs, "/usr/bin/true"
        return c

    def recorded(self, c, *ks):
        for k in ks:
            with open(noise.noise_path(c, k), "w") as f:
                f.write("{}")

    def test_the_planned_rounds_ask_for_the_planned_recordings(self):
        c = self.campaign(3)
        self.assertEqual(noise.count_for_rounds(c), 3)
        self.recorded(c, 1, 2, 3)
        self.assertEqual(noise.missing(c), [])

    def test_every_added_round_keeps_the_planned_share_of_recordings_per_round(self):
        c = self.campaign(3)
        self.recorded(c, 1, 2, 3)
        # 3 recordings over 2 rounds: 1.5 per round, rounded up as rounds are added.
        asked = []
        for _ in range(4):
            rounds.add_round(c)
            asked.append(noise.count_for_rounds(c))
            self.recorded(c, *noise.missing(c))
        self.assertEqual(asked, [5, 6, 8, 9])
        self.assertEqual([os.path.basename(p) for p in noise.recorded(c)],
                         [f"noise-{k}.json" for k in range(1, 10)])

    def test_an_added_round_asks_only_for_what_is_not_there(self):
        c = self.campaign(1)
        self.recorded(c, 1)
        rounds.add_round(c)  # 1 per 2 rounds: 3 rounds ask for 2
        self.assertEqual(noise.missing(c), [2])
        self.recorded(c, 2)
        rounds.add_round(c)  # 4 rounds: still 2
        self.assertEqual(noise.missing(c), [])

    def test_none_without_noise(self):
        c = self.campaign(0)
        rounds.add_round(c)
        self.assertEqual((noise.count_for_rounds(c), noise.missing(c)), (0, []))


if __name__ == "__main__":
    unittest.main()
