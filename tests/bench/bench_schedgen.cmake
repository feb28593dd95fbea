# bench_schedgen: schedgen throughput (trace events per second on one core) on a generated trace
# of LLAMP_BENCH_SCHEDGEN_RANKS × LLAMP_BENCH_SCHEDGEN_EVENTS (default 64 × 1M), cached in the
# build tree after the first run.
if(TARGET llamp_schedgen)
  add_executable(bench_schedgen ${CMAKE_CURRENT_SOURCE_DIR}/bench_schedgen.cpp)
  target_link_libraries(bench_schedgen PRIVATE llamp_schedgen llamp_core benchmark::benchmark fmt::fmt)
  target_compile_definitions(bench_schedgen PRIVATE LLAMP_BENCH_CACHE="${LLAMP_BENCH_OUTPUT_DIR}")
  set_target_properties(bench_schedgen PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${LLAMP_BENCH_OUTPUT_DIR})
endif()
