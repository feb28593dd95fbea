// The point-to-point algorithms behind each collective. They follow MPICH 4.0.2's intra-communicator
// implementations (src/mpi/coll/<coll>/<coll>_intra_<algo>.c) in who talks to whom, in which round
// and with how many bytes; reductions cost no computation (the trace cannot tell us their cost).
//
// Conventions: algorithms run in "virtual ranks" v = (rank - shift) mod p, where shift is the root
// for rooted collectives, so every peer goes through Emit::to_real. A Frontier is the set of ops the
// next step waits for; an empty one means "the start of the collective".
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "llamp/error.hpp"
#include "llamp/schedgen/collectives.hpp"

namespace llamp::schedgen {

uint32_t RankSchedule::add(bool is_send, uint32_t peer, uint64_t bytes, std::span<const uint32_t> after) {
  CollOp op;
  op.is_send = is_send;
  op.peer = peer;
  op.bytes = bytes;
  op.dep_begin = static_cast<uint32_t>(deps.size());
  op.dep_count = static_cast<uint32_t>(after.size());
  deps.insert(deps.end(), after.begin(), after.end());
  ops.push_back(op);
  return static_cast<uint32_t>(ops.size() - 1);
}

std::vector<uint32_t> RankSchedule::exits() const {
  std::vector<bool> has_dependent(ops.size(), false);
  for (uint32_t d : deps) has_dependent[d] = true;
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < ops.size(); ++i)
    if (!has_dependent[i]) out.push_back(i);
  return out;
}

