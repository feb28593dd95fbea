// trace_dump <trace dir> [rank]: prints a trace's events one per line (a debugging aid for the
// tracer tests; `llamp` has the user-facing tools).
#include <fmt/format.h>

#include <cstdlib>
#include <string>

#include "llamp/error.hpp"
#include "llamp/trace_dir.hpp"

using namespace llamp::trace;

static std::string ranks(const std::vector<int32_t>& v) {
  std::string s;
  for (int32_t r : v) s += fmt::format("{}{}", s.empty() ? "" : ",", r);
  return s;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "usage: trace_dump <trace dir> [rank]\n");
    return 2;
  }
  try {
    TraceDir dir = TraceDir::open(argv[1]);
    for (auto& r : dir.ranks) {
      if (argc > 2 && r.rank() != static_cast<uint32_t>(std::atoi(argv[2]))) continue;
      fmt::print("# rank {} events {} truncated {}\n", r.rank(), r.event_count(), r.truncated());
      while (const Event* e = r.next()) {
        std::string line = fmt::format("{} th={} t={} d={} comm={:#x}", call_name(e->call), e->thread, e->t_start_ns,
                                       e->t_end_ns - e->t_start_ns, e->comm);
        if (e->peer != kNoRank) line += fmt::format(" peer={}", e->peer);
        if (e->tag != kNoRank) line += fmt::format(" tag={}", e->tag);
        if (e->bytes) line += fmt::format(" bytes={}", e->bytes);
        if (e->root != kNoRank) line += fmt::format(" root={}", e->root);
        if (e->peer2 != kNoRank)
          line += fmt::format(" peer2={} tag2={} bytes2={}", e->peer2, e->tag2, e->bytes2);
        else if (e->bytes2)
          line += fmt::format(" bytes2={}", e->bytes2);
        if (e->request) line += fmt::format(" req={}", e->request);
        if (!e->requests.empty()) {
          line += " reqs=";
          for (auto q : e->requests) line += fmt::format("{},", q);
        }
        for (const auto& c : e->completions)
          line += fmt::format(" [i={} req={} src={} tag={} bytes={}{}]", c.index, c.request, c.source, c.tag, c.bytes,
                              c.cancelled ? " cancelled" : "");
        if (!e->send_counts.empty() || !e->recv_counts.empty())
          line += fmt::format(" scounts={} rcounts={}", e->send_counts.size(), e->recv_counts.size());
        if (e->new_comm != kCommNull) line += fmt::format(" new={:#x}", e->new_comm);
        if (!e->members.empty()) line += " members=" + ranks(e->members);
        if (!e->remote_members.empty()) line += " remote=" + ranks(e->remote_members);
        for (auto c : e->counters) line += fmt::format(" ctr={}", c);
        if (e->flags) line += fmt::format(" flags={:#x}", e->flags);
        if (e->value) line += fmt::format(" value={}", e->value);
        fmt::print("{}\n", line);
      }
    }
  } catch (const llamp::Error& e) {
    fmt::print(stderr, "trace_dump: {}\n", e.what());
    return 1;
  }
  return 0;
}
