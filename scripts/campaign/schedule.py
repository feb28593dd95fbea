"""Which run happens when: `reps` rounds, each a shuffled permutation of the ΔL values.

Interleaving spreads the drift of a shared machine over all ΔL values instead of letting it bias
the ones measured last (PLATFORM.md, "Timing on shared machines"). A slot is one (round, ΔL)
pair; its id is its position in the schedule, which is also its Slurm array index.
"""
import random
from dataclasses import dataclass


@dataclass(frozen=True)
class Slot:
    slot: int
    round: int
    delta_ns: float


def make_schedule(deltas_ns, reps, seed):
    rng = random.Random(seed)
    slots = []
    for r in range(reps):
        order = list(deltas_ns)
        rng.shuffle(order)
        for d in order:
            slots.append(Slot(len(slots), r, d))
    return slots


def slot_to_json(s):
    return {"slot": s.slot, "round": s.round, "delta_ns": s.delta_ns}


def slot_from_json(d):
    return Slot(int(d["slot"]), int(d["round"]), float(d["delta_ns"]))
