# bench_runtime_timer: what the runtime timer's MPI wrappers (the time inside MPI, for
# --noisy-compute) add to each call. Run: mpiexec.mpich -n 2 build/bench/bench_runtime_timer
add_executable(bench_runtime_timer ${CMAKE_CURRENT_LIST_DIR}/bench_runtime_timer.cpp)
# llamp_runtime_timer first: the benchmark's MPI_* must resolve to the timer's wrappers.
target_link_libraries(bench_runtime_timer PRIVATE llamp_runtime_timer benchmark::benchmark MPI::MPI_CXX)
target_link_options(bench_runtime_timer PRIVATE -Wl,--no-as-needed)
set_target_properties(bench_runtime_timer PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${LLAMP_BENCH_OUTPUT_DIR})
