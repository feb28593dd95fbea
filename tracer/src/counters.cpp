#include "counters.hpp"

#include <papi.h>
#include <pthread.h>

#include <cstdio>
#include <sstream>

#include "runtime.hpp"

namespace llamp::tracer {
namespace {

std::vector<int> g_codes;

unsigned long thread_id_for_papi() { return static_cast<unsigned long>(pthread_self()); }

std::vector<std::string> split(const std::string& spec) {
  std::vector<std::string> out;
  std::stringstream in(spec);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// A fresh event set for the calling thread, started; -1 when PAPI refuses (why in *error).
int start_eventset(const std::vector<int>& codes, int* error = nullptr) {
  int es = PAPI_NULL;
  int rc = PAPI_create_eventset(&es);
  for (size_t i = 0; rc == PAPI_OK && i < codes.size(); ++i) rc = PAPI_add_event(es, codes[i]);
  if (rc == PAPI_OK) rc = PAPI_start(es);
  if (rc == PAPI_OK) return es;
  if (error) *error = rc;
  if (es != PAPI_NULL) {
    PAPI_cleanup_eventset(es);
    PAPI_destroy_eventset(&es);
  }
  return -1;
}

}  // namespace

std::vector<std::string> counters_init(const std::string& spec, bool report) {
  std::vector<std::string> kept;
  const std::vector<std::string> wanted = split(spec);
  if (wanted.empty()) return kept;
  int v = PAPI_library_init(PAPI_VER_CURRENT);
  if (v != PAPI_VER_CURRENT || PAPI_thread_init(thread_id_for_papi) != PAPI_OK) {
    if (report)
      std::fprintf(stderr,
                   "llamptrace: LLAMP_TRACE_PAPI=%s: PAPI cannot start here (%s); tracing continues "
                   "without counters\n",
                   spec.c_str(), v < 0 ? PAPI_strerror(v) : "version mismatch");
    return kept;
  }
  std::string missing;
  for (const std::string& name : wanted) {
    int code = 0;
    int rc = PAPI_event_name_to_code(const_cast<char*>(name.c_str()), &code);
    if (rc == PAPI_OK) {
      // Existing is not enough: the event must also be countable (e.g. a PMU event on a VM).
      std::vector<int> trial = g_codes;
      trial.push_back(code);
      int add_error = PAPI_OK;
      int es = start_eventset(trial, &add_error);
      if (es >= 0) {
        long long scratch[64];
        PAPI_stop(es, scratch);
        PAPI_cleanup_eventset(es);
        PAPI_destroy_eventset(&es);
        g_codes.push_back(code);
        kept.push_back(name);
        continue;
      }
      missing += (missing.empty() ? "" : ", ") + name +
                 " (known to PAPI but cannot be counted here: " + PAPI_strerror(add_error) + ")";
      continue;
    }
    missing += (missing.empty() ? "" : ", ") + name + " (" + PAPI_strerror(rc) + ")";
  }
  if (report && !missing.empty())
    std::fprintf(stderr,
                 "llamptrace: counters not available on this machine: %s; tracing continues without "
                 "them%s\n",
                 missing.c_str(), kept.empty() ? "" : " (the others are recorded)");
  g_counters_on = !kept.empty();
  return kept;
}

void counters_begin(ThreadState& ts) {
  if (ts.counters_failed) return;
  if (ts.eventset < 0) {
    ts.eventset = start_eventset(g_codes);
    if (ts.eventset < 0) {
      ts.counters_failed = true;
      return;
    }
    ts.counters_end.assign(g_codes.size(), 0);
    ts.counters_now.assign(g_codes.size(), 0);
    ts.counters_delta.assign(g_codes.size(), 0);
  }
  PAPI_read(ts.eventset, ts.counters_now.data());
  for (size_t i = 0; i < g_codes.size(); ++i) ts.counters_delta[i] = ts.counters_now[i] - ts.counters_end[i];
}

void counters_end(ThreadState& ts) {
  if (ts.eventset < 0) return;
  PAPI_read(ts.eventset, ts.counters_end.data());
}

}  // namespace llamp::tracer
