# bench_lp: the LP route (Clp) beside the native engine on generated graphs (tests/bench/bench_lp.cpp).
if(TARGET llamp_analyzer)
  add_executable(bench_lp ${CMAKE_CURRENT_LIST_DIR}/bench_lp.cpp)
  target_include_directories(bench_lp PRIVATE ${CMAKE_SOURCE_DIR}/tests/analyzer)
  target_link_libraries(bench_lp PRIVATE llamp_analyzer benchmark::benchmark)
  set_target_properties(bench_lp PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${LLAMP_BENCH_OUTPUT_DIR})
endif()
