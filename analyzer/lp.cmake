# The LP route of the analyzer (COIN-OR Clp): analyzer/lp_*.cpp into llamp_analyzer.
# analyzer/CMakeLists.txt includes this after it defines the llamp_analyzer target.
pkg_check_modules(CLP REQUIRED IMPORTED_TARGET clp)
file(GLOB LLAMP_LP_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/lp_*.cpp)
target_sources(llamp_analyzer PRIVATE ${LLAMP_LP_SOURCES})
target_link_libraries(llamp_analyzer PUBLIC PkgConfig::CLP)
