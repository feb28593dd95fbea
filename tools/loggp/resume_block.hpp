#pragma once
// The blocks of work whose time after a wait is the CPU's resume cost (llamp-noise) and what
// bench_cold_resume times: calls into MPICH that touch its collective, datatype and copy paths but
// wait for nobody (MPI_COMM_SELF), as the work a rank does after a wait touches MPICH and its data.
// a: 32 doubles, b: 64.
//
// resume_block is the first work after the wait. following_blocks is the work after that: other
// code (other collectives, vector variants, scans), so that it finds its instructions and data as
// cold as the first block found its own. A rank's work after a wait is rarely a loop over the same
// few calls (app_subcomm: a dozen different collectives between two waits), and on the 2-vCPU VM
// of stop 36 such distinct work ran 40-60 % slower after a 100 µs spin, while the same block run a
// second time was hot again (docs/analyzer.md, "Resume cost").
#include <mpi.h>

namespace llamp::tools {

inline void resume_block(double* a, double* b) {
  for (int i = 0; i < 2; ++i) {
    MPI_Bcast(a, 32, MPI_DOUBLE, 0, MPI_COMM_SELF);
    MPI_Allreduce(MPI_IN_PLACE, a, 32, MPI_DOUBLE, MPI_MAX, MPI_COMM_SELF);
    MPI_Allgather(a, 32, MPI_DOUBLE, b, 32, MPI_DOUBLE, MPI_COMM_SELF);
    MPI_Alltoall(a, 16, MPI_DOUBLE, b, 16, MPI_DOUBLE, MPI_COMM_SELF);
  }
}

inline void following_blocks(double* a, double* b) {
  int counts[1] = {4}, displs[1] = {0}, one[1] = {1};
  for (int i = 0; i < 2; ++i) {
    MPI_Gather(a, 8, MPI_DOUBLE, b, 8, MPI_DOUBLE, 0, MPI_COMM_SELF);
    MPI_Scatter(a, 8, MPI_DOUBLE, b, 8, MPI_DOUBLE, 0, MPI_COMM_SELF);
    MPI_Reduce(a, b, 16, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_SELF);
    MPI_Scan(a, b, 16, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF);
  }
  for (int i = 0; i < 2; ++i) {
    MPI_Gatherv(a, 4, MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, 0, MPI_COMM_SELF);
    MPI_Scatterv(a, counts, displs, MPI_DOUBLE, b, 4, MPI_DOUBLE, 0, MPI_COMM_SELF);
    MPI_Allgatherv(a, 4, MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, MPI_COMM_SELF);
    MPI_Alltoallv(a, counts, displs, MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, MPI_COMM_SELF);
  }
  for (int i = 0; i < 2; ++i) {
    MPI_Reduce_scatter(a, b, one, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF);
    MPI_Reduce_scatter_block(a, b, 2, MPI_DOUBLE, MPI_MIN, MPI_COMM_SELF);
    MPI_Exscan(a, b, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF);
    MPI_Reduce_local(a, b, 32, MPI_DOUBLE, MPI_PROD);
  }
}

}  // namespace llamp::tools
