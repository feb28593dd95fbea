#!/usr/bin/env python3
"""Plot an `llamp analyze` report: T against ΔL with the tolerance zones shaded, λ_L and ρ_L below
(the layout of paper 000, Fig. 1/9). Optional measured runtimes (CSV with delta_L_ns,T_ns columns)
are overlaid and their RRMSE against the prediction is printed. Run with /usr/bin/python3."""
import argparse
import csv
import json
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def predicted(curve, L):
    for seg in curve:
        if L <= seg["L_end_ns"] or seg is curve[-1]:
            return seg["T_begin_ns"] + seg["lambda_L"] * (L - seg["L_begin_ns"])
    return float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--analysis", required=True, help="JSON report of llamp analyze")
    ap.add_argument("--out", required=True, help="PNG to write")
    ap.add_argument("--measured", help="CSV with columns delta_L_ns,T_ns (repeats allowed)")
    args = ap.parse_args()
    with open(args.analysis) as f:
        rep = json.load(f)
    curve = rep["curve"]
    L0 = rep["L0_ns"]
    T0 = rep["runtime_ns"]
    homogeneous = rep.get("latency_variable", "L") == "L"
    xs, ts, lam, rho = [], [], [], []
    for seg in curve:
        for L, T in ((seg["L_begin_ns"], seg["T_begin_ns"]), (seg["L_end_ns"], seg["T_end_ns"])):
            xs.append((L - L0) / 1000.0)
            ts.append(T / 1e6)
            lam.append(seg["lambda_L"])
            Labs = L if homogeneous else rep["params"]["L_ns"] + L
            rho.append(Labs * seg["lambda_L"] / T if T > 0 else 0.0)

    fig, (ax, axl) = plt.subplots(2, 1, figsize=(7, 6), sharex=True, gridspec_kw={"height_ratios": [2, 1]})
    ax.plot(xs, ts, color="tab:blue", label="predicted T")
    colors = {1: "#2ca02c", 2: "#ffbf00", 5: "#ff7f0e"}
    lo = min(xs) if xs else 0
    for tol in sorted(rep.get("tolerance", []), key=lambda t: -t["percent"]):
        if tol["delta_L_ns"] is None:
            continue
        hi = tol["delta_L_ns"] / 1000.0
        ax.axvspan(lo, hi, color=colors.get(int(tol["percent"]), "#cccccc"), alpha=0.25,
                   label=f"{tol['percent']:g}% tolerance: ΔL ≤ {hi:.3g} µs")
    for bp in rep.get("critical_latencies_ns", []):
        ax.axvline((bp - L0) / 1000.0, color="grey", lw=0.6, ls=":")
    if args.measured:
        mx, my = [], []
        with open(args.measured) as f:
            for row in csv.DictReader(f):
                mx.append(float(row["delta_L_ns"]) / 1000.0)
                my.append(float(row["T_ns"]) / 1e6)
        ax.scatter(mx, my, s=12, color="black", label="measured", zorder=3)
        if mx:
            pred = [predicted(curve, x * 1000.0 + L0) / 1e6 for x in mx]
            mean = sum(my) / len(my)
            rrmse = math.sqrt(sum((p - m) ** 2 for p, m in zip(pred, my)) / len(my)) / mean
            ax.set_title(f"RRMSE {100 * rrmse:.2f}%")
            print(f"RRMSE {100 * rrmse:.3f}% over {len(my)} measurements")
    ax.set_ylabel("runtime T [ms]")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    axl.step(xs, lam, where="post", color="tab:red", label="λ_L")
    axl.set_ylabel("λ_L")
    axr = axl.twinx()
    axr.plot(xs, rho, color="tab:purple", label="ρ_L")
    axr.set_ylabel("ρ_L")
    axl.set_xlabel("ΔL [µs]  (L0 = %.3g µs)" % (L0 / 1000.0 if homogeneous else rep["params"]["L_ns"] / 1000.0))
    axl.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.out, dpi=130)
    return 0


if __name__ == "__main__":
    sys.exit(main())