namespace {

using Frontier = std::vector<uint32_t>;

uint32_t pof2_floor(uint32_t p) {
  uint32_t x = 1;
  while (x * 2 <= p) x *= 2;
  return x;
}
bool is_pof2(uint32_t p) { return (p & (p - 1)) == 0; }

// Adds ops to one member's schedule, translating virtual ranks to communicator ranks.
struct Emit {
  RankSchedule& s;
  uint32_t p;
  uint32_t shift;
  uint32_t to_real(uint32_t v) const { return static_cast<uint32_t>((uint64_t{v} + shift) % p); }
  uint32_t send(uint32_t v, uint64_t bytes, const Frontier& after) { return s.add(true, to_real(v), bytes, after); }
  uint32_t recv(uint32_t v, uint64_t bytes, const Frontier& after) { return s.add(false, to_real(v), bytes, after); }
  // A send and a receive running concurrently (MPI_Sendrecv); the next step waits for both.
  Frontier exchange(uint32_t to, uint64_t send_bytes, uint32_t from, uint64_t recv_bytes, const Frontier& after) {
    uint32_t a = send(to, send_bytes, after);
    uint32_t b = recv(from, recv_bytes, after);
    return {a, b};
  }
};

// Block sizes indexed by virtual rank with prefix sums for range totals.
struct Blocks {
  std::vector<uint64_t> prefix;  // prefix[i] = sum of blocks [0, i)
  explicit Blocks(const std::vector<uint64_t>& sizes) : prefix(sizes.size() + 1, 0) {
    for (size_t i = 0; i < sizes.size(); ++i) prefix[i + 1] = prefix[i] + sizes[i];
  }
  uint64_t sum(uint64_t lo, uint64_t hi) const {  // [lo, hi) clamped to the block count
    uint64_t n = prefix.size() - 1;
    lo = std::min(lo, n);
    hi = std::min(hi, n);
    return hi > lo ? prefix[hi] - prefix[lo] : 0;
  }
  uint64_t total() const { return prefix.back(); }
};

// n bytes cut into k nearly equal pieces (the first n % k pieces one byte larger).
std::vector<uint64_t> split_even(uint64_t n, uint32_t k) {
  std::vector<uint64_t> out(k, n / k);
  for (uint32_t i = 0; i < n % k; ++i) out[i] += 1;
  return out;
}

// ---------------------------------------------------------------- building blocks

Frontier dissemination_barrier(Emit& e, uint32_t me, Frontier f) {
  for (uint64_t k = 1; k < e.p; k <<= 1)
    f = e.exchange(static_cast<uint32_t>((me + k) % e.p), 0, static_cast<uint32_t>((me + e.p - k % e.p) % e.p), 0, f);
  return f;
}

// MPIR_Bcast_intra_binomial: receive from the parent, then send to children, largest subtree first.
// `subtree_bytes(child_v, extent)`: bytes sent to a child whose subtree is [child_v, child_v+extent).
template <class Bytes>
Frontier binomial_down(Emit& e, uint32_t vr, Frontier f, Bytes subtree_bytes) {
  uint32_t p = e.p;
  uint64_t mask = 1;
  while (mask < p) {
    if (vr & mask) {
      uint32_t parent = static_cast<uint32_t>(vr - mask);
      f = {e.recv(parent, subtree_bytes(vr, mask), f)};
      break;
    }
    mask <<= 1;
  }
  mask >>= 1;
  while (mask > 0) {
    if (vr + mask < p) {
      uint32_t child = static_cast<uint32_t>(vr + mask);
      f = {e.send(child, subtree_bytes(child, mask), f)};  // MPICH sends one child after the other
    }
    mask >>= 1;
  }
  return f;
}

// MPIR_Reduce_intra_binomial / MPIR_Gather_intra_binomial: receive from children (smallest subtree
// first), then send to the parent. `subtree_bytes(v, extent)` as above.
template <class Bytes>
Frontier binomial_up(Emit& e, uint32_t vr, Frontier f, Bytes subtree_bytes) {
  uint32_t p = e.p;
  for (uint64_t mask = 1; mask < p; mask <<= 1) {
    if ((vr & mask) == 0) {
      uint64_t child = vr | mask;
      if (child < p) f = {e.recv(static_cast<uint32_t>(child), subtree_bytes(static_cast<uint32_t>(child), mask), f)};
    } else {
      uint32_t parent = static_cast<uint32_t>(vr & ~mask);
      f = {e.send(parent, subtree_bytes(vr, mask), f)};
      break;
    }
  }
  return f;
}

// Ring allgather over per-virtual-rank blocks: in step k rank v forwards block v-k to v+1.
Frontier ring_allgather(Emit& e, uint32_t vr, const std::vector<uint64_t>& block, Frontier f) {
  uint32_t p = e.p;
  uint32_t right = (vr + 1) % p, left = (vr + p - 1) % p;
  for (uint32_t k = 0; k + 1 < p; ++k) {
    uint32_t sb = (vr + p - k) % p, rb = (vr + 2 * p - k - 1) % p;
    f = e.exchange(right, block[sb], left, block[rb], f);
  }
  return f;
}

// Non-power-of-two folding used by MPICH's recursive doubling/halving algorithms: of the first
// 2*rem ranks, the even ones hand their part to their odd neighbour and sit out. Returns the
// rank's new rank in the power-of-two group, or -1 for ranks that sit out.
int64_t fold_newrank(uint32_t me, uint32_t rem) {
  if (me < 2 * rem) return (me % 2 == 0) ? int64_t{-1} : int64_t{me / 2};
  return int64_t{me} - rem;
}
uint32_t unfold(uint32_t newrank, uint32_t rem) { return newrank < rem ? newrank * 2 + 1 : newrank + rem; }

// Recursive doubling allgather over arbitrary block sizes (block[v] for every rank), MPICH-style
// folding for non-powers of two: even ranks of the first 2*rem give their block to the odd
// neighbour first and get everything back at the end.
Frontier rd_allgather(Emit& e, uint32_t vr, const std::vector<uint64_t>& block, Frontier f) {
  uint32_t p = e.p, pof2 = pof2_floor(p), rem = p - pof2;
  Blocks b(block);
  int64_t nr = fold_newrank(vr, rem);
  if (vr < 2 * rem) {
    if (nr < 0)
      f = {e.send(vr + 1, block[vr], f)};
    else
      f = {e.recv(vr - 1, block[vr - 1], f)};
  }
  // Bytes held by the group of new ranks [lo, hi): a new rank < rem holds two original blocks.
  auto group_bytes = [&](uint32_t lo, uint32_t hi) {
    uint64_t sum = 0;
    uint32_t two_hi = std::min(hi, rem);
    if (lo < two_hi) sum += b.sum(2 * lo, 2 * two_hi);
    uint32_t one_lo = std::max(lo, rem);
    if (one_lo < hi) sum += b.sum(one_lo + rem, hi + rem);
    return sum;
  };
  if (nr >= 0) {
    uint32_t me = static_cast<uint32_t>(nr);
    for (uint32_t mask = 1; mask < pof2; mask <<= 1) {
      uint32_t partner = me ^ mask;
      uint32_t mine_lo = me & ~(mask - 1), theirs_lo = partner & ~(mask - 1);
      f = e.exchange(unfold(partner, rem), group_bytes(mine_lo, mine_lo + mask), unfold(partner, rem),
                     group_bytes(theirs_lo, theirs_lo + mask), f);
    }
  }
  if (vr < 2 * rem) {
    uint64_t rest = b.total() - block[nr < 0 ? vr : vr - 1];
    if (nr < 0)
      f = {e.recv(vr + 1, rest, f)};
    else
      f = {e.send(vr - 1, rest, f)};
  }
  return f;
}

// Bruck allgather: in round k, send the first min(2^k, p-2^k) blocks held to v-2^k, receive as
// many from v+2^k (blocks held by v are those of v, v+1, ... in order).
Frontier bruck_allgather(Emit& e, uint32_t vr, const std::vector<uint64_t>& block, Frontier f) {
  uint32_t p = e.p;
  auto held = [&](uint32_t owner, uint64_t cnt) {
    uint64_t s = 0;
    for (uint64_t j = 0; j < cnt; ++j) s += block[(owner + j) % p];
    return s;
  };
  for (uint64_t dist = 1; dist < p; dist <<= 1) {
    uint64_t cnt = std::min<uint64_t>(dist, p - dist);
    uint32_t to = static_cast<uint32_t>((vr + p - dist) % p), from = static_cast<uint32_t>((vr + dist) % p);
    f = e.exchange(to, held(vr, cnt), from, held(from, cnt), f);
  }
  return f;
}

// Recursive halving reduce-scatter among the power-of-two group (MPICH's reduce_scatter and the
// first half of Rabenseifner): new rank i ends up owning block i. Returns the frontier and records
// the windows so an allgather can walk back up.
struct HalvingStep {
  uint32_t partner_newrank;
  uint32_t keep_lo, keep_hi, give_lo, give_hi;  // in blocks
};
std::vector<HalvingStep> halving_steps(uint32_t newrank, uint32_t pof2) {
  std::vector<HalvingStep> steps;
  uint32_t lo = 0, hi = pof2;
  for (uint32_t mask = pof2 >> 1; mask > 0; mask >>= 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    HalvingStep s{newrank ^ mask, 0, 0, 0, 0};
    if ((newrank & mask) == 0)
      s = {newrank ^ mask, lo, mid, mid, hi};
    else
      s = {newrank ^ mask, mid, hi, lo, mid};
    steps.push_back(s);
    lo = s.keep_lo;
    hi = s.keep_hi;
  }
  return steps;
}

// Blocks of the power-of-two group as MPICH distributes them after folding (new rank i < rem
// stands for ranks 2i and 2i+1).
std::vector<uint64_t> folded_blocks(const std::vector<uint64_t>& per_rank, uint32_t rem, uint32_t pof2) {
  std::vector<uint64_t> out(pof2);
  for (uint32_t i = 0; i < pof2; ++i) out[i] = i < rem ? per_rank[2 * i] + per_rank[2 * i + 1] : per_rank[i + rem];
  return out;
}

// ---------------------------------------------------------------- collectives

Frontier bcast(Algorithm a, Emit& e, uint32_t vr, const CollSpec& s, Frontier f) {
  uint32_t p = e.p;
  uint64_t n = s.bytes;
  switch (a) {
    case Algorithm::Binomial:
      return binomial_down(e, vr, f, [&](uint32_t, uint64_t) { return n; });
    case Algorithm::ScatterRingAllgather:
    case Algorithm::ScatterRdAllgather: {
      // MPIR_Bcast_intra_scatter_*_allgather: chunks of ceil(n/p) bytes by virtual rank.
      uint64_t chunk = (n + p - 1) / p;
      std::vector<uint64_t> block(p);
      for (uint32_t i = 0; i < p; ++i) block[i] = std::min<uint64_t>(chunk, n > i * chunk ? n - i * chunk : 0);
      Blocks b(block);
      f = binomial_down(e, vr, f, [&](uint32_t child, uint64_t extent) { return b.sum(child, child + extent); });
      return a == Algorithm::ScatterRingAllgather ? ring_allgather(e, vr, block, f) : rd_allgather(e, vr, block, f);
    }
    case Algorithm::PipelinedRing: {
      uint64_t seg = std::max<uint64_t>(1, s.segment_bytes);
      uint64_t nseg = std::max<uint64_t>(1, (n + seg - 1) / seg);
      Frontier prev_recv = f, prev_send = f;
      for (uint64_t i = 0; i < nseg; ++i) {
        uint64_t bytes = std::min(seg, n - std::min(n, i * seg));
        Frontier have = f;
        if (vr > 0) {
          uint32_t r = e.recv(vr - 1, bytes, prev_recv);
          prev_recv = {r};
          have = {r};
        }
        if (vr + 1 < p) {
          Frontier after = have;
          after.insert(after.end(), prev_send.begin(), prev_send.end());
          std::sort(after.begin(), after.end());
          after.erase(std::unique(after.begin(), after.end()), after.end());
          prev_send = {e.send(vr + 1, bytes, after)};
        }
      }
      Frontier out = vr > 0 ? prev_recv : Frontier{};
      if (vr + 1 < p) out.insert(out.end(), prev_send.begin(), prev_send.end());
      return out.empty() ? f : out;
    }
    default:
      break;
  }
  throw Error(fmt::format("bcast cannot use algorithm '{}'", algorithm_name(a)));
}

Frontier allreduce(Algorithm a, Emit& e, uint32_t me, const CollSpec& s, Frontier f) {
  uint32_t p = e.p, pof2 = pof2_floor(p), rem = p - pof2;
  uint64_t n = s.bytes;
  switch (a) {
    case Algorithm::RecursiveDoubling:
    case Algorithm::Rabenseifner: {
      int64_t nr = fold_newrank(me, rem);
      if (me < 2 * rem) f = {nr < 0 ? e.send(me + 1, n, f) : e.recv(me - 1, n, f)};
      if (nr >= 0) {
        uint32_t newrank = static_cast<uint32_t>(nr);
        if (a == Algorithm::RecursiveDoubling) {
          for (uint32_t mask = 1; mask < pof2; mask <<= 1) {
            uint32_t dst = unfold(newrank ^ mask, rem);
            f = e.exchange(dst, n, dst, n, f);
          }
        } else {
          Blocks b(split_even(n, pof2));
          auto steps = halving_steps(newrank, pof2);
          for (const auto& st : steps) {
            uint32_t dst = unfold(st.partner_newrank, rem);
            f = e.exchange(dst, b.sum(st.give_lo, st.give_hi), dst, b.sum(st.keep_lo, st.keep_hi), f);
          }
          for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
            uint32_t dst = unfold(it->partner_newrank, rem);
            f = e.exchange(dst, b.sum(it->keep_lo, it->keep_hi), dst, b.sum(it->give_lo, it->give_hi), f);
          }
        }
      }
      if (me < 2 * rem) f = {nr < 0 ? e.recv(me + 1, n, f) : e.send(me - 1, n, f)};
      return f;
    }
    case Algorithm::Ring: {
      std::vector<uint64_t> chunk = split_even(n, p);
      uint32_t right = (me + 1) % p, left = (me + p - 1) % p;
      for (uint32_t k = 0; k + 1 < p; ++k) {  // reduce-scatter
        uint32_t sb = (me + p - k) % p, rb = (me + 2 * p - k - 1) % p;
        f = e.exchange(right, chunk[sb], left, chunk[rb], f);
      }
      for (uint32_t k = 0; k + 1 < p; ++k) {  // allgather of the reduced chunks
        uint32_t sb = (me + 1 + p - k) % p, rb = (me + p - k) % p;
        f = e.exchange(right, chunk[sb], left, chunk[rb], f);
      }
      return f;
    }
    case Algorithm::ReduceBcast: {
      f = binomial_up(e, me, f, [&](uint32_t, uint64_t) { return n; });
      return binomial_down(e, me, f, [&](uint32_t, uint64_t) { return n; });
    }
    default:
      break;
  }
  throw Error(fmt::format("allreduce cannot use algorithm '{}'", algorithm_name(a)));
}

