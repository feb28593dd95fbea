"""The state of the ranks' cores around every launch: llamp-coreprobe before and after each parameter
launch, traced run and measured run, and the launches it rejects.

Why: a VM's host places its vCPUs. On the 2-vCPU machine this was found on, the two vCPUs
sometimes share a cache (a cache line moves from one to the other in ~27 ns) and sometimes do not
(~155 ns), and the state changes between jobs (about half of all probes taken at idle, one run in
five to ten under load). Every on-node message is 2-3x slower in the second state: app_pingpong
0.23-0.27 s against 0.45-0.50 s, app_completions +15 %, a 64 B llamp-loggp half round trip ~150
against ~490 ns. A measured run, a traced run or a parameter launch in that state measures the
host, not the application's latency response; it was the largest part of pingpong's run-to-run
spread (CV 40-54 % at ΔL = 0) and of the traced runs' (docs/campaign.md, "Core hand-off").

What the campaign does (`--core-limit`, default auto):
  * before a launch it probes; above the limit it waits for the host to bring the cores back
    together (probing every 0.1 s, for at most --core-wait seconds);
  * inside every run and traced run the runtime timer probes too, just before MPI_Init and just
    after MPI_Finalize (LLAMP_CORE_PROBE_SHM; tools/loggp/runtime_timer.c): the state within the
    job, which the outside probes can miss (the host moves vCPUs while mpiexec starts: one
    accepted pingpong run of 24 ran in the slow state with fast probes before and after);
  * after the launch it probes again;
  * a launch whose probes are above the limit is a "slow-cores" attempt: recorded (runs.csv, the
    report), never averaged in, and launched again, up to --core-retries more times; the probes
    inside the job judge it when there are any (runs, traced runs), else those before and after
    it (parameter launches);
  * every probe is appended to cores.csv.
The probes take ~30 ms each and run while no rank does. The limit `auto` is 3 x a reference taken from 20
probes when the campaign first needs it on a host (cores-<host>.json): the median of those within
3 x the fastest, i.e. the usual hand-off between cores that share a cache, where they are at least
a quarter of the probes (else the same over the rest: a few much faster probes are a placement the
host seldom takes); a machine whose cores never change state never exceeds it.

There is a third state (stop 14): the two vCPUs on one physical core (SMT siblings), where a cache
line moves in ~12 ns, not ~26, and the two ranks share the core's execution units: in 4 campaigns,
runs with an in-run probe in that state ran a median 1.7 % (p90 12 %) above their ΔL's median, and
the slowest runs of cg (754 against 440-490 ms at ΔL = 0) had one. With `auto` a launch whose probes
fall below a floor of 0.6 x the calibration's reference is slow-cores too (the status names a
launch outside the calibrated placement, whichever way); the in-run probes judge it by the smallest
probe during the run (core_run_min_ns). A host that put the vCPUs on one core during most of the 20
calibration probes leaves the floor below every probe (then only the limit acts). An explicit
--core-limit TIME sets no floor.

The calibration can also be taken in the slow placement: 16 of 219 campaigns' host files on the VM
had all 20 probes apart (~157 ns), and the usual placement then read below the floor (stop 16's CI:
all six launches of a slot rejected as "on one physical core"). A probe before a launch that reads
under a third of the reference shows a placement the calibration never saw: the campaign probes 20
times more, one second apart, and when most of them read that fast it takes the reference over all
the probes (`recalibrate`) and at its end judges again what the old limits accepted (rejudge.py).
When most read as the calibration did, the fast placement was a passing one and the reference
stays: on a 2-vCPU AMD EPYC VM (stop 47) the usual hand-off is ~220 ns, and often for ~5 s around
a launch the host put the vCPUs where it takes 30-70 ns; 20 probes 0.05 s apart all fell in one
such spell, the reference moved to 62 ns, and every launch in the usual placement was then
rejected as "apart". Where the host keeps a placement outside the band for minutes, six launches
in a row there widen the band to it (note_launch).
"""
import csv
import glob
import json
import os
import subprocess
import time

from . import units

