# bench_cold_resume: what MPI calls cost right after a rank has waited (spun) for a while; the
# machine, not llamp: on some machines (the 2-vCPU VM) a CPU that spins for milliseconds comes back slow.
# Run: mpiexec -n 2 -bind-to core build/bench/bench_cold_resume (any MPI; no injector needed).
add_executable(bench_cold_resume ${CMAKE_CURRENT_LIST_DIR}/bench_cold_resume.cpp)
target_link_libraries(bench_cold_resume PRIVATE benchmark::benchmark MPI::MPI_CXX)
# the block it times is llamp-noise's resume block
target_include_directories(bench_cold_resume PRIVATE ${PROJECT_SOURCE_DIR}/tools/loggp)
set_target_properties(bench_cold_resume PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${LLAMP_BENCH_OUTPUT_DIR})
