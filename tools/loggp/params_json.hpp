#pragma once
// The parameter file `llamp analyze --params` reads:
//   {"format":"llamp-loggp","version":1,"L_ns","o_ns","g_ns","G_ns_per_byte","S_bytes",
//    "o_send_ns","o_recv_ns","measurement":{...how, how often, medians, spreads, per size...}}
#include <nlohmann/json.hpp>
#include <string>

#include "measurement.hpp"

namespace llamp::loggp {

struct RunInfo {
  std::string mpi_library;  // MPI_Get_library_version, first line
  std::string host;
  nlohmann::json environment;  // name -> value of MPIR_CVAR_*, UCX_*, LLAMP_* variables
};

nlohmann::json to_json(const Measurement& m, const MeasurementPlan& plan, const RunInfo& info);

// Writes `doc` to `path` ("-" = stdout); throws llamp::Error naming the path on failure.
void write_json_file(const nlohmann::json& doc, const std::string& path);

}  // namespace llamp::loggp