SLOW_CORES = "slow-cores"
AUTO_FACTOR = 3.0
AUTO_PROBES = 20
FLOOR_FACTOR = 0.6
# The smallest share of the probes whose group can be the usual placement (reference_ns).
USUAL_SHARE = 0.25
# A cache line moves between the two hardware threads of one core through its own L1 in 10-15 ns on
# every x86 measured here (AMD EPYC 12-13 ns, Intel Xeon 14 ns), between cores in 20 ns or more.
SIBLING_NS = 20.0
# This many launches in a row judged outside the calibrated placement the same way (all apart, or
# all on one physical core) show a placement the host keeps giving: the accepted band widens to it
# (note_launch). Stop 47's AMD VM calibrated at 27-60 ns and then ran minutes at ~220 ns, which
# every launch was rejected for.
STALL_LAUNCHES = 6
# A recalibration's probes are this far apart, so that they span more than one of the host's
# passing placements (~5 s on stop 47's AMD VM): AUTO_PROBES of them take ~20 s.
RECALIBRATION_SPACING_S = 1.0
# Each recalibration costs AUTO_PROBES probes (~20 s); a host whose fast probes keep being passing
# ones (most of the 20 after each read as the calibration did) is not probed again without end.
MAX_RECALIBRATIONS = 3


class ProbeError(Exception):
    pass


def enabled(campaign):
    return campaign.core_limit != "off" and bool(campaign.tools.coreprobe)


def probe_ns(campaign, cpus):
    """One probe: the largest one-way hand-off time (ns) between the first CPU this process may use
    and the next cpus-1 ones, or None when there are fewer than two CPUs to probe."""
    try:
        out = subprocess.run([campaign.tools.coreprobe, "--cpus", str(cpus)], capture_output=True, text=True,
                             timeout=60, check=True).stdout
        result = json.loads(out)
    except (OSError, subprocess.SubprocessError, json.JSONDecodeError) as e:
        raise ProbeError(f"{campaign.tools.coreprobe} failed: {e}")
    return float(result["max_one_way_ns"]) if result.get("pairs") else None


def _host_file(campaign, host=None):
    return campaign.path(f"cores-{host or os.uname().nodename}.json")