Frontier allgather(Algorithm a, Emit& e, uint32_t me, const CollSpec& s, Frontier f) {
  std::vector<uint64_t> block(e.p);
  for (uint32_t i = 0; i < e.p; ++i) block[i] = s.count(i);
  switch (a) {
    case Algorithm::Ring:
      return ring_allgather(e, me, block, f);
    case Algorithm::RecursiveDoubling:
      return rd_allgather(e, me, block, f);
    case Algorithm::Bruck:
      return bruck_allgather(e, me, block, f);
    default:
      break;
  }
  throw Error(fmt::format("{} cannot use algorithm '{}'", coll_kind_name(s.kind), algorithm_name(a)));
}

Frontier alltoall(Algorithm a, Emit& e, uint32_t me, const CollSpec& s, Frontier f) {
  uint32_t p = e.p;
  switch (a) {
    case Algorithm::Pairwise: {
      // MPIR_Alltoall_intra_pairwise: XOR partners for powers of two, shifted ones otherwise.
      for (uint32_t i = 1; i < p; ++i) {
        uint32_t src, dst;
        if (is_pof2(p))
          src = dst = me ^ i;
        else
          src = (me + p - i) % p, dst = (me + i) % p;
        f = e.exchange(dst, s.cell(me, dst), src, s.cell(src, me), f);
      }
      return f;
    }
    case Algorithm::Linear: {
      // MPIR_Alltoall_intra_scattered: every receive and send posted at once, then one Waitall.
      Frontier all;
      for (uint32_t i = 1; i < p; ++i) all.push_back(e.recv((me + i) % p, s.cell((me + i) % p, me), f));
      for (uint32_t i = 1; i < p; ++i) all.push_back(e.send((me + p - i) % p, s.cell(me, (me + p - i) % p), f));
      return all.empty() ? f : all;
    }
    case Algorithm::Bruck: {
      // MPIR_Alltoall_intra_brucks. After the local rotation, position j of rank i holds the block
      // from i to i+j. In round k (dist 2^k) positions with bit k set move to i+dist; a block at
      // position j of rank i then comes from rank i - (j mod dist) and goes to that rank + j.
      auto round_bytes = [&](uint32_t holder, uint64_t dist) {
        uint64_t sum = 0;
        for (uint64_t j = 1; j < p; ++j) {
          if (!(j & dist)) continue;
          uint64_t src = (holder + p - (j & (dist - 1)) % p) % p;
          uint64_t dst = (src + j) % p;
          sum += s.cell(static_cast<uint32_t>(src), static_cast<uint32_t>(dst));
        }
        return sum;
      };
      for (uint64_t dist = 1; dist < p; dist <<= 1) {
        uint32_t to = static_cast<uint32_t>((me + dist) % p), from = static_cast<uint32_t>((me + p - dist) % p);
        f = e.exchange(to, round_bytes(me, dist), from, round_bytes(from, dist), f);
      }
      return f;
    }
    default:
      break;
  }
  throw Error(fmt::format("{} cannot use algorithm '{}'", coll_kind_name(s.kind), algorithm_name(a)));
}

