"""Fig. 9-style figure: measured vs predicted runtime over ΔL with the 1/2/5 % tolerance marks
(top), λ_L and ρ_L over ΔL (bottom). Needs Debian's python3-matplotlib (/usr/bin/python3)."""
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

_COLOURS = ["tab:green", "tab:orange", "tab:red", "tab:purple", "tab:brown"]


def figure(campaign, result, path):
    rows = [r for r in result["per_delta"] if "mean_ns" in r]
    us = [r["delta_ns"] / 1e3 for r in rows]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6.4, 6.4), sharex=True,
                                      gridspec_kw={"height_ratios": [2, 1]})
    for r in rows:
        top.scatter([r["delta_ns"] / 1e3] * len(r["runtimes_ns"]), [t / 1e9 for t in r["runtimes_ns"]],
                    s=8, color="0.6", zorder=1)
    top.errorbar(us, [r["mean_ns"] / 1e9 for r in rows], yerr=[r["std_ns"] / 1e9 for r in rows], fmt="o",
                 color="black", capsize=3, label="measured (mean ± std)", zorder=3)
    title = f"{' '.join([os.path.basename(campaign.app[0]), *campaign.app[1:]])} — {campaign.ranks} ranks"
    if "rrmse" in result:
        grid_rows = result["predicted_curve"]
        per_trace = result.get("per_trace_prediction")
        top.plot([r["delta_ns"] / 1e3 for r in grid_rows], [r["predicted_ns"] / 1e9 for r in grid_rows], "-",
                 color="tab:blue", label=f"LogGPS (RRMSE {100 * result['rrmse']:.2f} %)" + (
                     f" (mean of {len(per_trace['traces'])} traced runs')" if per_trace else ""), zorder=2)
        if grid_rows and "predicted_min_ns" in grid_rows[0]:
            top.fill_between([r["delta_ns"] / 1e3 for r in grid_rows], [r["predicted_min_ns"] / 1e9 for r in grid_rows],
                             [r["predicted_max_ns"] / 1e9 for r in grid_rows], color="tab:blue", alpha=0.15,
                             linewidth=0, label="each traced run's prediction (range)", zorder=1)
        noisy = [r for r in result["per_delta"] if "predicted_noise_ns" in r]
        noise = result.get("with_noise") or {}
        if noisy and "rrmse" in noise:
            top.plot([r["delta_ns"] / 1e3 for r in noisy], [r["predicted_noise_ns"] / 1e9 for r in noisy], "x--",
                     color="tab:cyan", linewidth=1,
                     label=f"with the machine's noise (RRMSE {100 * noise['rrmse']:.2f} %)", zorder=2)
        judged = result["judged"]
        title += f"\nRRMSE = {100 * judged['rrmse']:.2f} % ({judged['prediction']})"
        if "rrmse_noise_floor" in result:
            title += f" (noise floor {100 * result['rrmse_noise_floor']:.2f} %)"
        for i, t in enumerate(result.get("tolerance", [])):
            c = _COLOURS[i % len(_COLOURS)]
            if t["predicted_reached_in_range"]:
                top.axvline(t["predicted_delta_ns"] / 1e3, color=c, linestyle="--", linewidth=1,
                            label=f"{t['percent']:g} % tolerance (predicted)")
            if t["measured_reached_in_range"]:
                top.axvline(t["measured_delta_ns"] / 1e3, color=c, linestyle=":", linewidth=1,
                            label=f"{t['percent']:g} % tolerance (measured)")
        bottom.plot([r["delta_ns"] / 1e3 for r in grid_rows], [r["lambda_L"] for r in grid_rows], "-",
                    color="tab:blue", label="λ_L")
        bottom.set_ylabel("λ_L")
        twin = bottom.twinx()
        twin.plot([r["delta_ns"] / 1e3 for r in grid_rows], [r["rho_L"] for r in grid_rows], "-",
                  color="tab:red", label="ρ_L")
        twin.set_ylabel("ρ_L")
        lines = bottom.get_lines() + twin.get_lines()
        bottom.legend(lines, [l.get_label() for l in lines], loc="best", fontsize=8)
    top.set_title(title, fontsize=10)
    top.set_ylabel("runtime [s]")
    top.legend(fontsize=7, loc="best")
    top.grid(alpha=0.3)
    bottom.set_xlabel("ΔL [µs]")
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
