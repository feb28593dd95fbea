#pragma once
// LogGPS parameters: the JSON file `llamp-loggp` writes (docs/FORMATS.md, "LogGP parameter file")
// and command-line flags with units. Flags override the file.
//
//   {"format": "llamp-loggp", "version": 1,
//    "L_ns": 3000, "o_ns": 5000, "g_ns": 0, "G_ns_per_byte": 0.018, "S_bytes": 262144,
//    "o_send_ns": ..., "o_recv_ns": ..., "O_ns_per_byte": ...,      (optional)
//    "o_rndv_ns": ...,                                                 (optional)
//    "o_coll_ns": ..., "o_probe_ns": ..., "o_rndv_cold_ns": ...,       (optional, for llamp schedgen)
//    "measurement": {...}}                                             (optional, free-form)
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace llamp {

// Parameters as given; any may be missing until resolve().
struct LogGPParams {
  std::optional<double> L_ns, o_ns, g_ns, G_ns_per_byte;
  std::optional<uint64_t> S_bytes;
  std::optional<double> o_send_ns, o_recv_ns, O_ns_per_byte;
  // CPU time of a blocking collective call beyond the messages of its algorithm (MPICH's own
  // bookkeeping). Not part of the path model: `llamp schedgen --collective-overhead` puts it into
  // the graph as computation.
  std::optional<double> o_coll_ns;
  // CPU time of a blocking MPI_Probe/MPI_Mprobe whose message is already there (matching it in
  // the unexpected queue). Not part of the path model: `llamp schedgen --probe-overhead` puts it
  // into the graph after the probed message's arrival.
  std::optional<double> o_probe_ns;
  // The receiver's extra time in a rendezvous transfer at L = 0: handling the request-to-send,
  // starting the read (on one node a process_vm_readv system call) and sending the completion
  // notice. The path model's rendezvous has only the latency terms for these, and with L near 0
  // they cost nothing; llamp-loggp measures it as the rendezvous fit's intercept less o_s, o_r
  // and 3L (docs/analyzer.md).
  std::optional<double> o_rndv_ns;
  // What a rendezvous handshake costs beyond o_rndv when the call that starts it follows a
  // computation that swept memory (cold caches; llamp-loggp's cold_handshakes). Not part of the
  // path model: `llamp schedgen --cold-handshake` puts it into the graph.
  std::optional<double> o_rndv_cold_ns;
  nlohmann::json measurement;  // free-form provenance, kept for reports
};

// Complete parameters a model runs with.
struct LogGP {
  double L_ns = 0;            // network latency
  double o_send_ns = 0;       // CPU overhead of a send
  double o_recv_ns = 0;       // CPU overhead of a receive
  double g_ns = 0;            // gap between consecutive messages
  double G_ns_per_byte = 0;   // gap per byte (inverse bandwidth)
  double O_ns_per_byte = 0;   // CPU overhead per byte
  uint64_t S_bytes = 0;       // messages of more than S bytes use rendezvous
  double o_coll_ns = 0;       // a collective call's own CPU time (applied by schedgen, not the analyzer)
  double o_probe_ns = 0;      // a blocking probe's own CPU time (applied by schedgen, not the analyzer)
  double o_rndv_ns = 0;       // a rendezvous receive's extra time (handshake), part of its o_r
  double o_rndv_cold_ns = 0;  // ... more after a computation that swept memory (applied by schedgen)
};

// Reads and checks a parameter file: required keys present, numbers finite and ≥ 0, S a whole
// number, no unknown keys. Errors name the file and the key.
LogGPParams read_loggp_params(const std::string& path);
LogGPParams parse_loggp_params(std::string_view json_text, const std::string& name);
nlohmann::json to_json(const LogGPParams& p);

// Sets one parameter from a flag value with units: flag is one of L, o, g, G, S, o_send, o_recv, O, o_coll,
// o_probe, o_rndv
// (with or without leading dashes, '-' or '_'). Times take ns|us|ms|s, G and O take a time per
// byte ("0.018ns"), S takes B|KiB|MiB|GiB|KB|MB|GB or "inf" (never rendezvous). A bare number
// is an error naming the flag.
void set_loggp_flag(LogGPParams& p, std::string_view flag, std::string_view value);

// Fills defaults (g = 0, O = 0, o_send = o_recv = o) and checks that L, o, G and S are given;
// a missing one throws llamp::Error saying which flag or key supplies it.
LogGP resolve(const LogGPParams& p);

}  // namespace llamp
