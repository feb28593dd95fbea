# bench_analyzer: native engine throughput (events/s), exact critical-latency curve, memory per event.
# Run: build/bench/bench_analyzer  (10 M-event graphs take ~1 GB while they are built).
if(TARGET llamp_analyzer)
  add_executable(bench_analyzer ${CMAKE_CURRENT_LIST_DIR}/bench_analyzer.cpp)
  target_link_libraries(bench_analyzer PRIVATE llamp_analyzer llamp_core benchmark::benchmark)
  set_target_properties(bench_analyzer PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${LLAMP_BENCH_OUTPUT_DIR})
endif()
