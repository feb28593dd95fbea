"""--floor-target: when a campaign adds a round (the noise floor of the measured means above the
target, fewer than --max-reps rounds), and what the added round is (the next round of the same
seeded shuffle, saved in campaign.json)."""
import unittest

from campaign_testlib import temp_dir
from test_report import write_record

from campaign import config, rounds, runs, schedule


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

    def test_added_round_continues_the_seeded_shuffle_and_is_saved(self):
        c = campaign_with_runs(self, target_pct=0.5, max_reps=4)
        new = rounds.add_round(c)
        self.assertEqual([s.slot for s in new], [4, 5])
        self.assertEqual({s.round for s in new}, {2})
        self.assertEqual(sorted(s.delta_ns for s in new), [0.0, 10000.0])
        self.assertEqual(c.schedule, schedule.make_schedule(c.deltas_ns, 3, 7))
        self.assertEqual(config.load(c.out_dir).schedule, c.schedule)
        self.assertEqual(rounds.rounds_in(c.schedule), 3)


if __name__ == "__main__":
    unittest.main()
