// The main() of llamp's MPI tools (llamp-loggp, llamp-noise): how an error ends the job.
//
// An error found before the ranks first communicate (a bad option, the wrong rank count) is found
// by every rank alike, so rank 0 reports it and every rank finalizes and exits with status 2.
// MPI_Abort is not used there: Hydra may kill the job before it has forwarded the aborting rank's
// stderr, and the user then sees a failed job without the reason (CI saw exactly that for
// `llamp-noise --duration 3`). An error after the first communication may leave other ranks
// waiting in a collective, so it still aborts the job.
#pragma once

#include <mpi.h>

#include <cstdio>
#include <exception>

namespace llamp::tools {

// The tool sets `communicating` just before its ranks first talk to each other.
struct ToolPhase {
  bool communicating = false;
};

// `run(argc, argv, rank, phase)` returns the exit status; exceptions are reported as
// "<name>: error: <what>".
template <class Run>
int mpi_tool_main(const char* name, int argc, char** argv, Run run) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  ToolPhase phase;
  int status = 0;
  try {
    status = run(argc, argv, rank, phase);
  } catch (const std::exception& e) {
    if (phase.communicating || rank == 0) std::fprintf(stderr, "%s: error: %s\n", name, e.what());
    if (phase.communicating) MPI_Abort(MPI_COMM_WORLD, 2);
    status = 2;
  }
  MPI_Finalize();
  return status;
}

}  // namespace llamp::tools