// Gather/Scatter families; counts are per communicator rank, the tree runs in virtual ranks.
Frontier gather_scatter(Algorithm a, Emit& e, uint32_t vr, const CollSpec& s, Frontier f, bool gather) {
  uint32_t p = e.p;
  std::vector<uint64_t> block(p);
  for (uint32_t v = 0; v < p; ++v) block[v] = s.count(e.to_real(v));
  Blocks b(block);
  switch (a) {
    case Algorithm::Binomial: {
      auto bytes = [&](uint32_t v, uint64_t extent) { return b.sum(v, v + extent); };
      return gather ? binomial_up(e, vr, f, bytes) : binomial_down(e, vr, f, bytes);
    }
    case Algorithm::Linear: {
      if (vr != 0) return {gather ? e.send(0, block[vr], f) : e.recv(0, block[vr], f)};
      Frontier all;
      for (uint32_t v = 1; v < p; ++v) all.push_back(gather ? e.recv(v, block[v], f) : e.send(v, block[v], f));
      return all.empty() ? f : all;
    }
    default:
      break;
  }
  throw Error(fmt::format("{} cannot use algorithm '{}'", coll_kind_name(s.kind), algorithm_name(a)));
}

Frontier reduce_scatter(Algorithm a, Emit& e, uint32_t me, const CollSpec& s, Frontier f) {
  uint32_t p = e.p, pof2 = pof2_floor(p), rem = p - pof2;
  std::vector<uint64_t> block(p);
  for (uint32_t i = 0; i < p; ++i) block[i] = s.count(i);
  switch (a) {
    case Algorithm::Pairwise: {
      // MPIR_Reduce_scatter_intra_pairwise: step i sends rank me+i its block, receives ours from me-i.
      for (uint32_t i = 1; i < p; ++i) {
        uint32_t dst = (me + i) % p, src = (me + p - i) % p;
        f = e.exchange(dst, block[dst], src, block[me], f);
      }
      return f;
    }
    case Algorithm::RecursiveHalving: {
      // MPIR_Reduce_scatter_intra_recursive_halving: fold, halve among the power-of-two group,
      // then odd ranks of the fold hand the even neighbour its block.
      uint64_t total = Blocks(block).total();
      int64_t nr = fold_newrank(me, rem);
      if (me < 2 * rem) f = {nr < 0 ? e.send(me + 1, total, f) : e.recv(me - 1, total, f)};
      if (nr >= 0) {
        Blocks fb(folded_blocks(block, rem, pof2));
        for (const auto& st : halving_steps(static_cast<uint32_t>(nr), pof2)) {
          uint32_t dst = unfold(st.partner_newrank, rem);
          f = e.exchange(dst, fb.sum(st.give_lo, st.give_hi), dst, fb.sum(st.keep_lo, st.keep_hi), f);
        }
      }
      if (me < 2 * rem) f = {nr < 0 ? e.recv(me + 1, block[me], f) : e.send(me - 1, block[me - 1], f)};
      return f;
    }
    default:
      break;
  }
  throw Error(fmt::format("{} cannot use algorithm '{}'", coll_kind_name(s.kind), algorithm_name(a)));
}

