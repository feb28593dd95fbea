# Runs one mini-app under mpiexec and checks what a user of the apps relies on:
#   - the run exits 0 and rank 0 prints "<NAME>: <NP> ranks ..." ;
#   - every rank wrote $COUNTS_DIR/counts-<rank>.json, a JSON object of MPI_* names to
#     non-negative integers, with exactly one of MPI_Init / MPI_Init_thread = 1 and
#     MPI_Finalize = 1, and no other files;
#   - EXPECT ("[all:|rK:|rK+:]MPI_X=<integer expression in NP>", comma-separated): exact counts,
#     a missing name counting as 0;
#   - REPEAT=2: a second run prints the same summary line (checksum) and, for the ranks in
#     COMPARE_RANKS ("all", "K,L" or "K+"), writes identical counts files.
#
# cmake -DMPIEXEC=... -DNP=4 -DAPP=/path/app_x -DNAME=x -DCOUNTS_DIR=... [-DARGS="10 64"]
#       [-DEXPECT=...] [-DREPEAT=2] [-DCOMPARE_RANKS=all] -P check_app_run.cmake

foreach(required MPIEXEC NP APP NAME COUNTS_DIR)
  if(NOT DEFINED ${required} OR "${${required}}" STREQUAL "")
    message(FATAL_ERROR "check_app_run.cmake: -D${required}=... is required")
  endif()
endforeach()
separate_arguments(app_args UNIX_COMMAND "${ARGS}")
if(NOT REPEAT)
  set(REPEAT 1)
endif()

# True if `rank` is selected by `selector`: "all", "K" / "rK", "K+" / "rK+", or a comma list.
function(rank_selected selector rank out)
  set(result FALSE)
  string(REPLACE "," ";" parts "${selector}")
  foreach(part IN LISTS parts)
    string(REGEX REPLACE "^r" "" part "${part}")
    if(part STREQUAL "all")
      set(result TRUE)
    elseif(part MATCHES "^([0-9]+)\\+$")
      if(rank GREATER_EQUAL CMAKE_MATCH_1)
        set(result TRUE)
      endif()
    elseif(part MATCHES "^[0-9]+$" AND rank EQUAL part)
      set(result TRUE)
    endif()
  endforeach()
  set(${out} ${result} PARENT_SCOPE)
endfunction()

# Count of `name` in the JSON text, 0 when absent.
function(json_count json name out)
  string(JSON value ERROR_VARIABLE missing GET "${json}" "${name}")
  if(missing)
    set(value 0)
  endif()
  set(${out} ${value} PARENT_SCOPE)
endfunction()

