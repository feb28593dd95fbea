# bench_tracer: added time per intercepted call, encode cost, clock cost, trace bytes per event.
# Run: tests/bench/run_bench_tracer.sh <build dir>  (needs 2 ranks and the halo mini-app).
if(TARGET llamptrace)
  add_executable(bench_tracer ${CMAKE_CURRENT_LIST_DIR}/bench_tracer.cpp)
  # llamptrace first: the benchmark's MPI_* must resolve to the tracer's wrappers.
  target_link_libraries(bench_tracer PRIVATE llamptrace llamp_core benchmark::benchmark MPI::MPI_CXX)
  target_link_options(bench_tracer PRIVATE -Wl,--no-as-needed)
  set_target_properties(bench_tracer PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${LLAMP_BENCH_OUTPUT_DIR})
endif()
