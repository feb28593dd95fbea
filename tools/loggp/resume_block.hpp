#pragma once
// The block of work whose time after a wait is the CPU's resume cost (llamp-noise) and what
// bench_cold_resume times: eight calls into MPICH that touch its collective, datatype and copy
// paths but wait for nobody (MPI_COMM_SELF), as the work a rank does after a wait touches MPICH
// and its data. a: 32 doubles, b: 64.
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

}  // namespace llamp::tools
