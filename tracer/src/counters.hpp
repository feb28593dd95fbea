#pragma once
// Hardware/software counters through PAPI (LLAMP_TRACE_PAPI=PAPI_TOT_INS,perf::TASK-CLOCK).
// Every traced call reads the counters at its start and end; the event carries, per counter,
// the delta since the end of the thread's previous call: the work of the compute interval.
#include <string>
#include <vector>

namespace llamp::tracer {

// Keeps the named counters that exist and can be counted here; the others get ONE warning
// (printed when `report`, i.e. on rank 0) and are dropped. Returns the names kept, in the order
// of Event::counters. Sets g_counters_on when any is kept.
std::vector<std::string> counters_init(const std::string& spec, bool report);

}  // namespace llamp::tracer