def reference_ns(probes):
    """The usual hand-off of cores that share a cache: the median of the probes within AUTO_FACTOR x
    the fastest. Not the fastest itself: one calibration probe taken while the vCPUs sat on one
    physical core (13 ns among 24-27 ns) put the limit at 38 ns and the floor at 8 ns. Nor the
    fastest few when they are more than AUTO_FACTOR x faster than the rest: on a 16-vCPU Xeon VM
    (stop 29) cores apart on the mesh hand off in 64-107 ns and 2 of 60 probes read 21-22 ns (the
    host put vCPUs on one physical core); their median as the reference rejected every launch of
    a campaign. Such a minority group (under USUAL_SHARE of the probes) is skipped. Nor a group of
    SMT siblings (median under SIBLING_NS) while a slower group is usual too: on the 2-vCPU Intel VM
    of stop 36 cores that share a cache hand off in 55-100 ns and siblings in 14, and a calibration
    with 5 of 20 probes at 14 ns set the limit at 42 ns and rejected 82 launches in a row (on AMD
    siblings and shared-cache cores, 12 and 26 ns, fall in one group, whose median is the latter)."""
    ordered = sorted(probes)
    groups = []
    rest = ordered
    while rest:
        fast = [p for p in rest if p <= AUTO_FACTOR * rest[0]]
        if len(fast) >= USUAL_SHARE * len(ordered):
            groups.append(fast[len(fast) // 2])
        rest = rest[len(fast):]
    if not groups:
        return ordered[len(ordered) // 2]  # no group is usual: the median of all
    return next((median for median in groups if median >= SIBLING_NS), groups[0])


def _calibration_probes(campaign, cpus, spacing_s=0.05):
    """AUTO_PROBES probes spacing_s apart; None where there are fewer than two CPUs to probe."""
    probes = []
    for _ in range(AUTO_PROBES):
        value = probe_ns(campaign, cpus)
        if value is None:
            return None
        probes.append(value)
        time.sleep(spacing_s)
    return probes


def _set_reference(record, probes):
    reference = reference_ns(probes)
    record.update(probes_ns=probes, fastest_ns=min(probes), reference_ns=reference, limit_ns=AUTO_FACTOR * reference,
                  floor_ns=FLOOR_FACTOR * reference)
    return record


def save_host_record(campaign, record):
    path = _host_file(campaign, record.get("host"))
    with open(path + ".tmp", "w") as f:
        json.dump(record, f, indent=2)
    os.replace(path + ".tmp", path)


def host_record(campaign):
    """This host's calibration (cores-<host>.json), or None before it."""
    try:
        with open(_host_file(campaign)) as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def host_records(campaign):
    """Every host's calibration in the campaign, {host: record}."""
    records = {}
    for path in glob.glob(campaign.path("cores-*.json")):
        with open(path) as f:
            record = json.load(f)
        records[record.get("host") or os.path.basename(path)[len("cores-"):-len(".json")]] = record
    return records


def limits_ns(campaign, cpus, log=print):
    """(limit, floor): a launch whose probes are above the limit (cores apart) or below the floor (on
    one physical core) counts as slow-cores on this host; floor None: no lower bound."""
    if campaign.core_limit != "auto":
        return units.parse_time_ns(campaign.core_limit, "--core-limit", default_unit="ns"), None
    record = host_record(campaign)
    if record is not None:
        return record["limit_ns"], record.get("floor_ns", FLOOR_FACTOR * record.get("reference_ns", record["fastest_ns"]))
    probes = _calibration_probes(campaign, cpus)
    if probes is None:
        return None, None  # one CPU: no hand-off to probe, nothing to judge
    record = _set_reference({"host": os.uname().nodename, "cpus": cpus}, probes)
    record["rule"] = (f"{AUTO_FACTOR:g} x (limit) and {FLOOR_FACTOR:g} x (floor) the median of the fast probes "
                      f"(at most {AUTO_FACTOR:g} x the fastest of a group of at least {USUAL_SHARE:g} of them) of "
                      f"{AUTO_PROBES} llamp-coreprobe runs, 0.05 s apart")
    save_host_record(campaign, record)
    log(f"cores: hand-off {record['fastest_ns']:.0f} ns at best on {record['host']} ({len(probes)} probes, median "
        f"{sorted(probes)[len(probes) // 2]:.0f} ns, of the fast ones {record['reference_ns']:.0f} ns); launches above "
        f"{record['limit_ns']:.0f} ns or below {record['floor_ns']:.0f} ns count as slow-cores")
    return record["limit_ns"], record["floor_ns"]


def faster_than_calibrated(campaign, value, limit):
    """Whether a probe shows a placement AUTO_FACTOR x faster than the calibration's reference
    (limit / AUTO_FACTOR), which the calibration never saw. The placements of the 2-vCPU VM are ~12,
    ~26 and ~155 ns: one physical core against a shared cache is 2x, less than the factor, so only
    a calibration taken while the host kept the vCPUs apart (all 20 probes, in 16 of 219 campaigns'
    host files) is contradicted: stop 16's CI calibrated at 157 ns and then rejected all six launches
    of a slot, at 12-27 ns, as "on one physical core"."""
    return (campaign.core_limit == "auto" and limit is not None and value is not None
            and 0 <= value < limit / AUTO_FACTOR ** 2)


def recalibrate(campaign, cpus, trigger_ns, log=print):
    """A probe faster than the calibration could be (faster_than_calibrated): AUTO_PROBES more
    probes, RECALIBRATION_SPACING_S apart. When most of them read that fast too (under a third of
    the reference), the host's usual placement is not the calibrated one: the reference is taken
    again over all the probes, and everything judged under the old limits is judged again at the
    campaign's end (rejudge.py). Otherwise the fast placement was a passing one and the reference
    stays; the trigger itself is never counted, so a single odd probe cannot set the reference.
    Either way the new probes join the calibration's and the attempt is recorded. Returns the
    (limit, floor) in force."""
    record = host_record(campaign)
    if record is not None and len(record.get("recalibrations", [])) >= MAX_RECALIBRATIONS:
        return record["limit_ns"], record["floor_ns"]  # the fast probes keep being passing ones: keep the limits
    new = _calibration_probes(campaign, cpus, RECALIBRATION_SPACING_S)
    if record is None or new is None:
        return limits_ns(campaign, cpus, log)
    before = record.get("reference_ns", record["fastest_ns"])
    fast = sum(1 for p in new if 0 <= p < before / AUTO_FACTOR)
    moved = 2 * fast > len(new)
    if moved:
        _set_reference(record, list(record["probes_ns"]) + new)
    else:
        record["probes_ns"] = list(record["probes_ns"]) + new
    record.setdefault("recalibrations", []).append(
        {"unix_time": round(time.time(), 3), "trigger_ns": trigger_ns, "reference_before_ns": before,
         "reference_ns": record["reference_ns"], "new_probes": len(new), "spacing_s": RECALIBRATION_SPACING_S,
         "new_probes_that_fast": fast, "moved": moved})
    save_host_record(campaign, record)
    heard = (f"cores: a probe read {trigger_ns:.0f} ns, under a third of the calibrated {before:.0f} ns; "
             f"{len(new)} more probes {RECALIBRATION_SPACING_S:g} s apart (median {sorted(new)[len(new) // 2]:.0f} "
             f"ns), {fast} of them that fast")
    if moved:
        log(f"{heard}: calibrated again, reference {record['reference_ns']:.0f} ns, launches above "
            f"{record['limit_ns']:.0f} ns or below {record['floor_ns']:.0f} ns count as slow-cores")
    else:
        log(f"{heard}: a passing placement, the reference stays {before:.0f} ns")
    return record["limit_ns"], record["floor_ns"]


def note_launch(campaign, guard, log=print):
    """Counts a judged launch towards a stall: STALL_LAUNCHES launches in a row outside the calibrated
    placement, all on the same side of it. Then the placement they ran in is one the host keeps
    giving for minutes, whichever way the calibration missed it (taken while the vCPUs sat apart,
    stop 16's CI, or in a spell of a faster placement, stop 47), and the accepted band widens to
    take it in: the limit to AUTO_FACTOR x, or the floor to FLOOR_FACTOR x, the median of the probes
    that judged them. The band only widens, so nothing it accepted before is taken back, and a host
    that moves between two placements every few minutes (stop 47's AMD VM) does not send the
    campaign back and forth between them. A launch inside the band ends the streak, which lives in
    the host file, so it spans parameter launches, traced runs and measured runs alike. Returns
    whether this launch widened the band: the launch it was retried for then gets one more attempt
    beyond --core-retries, as the band now takes in what it kept running in."""
    if campaign.core_limit != "auto" or guard.limit is None:
        return False
    record = host_record(campaign)
    if record is None:
        return False
    side = "apart" if guard.apart else "one physical core" if guard.one_core else None
    streak = record.get("streak") or {}
    if side is None:
        if streak:
            record.pop("streak")
            save_host_record(campaign, record)
        return False
    values = guard.values if side == "apart" else guard.low_values
    if streak.get("side") != side:
        streak = {"side": side, "launches": [], "probes_ns": []}
    streak["launches"].append(guard.launch)
    streak["probes_ns"].extend(v for v in values if v >= 0)
    record["streak"] = streak
    widened = len(streak["launches"]) >= STALL_LAUNCHES and bool(streak["probes_ns"])
    if widened:
        probes = sorted(streak["probes_ns"])
        placement = probes[len(probes) // 2]
        before = (record["limit_ns"], record["floor_ns"])
        reference = record.get("reference_ns", record["fastest_ns"])
        if side == "apart":
            record["limit_ns"] = max(record["limit_ns"], AUTO_FACTOR * placement)
        else:
            record["floor_ns"] = min(record["floor_ns"], FLOOR_FACTOR * placement)
        record.setdefault("recalibrations", []).append(
            {"unix_time": round(time.time(), 3), "stall_launches": list(streak["launches"]), "side": side,
             "placement_ns": placement, "reference_ns": reference,
             "limit_before_ns": before[0], "floor_before_ns": before[1], "limit_ns": record["limit_ns"],
             "floor_ns": record["floor_ns"]})
        record.pop("streak")
        log(f"cores: {len(streak['launches'])} launches in a row ran {side} (median probe {placement:.0f} ns, the "
            f"reference {reference:.0f} ns): a placement this host keeps "
            f"giving too; launches above {record['limit_ns']:.0f} ns or below {record['floor_ns']:.0f} ns count as "
            f"slow-cores")
    save_host_record(campaign, record)
    return widened


def streak_may_still_widen(campaign, extra):
    """Whether the `extra`-th launch past --core-retries belongs to a streak of launches outside the
    band that began before the retries ran out (it has more launches than `extra`): it is launched
    again until the streak widens the band (note_launch) or ends. A streak needs STALL_LAUNCHES
    launches, as many as a slot's attempts with the default --core-retries 5, so one that began
    after a slot's first attempt could not finish within it (table AG7's persistent: a launch on one
    physical core, then five apart, the slot given up; the sixth, the next slot's, widened the band).
    A streak that begins past the retries has one launch, never more than `extra`: a host that
    keeps changing sides gets --core-retries and no more, and a growing streak at most STALL_LAUNCHES
    more."""
    record = host_record(campaign) or {}
    return len((record.get("streak") or {}).get("launches", [])) > extra


def out_of_core_retries(campaign, slow, widened):
    """After `slow` slow-cores launches of one launch or slot (the last one included): whether to
    stop launching it. Past --core-retries it goes on only when the last launch widened the band
    (the next one is judged by it) or belongs to a streak that may still widen it. The one rule
    for guarded() and runs.run_slot()."""
    if slow <= campaign.core_retries:
        return False
    return not widened and not streak_may_still_widen(campaign, slow - campaign.core_retries)


def _apart(value, limit):
    """Above the limit, or -1: the timer's peer never answered, which a run in a sane state does
    within microseconds."""
    return value > limit or value < 0


def _one_core(value, floor):
    return floor is not None and 0 <= value < floor


def judged_values(fields):
    """(values, low_values): the probes that judge a launch (its record's core_* fields). The timer's
    inside the job when it has them (the outside ones are taken while the vCPUs idle between jobs,
    when the host moves them: 3 of 30 master_worker runs read 154-163 ns after the job with 24-27 ns
    inside it), else the outside ones; for the floor (ranks on one physical core) the smallest
    probe during the run stands in for the largest."""
    outside = [v for v in (fields.get("core_before_ns"), fields.get("core_after_ns")) if v is not None]
    inside = [v for v in (fields.get("core_init_ns"), fields.get("core_finalize_ns"), fields.get("core_during_ns"))
              if v is not None]
    low = [v for v in (fields.get("core_init_ns"), fields.get("core_finalize_ns"), fields.get("core_during_min_ns"))
           if v is not None]
    return inside or outside, low or outside


def outside_placement(fields, limit, floor):
    """Whether a launch with these probes is slow-cores under (limit, floor)."""
    values, low = judged_values(fields)
    return (limit is not None and any(_apart(v, limit) for v in values)) or any(_one_core(v, floor) for v in low)


def _append(campaign, launch, when, value, limit, floor=None):
    path = campaign.path("cores.csv")
    new = not os.path.exists(path)
    with open(path, "a", newline="") as f:
        w = csv.writer(f)
        if new:
            w.writerow(["unix_time", "host", "launch", "when", "one_way_ns", "limit_ns", "slow"])
        w.writerow([f"{time.time():.3f}", os.uname().nodename, launch, when,
                    "" if value is None else f"{value:.1f}", "" if limit is None else f"{limit:.1f}",
                    int(value is not None and limit is not None
                        and (_apart(value, limit) or _one_core(value, floor)))])


# Probes during a run (runtime_timer.c): the vCPUs also move mid-job, between fast probes at both
# edges (stop 13: one of three traced app_pingpong runs took 0.398 s against 0.157-0.193, one of five
# llamp-loggp launches measured G 0.637 ns/B against 0.175-0.202). Each costs the ranks 10-50 us.
DURING_PERIOD_MS = 100


class Guard:
    """Probes around one launch: `before()` (waiting for fast cores), the timer library's probes
    inside the run (`environment()`, then `in_run()`), `after()`, then `slow`."""

    def __init__(self, campaign, launch, cpus, log=print):
        self.campaign, self.launch, self.cpus, self.log = campaign, launch, cpus, log
        self.limit, self.floor = limits_ns(campaign, cpus, log) if enabled(campaign) else (None, None)
        self.before_ns = self.init_ns = self.finalize_ns = self.during_ns = self.after_ns = None
        self.during_min_ns = None
        self.shm_name = f"/llamp-cores-{os.getpid()}-{launch}"

    def _probe(self, when):
        value = probe_ns(self.campaign, self.cpus)
        _append(self.campaign, self.launch, when, value, self.limit, self.floor)
        return value

    def before(self):
        if self.limit is None:
            return
        start = time.monotonic()
        self.before_ns = self._probe("before")
        self._recalibrate_if_faster()
        while (self.before_ns is not None
               and (_apart(self.before_ns, self.limit) or _one_core(self.before_ns, self.floor))
               and time.monotonic() - start < self.campaign.core_wait_s):
            time.sleep(0.1)
            self.before_ns = self._probe("before")
            self._recalibrate_if_faster()

    def _recalibrate_if_faster(self):
        if faster_than_calibrated(self.campaign, self.before_ns, self.limit):
            self.limit, self.floor = recalibrate(self.campaign, self.cpus, self.before_ns, self.log)

    def after(self):
        if self.limit is not None:
            self.after_ns = self._probe("after")

    def in_run(self, probes):
        """The timer library's probes inside the job (runtime_records.read_core_probes): just before
        MPI_Init, just after MPI_Finalize, and the largest and the smallest of those every
        DURING_PERIOD_MS during the run. A peer that never answered (-1) counts as slow."""
        for when in ("init", "finalize", "during", "during_min"):
            if when in probes:
                setattr(self, f"{when}_ns", float(probes[when]))
                _append(self.campaign, self.launch, f"in-run {when}", float(probes[when]), self.limit, self.floor)

    @property
    def values(self):
        """The probes that judge the launch (judged_values)."""
        return judged_values(self.fields())[0]

    @property
    def low_values(self):
        """The probes that show the ranks on one physical core (judged_values)."""
        return judged_values(self.fields())[1]

    @property
    def one_core(self):
        return any(_one_core(v, self.floor) for v in self.low_values)

    @property
    def apart(self):
        return self.limit is not None and any(_apart(v, self.limit) for v in self.values)

    @property
    def slow(self):
        """Outside the calibrated placement: cores apart, or both ranks on one physical core."""
        return self.apart or self.one_core

    def fields(self):
        """What a run record keeps of the probes."""
        return {"core_before_ns": self.before_ns, "core_init_ns": self.init_ns, "core_finalize_ns": self.finalize_ns,
                "core_during_ns": self.during_ns, "core_during_min_ns": self.during_min_ns,
                "core_after_ns": self.after_ns, "core_limit_ns": self.limit, "core_floor_ns": self.floor}

    def environment(self, env):
        """Asks the timer library for the in-run probes (a shared-memory name unique to this launch),
        at the edges and every DURING_PERIOD_MS during the run."""
        if self.limit is not None:
            env["LLAMP_CORE_PROBE_SHM"] = self.shm_name
            env["LLAMP_CORE_PROBE_PERIOD_MS"] = str(DURING_PERIOD_MS)
        return env

    def release(self):
        """Removes the launch's shared-memory page (the ranks leave it behind)."""
        try:
            os.unlink(os.path.join("/dev/shm", self.shm_name.lstrip("/")))
        except OSError:
            pass

    def reason(self):
        def show(v):
            return "–" if v is None else ("no answer" if v < 0 else f"{v:.0f}")
        if self.one_core and not self.apart:
            return (f"cache-line hand-off between the ranks' cores {min(v for v in self.low_values if v >= 0):.0f} ns "
                    f"(before {show(self.before_ns)}, in the run {show(self.init_ns)} / smallest "
                    f"{show(self.during_min_ns)} / {show(self.finalize_ns)}, after {show(self.after_ns)}; floor "
                    f"{self.floor:.0f} ns): the host had placed them on one physical core")
        worst = -1 if any(v < 0 for v in self.values) else max(self.values)
        return (f"cache-line hand-off between the ranks' cores {show(worst)} ns (before "
                f"{show(self.before_ns)}, in the run {show(self.init_ns)} / {show(self.during_ns)} / "
                f"{show(self.finalize_ns)}, after "
                f"{show(self.after_ns)}; limit {self.limit:.0f} ns): the host had placed them apart")


def guarded(campaign, launch, cpus, run, log=print):
    """Runs `run(guard)` between probes, again while the probes say slow-cores (at most
    --core-retries more times); `run` may add the in-run probes (guard.environment, guard.in_run).
    Returns (result of the last run, its Guard, number of slow-cores launches)."""
    slow = 0
    while True:
        guard = Guard(campaign, launch, cpus, log)
        guard.before()
        try:
            result = run(guard)
        finally:
            guard.release()
        guard.after()
        widened = note_launch(campaign, guard, log)
        if not guard.slow or out_of_core_retries(campaign, slow + 1, widened):
            return result, guard, slow
        slow += 1
        log(f"{launch}: slow-cores, launching again ({guard.reason()})")
