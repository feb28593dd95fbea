# bench_injector: the injector's own CPU cost per message and per MPI call (no latency injected).
# Run: tests/bench/run_bench_injector.sh <build dir>  (2 ranks, needs the patched MPICH).
add_executable(bench_injector ${CMAKE_CURRENT_LIST_DIR}/bench_injector.cpp)
target_link_libraries(bench_injector PRIVATE llamp_inject_core benchmark::benchmark MPI::MPI_CXX)
set_target_properties(bench_injector PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${LLAMP_BENCH_OUTPUT_DIR})