# Runs the app once into `dir`; returns the summary line; checks the files.
function(run_and_check dir out_summary)
  file(REMOVE_RECURSE "${dir}")
  file(MAKE_DIRECTORY "${dir}")
  set(ENV{LLAMP_APP_COUNTS_DIR} "${dir}")
  execute_process(
    COMMAND "${MPIEXEC}" -n ${NP} "${APP}" ${app_args}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 240)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR
      "${NAME} -n ${NP} ${ARGS}: exit status ${rc}\nstdout:\n${out}\nstderr:\n${err}")
  endif()
  if(NOT out MATCHES "(^|\n)(${NAME}: ${NP} ranks[^\n]*)")
    message(FATAL_ERROR "${NAME}: no summary line '${NAME}: ${NP} ranks ...' on stdout:\n${out}")
  endif()
  set(${out_summary} "${CMAKE_MATCH_2}" PARENT_SCOPE)
  message(STATUS "${CMAKE_MATCH_2}")

  file(GLOB files RELATIVE "${dir}" "${dir}/*")
  list(LENGTH files file_count)
  if(NOT file_count EQUAL NP)
    message(FATAL_ERROR "${dir}: expected ${NP} counts files, found ${file_count}: ${files}")
  endif()

  string(REPLACE "," ";" expectations "${EXPECT}")
  math(EXPR last "${NP} - 1")
  foreach(rank RANGE ${last})
    set(path "${dir}/counts-${rank}.json")
    if(NOT EXISTS "${path}")
      message(FATAL_ERROR "${path}: missing (rank ${rank} wrote no counts)")
    endif()
    file(READ "${path}" json)
    string(JSON type ERROR_VARIABLE parse_error TYPE "${json}")
    if(parse_error)
      message(FATAL_ERROR "${path}: not valid JSON: ${parse_error}")
    endif()
    if(NOT type STREQUAL "OBJECT")
      message(FATAL_ERROR "${path}: top level is ${type}, expected an object")
    endif()
    string(JSON members LENGTH "${json}")
    if(members EQUAL 0)
      message(FATAL_ERROR "${path}: empty object")
    endif()
    math(EXPR last_member "${members} - 1")
    foreach(i RANGE ${last_member})
      string(JSON key MEMBER "${json}" ${i})
      string(JSON value GET "${json}" "${key}")
      if(NOT key MATCHES "^MPI_[A-Z][a-z0-9_]*$")
        message(FATAL_ERROR "${path}: '${key}' is not an MPI function name")
      endif()
      if(NOT value MATCHES "^[0-9]+$")
        message(FATAL_ERROR "${path}: ${key} = '${value}' is not a non-negative integer")
      endif()
    endforeach()

    json_count("${json}" MPI_Init init)
    json_count("${json}" MPI_Init_thread init_thread)
    json_count("${json}" MPI_Finalize finalize)
    math(EXPR inits "${init} + ${init_thread}")
    if(NOT inits EQUAL 1 OR NOT finalize EQUAL 1)
      message(FATAL_ERROR "${path}: MPI_Init=${init} MPI_Init_thread=${init_thread} "
                          "MPI_Finalize=${finalize}; expected one init call and one MPI_Finalize")
    endif()

    foreach(expectation IN LISTS expectations)
      set(selector all)
      if(expectation MATCHES "^([^:]+):(.*)$")
        set(selector "${CMAKE_MATCH_1}")
        set(expectation "${CMAKE_MATCH_2}")
      endif()
      if(NOT expectation MATCHES "^(MPI_[A-Za-z0-9_]+)=(.+)$")
        message(FATAL_ERROR "check_app_run.cmake: bad EXPECT entry '${expectation}'")
      endif()
      set(name "${CMAKE_MATCH_1}")
      string(REPLACE "NP" "${NP}" expression "${CMAKE_MATCH_2}")
      rank_selected("${selector}" ${rank} selected)
      if(selected)
        math(EXPR expected "${expression}")
        json_count("${json}" ${name} actual)
        if(NOT actual EQUAL expected)
          message(FATAL_ERROR "${path}: ${name} = ${actual}, expected ${expected} "
                              "(${CMAKE_MATCH_2} with NP=${NP}; ${NAME} ${ARGS})")
        endif()
      endif()
    endforeach()
  endforeach()
endfunction()

run_and_check("${COUNTS_DIR}/run1" first_summary)
if(REPEAT GREATER 1)
  run_and_check("${COUNTS_DIR}/run2" second_summary)
  if(NOT first_summary STREQUAL second_summary)
    message(FATAL_ERROR
      "${NAME} -n ${NP}: two runs differ:\n  ${first_summary}\n  ${second_summary}")
  endif()
  math(EXPR last "${NP} - 1")
  foreach(rank RANGE ${last})
    rank_selected("${COMPARE_RANKS}" ${rank} selected)
    if(selected)
      file(READ "${COUNTS_DIR}/run1/counts-${rank}.json" one)
      file(READ "${COUNTS_DIR}/run2/counts-${rank}.json" two)
      if(NOT one STREQUAL two)
        message(FATAL_ERROR "${NAME} -n ${NP}: rank ${rank} made different calls in two runs:\n"
                            "${one}\n${two}")
      endif()
    endif()
  endforeach()
endif()