Frontier scan(Algorithm a, Emit& e, uint32_t me, const CollSpec& s, Frontier f) {
  if (a != Algorithm::RecursiveDoubling)
    throw Error(fmt::format("{} cannot use algorithm '{}'", coll_kind_name(s.kind), algorithm_name(a)));
  // MPIR_Scan_intra_recursive_doubling (and Exscan's): exchange partial results with me ^ mask.
  for (uint64_t mask = 1; mask < e.p; mask <<= 1) {
    uint64_t dst = me ^ mask;
    if (dst < e.p) f = e.exchange(static_cast<uint32_t>(dst), s.bytes, static_cast<uint32_t>(dst), s.bytes, f);
  }
  return f;
}

// MPIR_Ineighbor_*_allcomm_sched_linear (the blocking calls run the same schedule and wait): a
// send to every destination and a receive from every source, all at once.
void neighbor(Emit& e, uint32_t me, const CollSpec& s) {
  if (s.neighbor_sends.size() != e.p || s.neighbor_recvs.size() != e.p)
    throw Error(
        fmt::format("{}: neighbor lists for {} of {} ranks", coll_kind_name(s.kind), s.neighbor_sends.size(), e.p));
  for (const NeighborOp& op : s.neighbor_sends[me]) e.send(op.peer, op.bytes, {});
  for (const NeighborOp& op : s.neighbor_recvs[me]) e.recv(op.peer, op.bytes, {});
}

}  // namespace

