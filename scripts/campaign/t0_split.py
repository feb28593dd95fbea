"""Where the prediction's error at ΔL = 0 comes from (docs/campaign.md, "Where T(0)'s error comes from").

The LogGPS prediction's T(L0) less the measured mean at ΔL = 0 is split into three terms that add
up to it exactly, each from runs the campaign already made:

    graph   each traced run's graph at L0 less that traced run's own runtime: the model's error on
            the very run it was built from (no other run's noise is in it)
    tracer  those traced runs' runtimes less the untraced reference runs launched just before each:
            what tracing changed
    host    the reference runs less the measured runs at ΔL = 0: how differently the machine ran
            the application between the two kinds of untraced run (launched at other times)

With the mean prediction the traced runs are those it averages; with the kept trace's, that trace.
Each term has a standard error from the spread of the runs it compares, so a term within about
twice its error can be noise. Stop 46 found app_completions' T(0), 8.6 % below its runs in table
AE, to be a graph term of about −5 % in every traced run, the rest tracer and host.
"""
import math

from . import stats


def _se_of_mean(xs, weights=None):
    # None: no spread to tell it from
    return stats.weighted_standard_error(xs, weights) if len(xs) >= 2 else None


def _se_of_difference(xs, ys, x_weights=None, y_weights=None):
    a, b = _se_of_mean(xs, x_weights), _se_of_mean(ys, y_weights)
    return None if a is None or b is None else math.hypot(a, b)


def split(graph_at_L0_ns, traced_runtimes_ns, reference_runtimes_ns, measured_at_zero_ns, weights=None):
    """The split, or None where a part is missing. graph_at_L0_ns: {trace k: its graph's T(L0)};
    traced_runtimes_ns: every traced run's runtime, trace k at index k - 1; the others as measured.
    weights: {trace k: its weight in the mean prediction} (trace_weights.py), so that the terms add up
    to that prediction's error; the reference runs take their traced runs' weights where there is
    one per traced run, else count alike."""
    ks = [k for k in sorted(graph_at_L0_ns) if 1 <= k <= len(traced_runtimes_ns)]
    if not ks or not reference_runtimes_ns or not measured_at_zero_ns:
        return None
    graphs, traced = [graph_at_L0_ns[k] for k in ks], [traced_runtimes_ns[k - 1] for k in ks]
    w = [weights[k] for k in ks] if weights else None
    references, w_ref = reference_runtimes_ns, None
    if w is not None and len(reference_runtimes_ns) == len(traced_runtimes_ns):
        references, w_ref = [reference_runtimes_ns[k - 1] for k in ks], w
    pairs = list(zip(graphs, traced))
    measured = stats.mean(measured_at_zero_ns)
    predicted = stats.weighted_mean(graphs, w)
    traced_mean, reference_mean = stats.weighted_mean(traced, w), stats.weighted_mean(references, w_ref)
    terms = {
        "graph": {"ns": predicted - traced_mean, "se_ns": _se_of_mean([g - t for g, t in pairs], w)},
        "tracer": {"ns": traced_mean - reference_mean, "se_ns": _se_of_difference(traced, references, w, w_ref)},
        "host": {"ns": reference_mean - measured,
                 "se_ns": _se_of_difference(references, measured_at_zero_ns, w_ref)},
    }
    for term in terms.values():
        term["pct"] = 100 * term["ns"] / measured
    return {"predicted_ns": predicted, "measured_ns": measured, "error_ns": predicted - measured,
            "error_pct": 100 * (predicted - measured) / measured, "traces": ks,
            "references": len(reference_runtimes_ns), "measured_runs": len(measured_at_zero_ns),
            "graph_vs_own_run_pct": [100 * (g - t) / t for g, t in pairs], "terms": terms}


def _term(t):
    se = f" ± {t['se_ns'] / 1e6:.1f}" if t["se_ns"] is not None else ""
    return f"{t['ns'] / 1e6:+.1f}{se} ms ({t['pct']:+.2f} %)"


def paragraph(t0):
    """report.md's lines for report.json's t0_split (none without one)."""
    if not t0:
        return []
    terms, own = t0["terms"], t0["graph_vs_own_run_pct"]
    spread = f", {min(own):+.1f} to {max(own):+.1f} % per traced run" if len(own) >= 2 else ""
    return [f"Where T(0)'s error comes from (docs/campaign.md, \"Where T(0)'s error comes from\"): the LogGPS "
            f"prediction at L0 less the measured mean at ΔL = 0, {t0['error_ns'] / 1e6:+.1f} ms "
            f"({t0['error_pct']:+.2f} %), is the sum of **the graph** against the very run it was traced from "
            f"{_term(terms['graph'])}{spread} (the model's own error, no other run's noise in it), **the tracer** "
            f"(traced runs against the untraced reference runs launched just before each) {_term(terms['tracer'])} "
            f"and **the host** (those reference runs against the {t0['measured_runs']} measured runs at ΔL = 0, "
            f"launched at other times) {_term(terms['host'])}; ± one standard error from the runs' spread.", ""]
