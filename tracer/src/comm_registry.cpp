#include "comm_registry.hpp"

#include <algorithm>
#include <memory>
#include <mutex>
#include <numeric>

#include "handle_table.hpp"

namespace llamp::tracer {
namespace {

struct Registry {
  CommInfo world;
  CommInfo self;
  int world_rank = 0;
  MPI_Group world_group = MPI_GROUP_NULL;
  HandleTable table{12};
  std::atomic<uint64_t> counter{0};
  std::mutex owned_mutex;
  std::vector<std::unique_ptr<CommInfo>> owned;  // never freed: pending requests may point here
};

Registry& registry() {
  static Registry* r = new Registry();  // leaked on purpose: used until the process exits
  return *r;
}

std::vector<int32_t> world_ranks_of(MPI_Group g) {
  int n = 0;
  PMPI_Group_size(g, &n);
  std::vector<int> in(static_cast<size_t>(n)), out(static_cast<size_t>(n));
  std::iota(in.begin(), in.end(), 0);
  PMPI_Group_translate_ranks(g, n, in.data(), registry().world_group, out.data());
  return {out.begin(), out.end()};
}

// Out of line: the flattened wrappers (gen_wrappers.py FLATTEN) must not inline it.
[[gnu::noinline]] CommInfo* make_info(MPI_Comm c, uint64_t id) {
  auto info = std::make_unique<CommInfo>();
  info->id = id;
  int inter = 0;
  PMPI_Comm_test_inter(c, &inter);
  info->inter = inter != 0;
  MPI_Group g;
  PMPI_Comm_group(c, &g);
  info->local = world_ranks_of(g);
  PMPI_Group_free(&g);
  if (info->inter) {
    PMPI_Comm_remote_group(c, &g);
    info->remote = world_ranks_of(g);
    PMPI_Group_free(&g);
  }
  Registry& r = registry();
  CommInfo* raw = info.get();
  {
    std::lock_guard lock(r.owned_mutex);
    r.owned.push_back(std::move(info));
  }
  r.table.put(handle_key(c), {id, reinterpret_cast<uint64_t>(raw)});
  return raw;
}

// Ids minted by one rank: its world rank in the high word, a per-rank counter in the low one.
uint64_t mint_id() {
  Registry& r = registry();
  return (static_cast<uint64_t>(r.world_rank) << 32) | (r.counter.fetch_add(1) + 1);
}

uint64_t mix(uint64_t x) {  // splitmix64 finalizer
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

void comm_registry_init(int world_rank, int world_size) {
  Registry& r = registry();
  r.world_rank = world_rank;
  PMPI_Comm_group(MPI_COMM_WORLD, &r.world_group);
  r.world.id = trace::kCommWorld;
  r.world.local.resize(static_cast<size_t>(world_size));
  std::iota(r.world.local.begin(), r.world.local.end(), 0);
  r.self.id = trace::comm_self_id(static_cast<uint32_t>(world_rank));
  r.self.local = {world_rank};
  r.table.put(handle_key(MPI_COMM_SELF), {r.self.id, reinterpret_cast<uint64_t>(&r.self)});
}

const CommInfo* comm_info(MPI_Comm c) {
  Registry& r = registry();
  if (c == MPI_COMM_WORLD) return &r.world;
  HandleTable::Value v = r.table.get(handle_key(c));
  if (v.id != 0) return reinterpret_cast<const CommInfo*>(v.aux);
  if (c == MPI_COMM_NULL) return &r.world;  // erroneous call: MPI reports it; keep the event sane
  return make_info(c, (uint64_t{1} << 61) | mint_id());
}

uint64_t comm_id_of(MPI_Comm c) { return comm_info(c)->id; }

const CommInfo* comm_register_new(MPI_Comm c) {
  int inter = 0;
  PMPI_Comm_test_inter(c, &inter);
  uint64_t id = 0;
  if (!inter) {
    // Rank 0 of the new communicator mints the id for everyone.
    int rank = 0;
    PMPI_Comm_rank(c, &rank);
    if (rank == 0) id = mint_id();
    PMPI_Bcast(&id, 1, MPI_UINT64_T, 0, c);
  } else {
    // Each group's rank 0 mints a candidate. An allreduce over an intercommunicator delivers
    // the REMOTE group's result, so two rounds give every rank both candidates; all take the
    // smaller one.
    int rank = 0;
    PMPI_Comm_rank(c, &rank);
    uint64_t mine = rank == 0 ? mint_id() : 0, theirs = 0, ours = 0;
    PMPI_Allreduce(&mine, &theirs, 1, MPI_UINT64_T, MPI_MAX, c);
    PMPI_Allreduce(&theirs, &ours, 1, MPI_UINT64_T, MPI_MAX, c);
    id = std::min(ours, theirs);
  }
  return make_info(c, id);
}

const CommInfo* comm_register_idup(MPI_Comm parent, MPI_Comm copy) {
  CommInfo* p = const_cast<CommInfo*>(comm_info(parent));
  const uint64_t n = p->idup_count.fetch_add(1) + 1;
  // Bit 63 marks derived ids; bit 62 (MPI_COMM_SELF ids) stays clear, so never kCommNull.
  const uint64_t id = (uint64_t{1} << 63) | (mix(p->id * 0x100000001B3ull + n) & ((uint64_t{1} << 61) - 1));
  auto info = std::make_unique<CommInfo>();
  info->id = id;
  info->inter = p->inter;
  info->local = p->local;
  info->remote = p->remote;
  Registry& r = registry();
  CommInfo* raw = info.get();
  {
    std::lock_guard lock(r.owned_mutex);
    r.owned.push_back(std::move(info));
  }
  r.table.put(handle_key(copy), {id, reinterpret_cast<uint64_t>(raw)});
  return raw;
}

void comm_forget(MPI_Comm c) { registry().table.erase(handle_key(c)); }

}  // namespace llamp::tracer