void build_schedule(Algorithm algo, const CollSpec& spec, uint32_t me, RankSchedule& out) {
  out.clear();
  uint32_t p = spec.size;
  if (p == 0 || me >= p) throw Error(fmt::format("collective member {} outside a communicator of {}", me, p));
  if (is_rooted(spec.kind) && spec.root >= p)
    throw Error(fmt::format("{} root {} outside a communicator of {}", coll_kind_name(spec.kind), spec.root, p));
  if (!spec.counts.empty() && spec.counts.size() != p)
    throw Error(fmt::format("{}: {} counts for {} ranks", coll_kind_name(spec.kind), spec.counts.size(), p));
  if (!spec.matrix.empty() && spec.matrix.size() != uint64_t{p} * p)
    throw Error(fmt::format("{}: count matrix is not {}x{}", coll_kind_name(spec.kind), p, p));
  if (algo == Algorithm::Auto) algo = choose_default(spec);
  auto allowed = algorithms_for(spec.kind);
  if (std::find(allowed.begin(), allowed.end(), algo) == allowed.end())
    throw Error(fmt::format("{} cannot use algorithm '{}'", coll_kind_name(spec.kind), algorithm_name(algo)));
  if (p == 1) return;  // nothing to exchange

  uint32_t shift = is_rooted(spec.kind) ? spec.root : 0;
  Emit e{out, p, shift};
  uint32_t v = (me + p - shift) % p;
  switch (spec.kind) {
    case CollKind::Barrier:
      dissemination_barrier(e, v, {});
      break;
    case CollKind::Bcast:
      bcast(algo, e, v, spec, {});
      break;
    case CollKind::Reduce:
      binomial_up(e, v, {}, [&](uint32_t, uint64_t) { return spec.bytes; });
      break;
    case CollKind::Allreduce:
      allreduce(algo, e, v, spec, {});
      break;
    case CollKind::Gather:
    case CollKind::Gatherv:
      gather_scatter(algo, e, v, spec, {}, true);
      break;
    case CollKind::Scatter:
    case CollKind::Scatterv:
      gather_scatter(algo, e, v, spec, {}, false);
      break;
    case CollKind::Allgather:
    case CollKind::Allgatherv:
      allgather(algo, e, v, spec, {});
      break;
    case CollKind::Alltoall:
    case CollKind::Alltoallv:
    case CollKind::Alltoallw:
      alltoall(algo, e, v, spec, {});
      break;
    case CollKind::ReduceScatter:
    case CollKind::ReduceScatterBlock:
      reduce_scatter(algo, e, v, spec, {});
      break;
    case CollKind::Scan:
    case CollKind::Exscan:
      scan(algo, e, v, spec, {});
      break;
    case CollKind::NeighborAllgather:
    case CollKind::NeighborAllgatherv:
    case CollKind::NeighborAlltoall:
    case CollKind::NeighborAlltoallv:
    case CollKind::NeighborAlltoallw:
      neighbor(e, me, spec);
      break;
    case CollKind::Count_:
      break;
  }
}

}  // namespace llamp::schedgen
