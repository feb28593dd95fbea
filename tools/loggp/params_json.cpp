#include "params_json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>

#include "llamp/error.hpp"

namespace llamp::loggp {
namespace {

nlohmann::json summary_json(const Summary& s) {
  return {{"median", s.median}, {"p25", s.p25}, {"p75", s.p75}, {"min", s.min}, {"max", s.max}, {"count", s.count}};
}

nlohmann::json size_table(const std::vector<SizePoint>& points) {
  nlohmann::json rows = nlohmann::json::array();
  for (const SizePoint& p : points) {
    rows.push_back({{"bytes", p.bytes},
                    {"protocol", p.rendezvous ? "rendezvous" : "eager"},
                    {"half_rtt_ns", summary_json(p.half_rtt_ns)},
                    {"o_send_ns", summary_json(p.o_send_ns)},
                    {"o_recv_ns", summary_json(p.o_recv_ns)}});
  }
  return rows;
}

// Relative spread over rounds: (max - min) / |median|.
double relative_range(double lo, double hi, double median) { return median == 0 ? 0.0 : (hi - lo) / std::abs(median); }

// per_rank_ns: {rank 0 hot, rank 0 after the wait, rank 1 hot, rank 1 after the wait}.
nlohmann::json cold_copy_json(const MeasurementPlan& plan, const std::vector<double>& per_rank_ns) {
  nlohmann::json ranks = nlohmann::json::array();
  double hot = 0, after = 0;
  for (std::size_t i = 0; i + 1 < per_rank_ns.size(); i += 2) {
    ranks.push_back({{"hot_ns", per_rank_ns[i]}, {"after_wait_ns", per_rank_ns[i + 1]}});
    hot += per_rank_ns[i];
    after += per_rank_ns[i + 1];
  }
  const double n = std::max<double>(1.0, static_cast<double>(ranks.size()));
  return {{"bytes", plan.cold_copy_bytes},
          {"wait_ns", plan.cold_copy_wait_ns},
          {"reps", plan.cold_copy_reps},
          {"per_rank", ranks},
          {"hot_ns", hot / n},
          {"after_wait_ns", after / n},
          {"method",
           "both ranks at once copy `bytes` between two page-aligned buffers (inside L1 + L2), `reps` "
           "times hot and `reps` times each right after spinning `wait_ns` on the clock; medians per rank, "
           "then their mean. After the wait the copy costs more where other work shares the core (a VM's "
           "host) and empties its caches meanwhile: an application's work after long waits then costs "
           "more than its trace says, which no model of the application holds"}};
}

// The extra time of a rendezvous handshake after a computation that swept memory (cold_handshakes),
// floored at 0; 0 when not measured (no rendezvous size probed).
double o_rndv_cold_ns(const Measurement& m) {
  return m.cold_handshake_ns.size() == 2 ? std::max(0.0, m.cold_handshake_ns[1] - m.cold_handshake_ns[0]) : 0.0;
}

nlohmann::json cold_handshake_json(const MeasurementPlan& plan, const Measurement& m) {
  const bool measured = m.cold_handshake_ns.size() == 2;
  return {{"bytes", m.cold_handshake_bytes},
          {"compute_ns", plan.cold_handshake_compute_ns},
          {"sweep_bytes", plan.cold_handshake_sweep_bytes},
          {"reps", plan.cold_handshake_reps},
          {"after_spin_ns", measured ? m.cold_handshake_ns[0] : 0.0},
          {"after_sweep_ns", measured ? m.cold_handshake_ns[1] : 0.0},
          {"measured", measured},
          {"method",
           "both ranks post MPI_Irecv and MPI_Isend of `bytes` (the smallest probed size above S) to each "
           "other, compute for `compute_ns`, then time MPI_Waitall; `reps` times spinning on the clock and "
           "`reps` times sweeping `sweep_bytes` (one write per cache line), interleaved. Per repetition the "
           "shorter of the two ranks' MPI_Waitall (the later rank's: it starts the handshake its peer waits "
           "for); o_rndv_cold_ns = median after sweeping - median after spinning, floored at 0. The sweep "
           "evicts the MPI library's state, the kernel's copy path and page tables: a handshake that a call "
           "starts after such a computation costs that much more, once per call (llamp schedgen "
           "--cold-handshake)"}};
}

nlohmann::json first_use_json(const MeasurementPlan& plan, const std::vector<FirstUse>& first_use) {
  nlohmann::json sizes = nlohmann::json::array();
  for (const FirstUse& f : first_use)
    sizes.push_back({{"bytes", f.bytes},
                     {"trips", f.trips},
                     {"first_rtt_ns", f.first_rtt_ns},
                     {"warm_rtt_ns", f.warm_rtt_ns},
                     {"excess_ns", f.excess_ns},
                     {"slow_trips", f.slow_trips},
                     {"send_excess_ns", f.send_excess_ns}});
  return {{"trips", plan.first_use_trips},
          {"sizes", sizes},
          {"method",
           "measured first, on the fresh pair of ranks: a ping-pong of `trips` round trips at each size in "
           "ascending order (one buffer per rank, touched beforehand); warm_rtt_ns is the median of the second "
           "half, excess_ns the sum over the first half of what each round trip took beyond it, slow_trips those "
           "above 3 x warm_rtt_ns; send_excess_ns is the part of excess_ns spent inside the two ranks' MPI_Send calls "
           "(the same sum over the time inside MPI_Send beyond its warm median), the rest is the receivers'. What "
           "every run of an application pays once per pair of ranks when the "
           "transport's own buffers are first used at such sizes (page faults; on a VM the host's as well), "
           "which llamp schedgen --first-use charges per pair of ranks and size band"}};
}

}  // namespace

nlohmann::json to_json(const Measurement& m, const MeasurementPlan& plan, const RunInfo& info) {
  const Parameters& p = m.params;
  nlohmann::json medians = {{"L_ns", p.L_ns},
                            {"L_measured_ns", p.L_measured_ns},
                            {"o_ns", p.o_ns},
                            {"o_send_ns", p.o_send_ns},
                            {"o_recv_ns", p.o_recv_ns},
                            {"g_ns", p.g_ns},
                            {"G_ns_per_byte", p.G_ns_per_byte},
                            {"o_coll_ns", p.o_coll_ns},
                            {"o_probe_ns", p.o_probe_ns},
                            {"o_rndv_ns", p.o_rndv_ns}};
  nlohmann::json spreads;
  auto spread = [&](const char* name, double Parameters::*member) {
    spreads[name] = {{"min", m.spread_min.*member},
                     {"max", m.spread_max.*member},
                     {"relative_range", relative_range(m.spread_min.*member, m.spread_max.*member, p.*member)}};
  };
  spread("L_ns", &Parameters::L_ns);
  spread("L_measured_ns", &Parameters::L_measured_ns);
  spread("o_ns", &Parameters::o_ns);
  spread("o_send_ns", &Parameters::o_send_ns);
  spread("o_recv_ns", &Parameters::o_recv_ns);
  spread("g_ns", &Parameters::g_ns);
  spread("G_ns_per_byte", &Parameters::G_ns_per_byte);
  spread("o_coll_ns", &Parameters::o_coll_ns);
  spread("o_probe_ns", &Parameters::o_probe_ns);
  spread("o_rndv_ns", &Parameters::o_rndv_ns);

  nlohmann::json rounds = nlohmann::json::array();
  for (const RoundResult& r : m.rounds) {
    rounds.push_back({{"L_ns", r.params.L_ns},
                      {"L_measured_ns", r.params.L_measured_ns},
                      {"o_send_ns", r.params.o_send_ns},
                      {"o_recv_ns", r.params.o_recv_ns},
                      {"g_ns", r.params.g_ns},
                      {"G_ns_per_byte", r.params.G_ns_per_byte},
                      {"burst_gap_ns", summary_json(r.gap_ns)},
                      {"o_coll_ns", r.params.o_coll_ns},
                      {"collective_excess_ns", summary_json(r.collective_excess_ns)},
                      {"o_probe_ns", r.params.o_probe_ns},
                      {"o_rndv_ns", r.params.o_rndv_ns},
                      {"probe_ns", summary_json(r.probe_ns)}});
  }
  nlohmann::json protocol_probes = nlohmann::json::array();
  for (const ProtocolProbe& probe : m.protocol.probes)
    protocol_probes.push_back({{"bytes", probe.bytes},
                               {"completed_unmatched", probe.completed_unmatched},
                               {"tries", probe.tries},
                               {"rendezvous", probe.rendezvous}});

  nlohmann::json method = {
      {"L", fmt::format("median half round trip of a {} B ping-pong minus o_send and o_recv at that "
                        "size (and (s-1)G), floored at 0 (L_measured_ns keeps the raw value)",
                        p.reference_bytes)},
      {"o_send", "median time inside MPI_Send at the reference size"},
      {"clock",
       "steady_clock; the median cost of one clock read is subtracted from every timed "
       "interval (half of it from a half round trip)"},
      {"o_recv",
       "median time inside MPI_Recv posted after the message arrived (receiver delayed "
       "by 2 x (0 B + s B half round trip) + 5 us)"},
      {"o", "(o_send + o_recv) / 2"},
      {"g", fmt::format("(T(burst of {}) - T(1)) / {} for {} B sends into pre-posted receives; "
                        "this is max(o_send, g)",
                        plan.burst, plan.burst - 1, p.reference_bytes)},
      {"G", fmt::format("least-squares slope of the median half round trip over {} sizes {}..{} B "
                        "(R^2 = {:.5f}); each rank receives into and sends back from one buffer, as "
                        "Netgauge's ping-pong does",
                        p.G_fit_protocol, p.G_fit_min_bytes, p.G_fit_max_bytes, p.G_fit.r_squared)},
      {"o_coll", fmt::format("per call, what a 2-rank MPI_Allreduce of one double and MPI_Barrier cost beyond "
                             "an MPI_Sendrecv of 8 / 0 B with the peer (the exchange their algorithms make at 2 "
                             "ranks), in blocks of {} calls; the median over repetitions, floored at 0",
                             plan.collective_block)},
      {"o_probe", fmt::format("median time inside a blocking MPI_Probe (any source, any tag) whose {} B message "
                              "arrived before it (receiver delayed as for o_recv); the message is then received "
                              "untimed",
                              p.reference_bytes)},
      {"o_rndv",
       p.G_fit_protocol == "rendezvous"
           ? "the G fit's intercept + G - o_send - o_recv - 3 L, floored at 0: what a rendezvous transfer costs "
             "beyond o_s + o_r, its three latencies (request-to-send, read request, data) and (s-1)G"
           : "0: the G fit is over eager sizes (raise --max-size above S to measure it)"},
      {"S", fmt::format("largest size whose MPI_Isend completes (within {} MPI_Test calls) before the "
                        "receiver has posted its receive, in most of {} tries; powers of two, then "
                        "bisection; a send of more than S bytes uses rendezvous",
                        m.protocol.test_calls, plan.protocol_reps)},
      {"combination", fmt::format("{} rounds, sizes shuffled per round; each parameter is the "
                                  "median over rounds, its spread the range over rounds",
                                  plan.rounds)}};

  return {
      {"format", "llamp-loggp"},
      {"version", 1},
      {"L_ns", p.L_ns},
      {"o_ns", p.o_ns},
      {"g_ns", p.g_ns},
      {"G_ns_per_byte", p.G_ns_per_byte},
      {"S_bytes", m.protocol.S_bytes},
      {"o_send_ns", p.o_send_ns},
      {"o_recv_ns", p.o_recv_ns},
      {"o_coll_ns", p.o_coll_ns},
      {"o_probe_ns", p.o_probe_ns},
      {"o_rndv_ns", p.o_rndv_ns},
      {"o_rndv_cold_ns", o_rndv_cold_ns(m)},
      {"measurement",
       {{"tool", "llamp-loggp"},
        {"method", method},
        {"repetitions",
         {{"rounds", plan.rounds},
          {"per_size", plan.reps},
          {"per_size_above_bytes_scaled_from", plan.reps_full_bytes},
          {"min_per_size", plan.min_reps},
          {"warmup", plan.warmup},
          {"protocol_probe", plan.protocol_reps}}},
        {"reference_bytes", p.reference_bytes},
        {"clock_read_overhead_ns", m.clock_overhead_ns},
        {"busy_wait_overrun",
         {{"wait_ns", plan.busy_wait_ns},
          {"waits", plan.busy_waits},
          {"per_rank", m.busy_wait_overrun},
          {"mean", m.busy_wait_overrun.empty() ? 0.0 : (m.busy_wait_overrun.front() + m.busy_wait_overrun.back()) / 2},
          {"method",
           "both ranks at once spin on the clock until a deadline, `waits` times; the mean time past the "
           "deadline over the wait's length. Nonzero only when the CPU was taken away (interrupts, a VM's "
           "host): waits in MPI lose as much, so a measured latency response exceeds the prediction by "
           "about this fraction"}}},
        {"cold_copy", cold_copy_json(plan, m.cold_copy_ns)},
        {"cold_handshake", cold_handshake_json(plan, m)},
        {"first_use", first_use_json(plan, m.first_use)},
        {"medians", medians},
        {"spreads", spreads},
        {"G_fit",
         {{"intercept_ns", p.G_fit.intercept},
          {"slope_ns_per_byte", p.G_fit.slope},
          {"r_squared", p.G_fit.r_squared},
          {"points", p.G_fit.points},
          {"min_bytes", p.G_fit_min_bytes},
          {"max_bytes", p.G_fit_max_bytes},
          {"protocol", p.G_fit_protocol}}},
        {"S_observed", m.protocol.observed},
        {"protocol_probes", protocol_probes},
        {"rounds", rounds},
        {"per_size", size_table(m.pooled)},
        {"mpi_library", info.mpi_library},
        {"host", info.host},
        {"environment", info.environment}}}};
}

void write_json_file(const nlohmann::json& doc, const std::string& path) {
  const std::string text = doc.dump(2) + "\n";
  if (path == "-") {
    std::cout << text;
    return;
  }
  std::ofstream out(path);
  if (!out) throw Error(fmt::format("cannot open '{}' for writing: {}", path, std::strerror(errno)));
  out << text;
  out.close();
  if (!out) throw Error(fmt::format("error writing '{}'", path));
}

}  // namespace llamp::loggp
