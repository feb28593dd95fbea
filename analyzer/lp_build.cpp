// Algorithm 1 of paper 000: execution graph → LP in one topological pass (model in lp_model.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "llamp/analyzer/lp_model.hpp"
#include "llamp/error.hpp"

namespace llamp::analyzer::lp {
namespace {

using graph::Graph;
using graph::VertexId;
using graph::VertexKind;

// var + c + a·l + b·g, var = -1 for "no column". Times of the graph are always of this form.
struct Expr {
  int var = -1;
  double c = 0;
  double a = 0;  // coefficient of l: messages on the path
  double b = 0;  // coefficient of g: bytes (minus one per message) on the path
};

Expr plus(Expr e, double c) {
  e.c += c;
  return e;
}
// e + a term without a column (latency, bytes).
Expr add(Expr e, const Expr& term) {
  e.c += term.c;
  e.a += term.a;
  e.b += term.b;
  return e;
}

class Builder {
 public:
  Builder(const Graph& g, const NetworkModel& m, const LpBounds& base) : g_(g), m_(m), p_(m.loggp) {
    if (!m.homogeneous() && m.node_of_rank.size() != g.num_ranks)
      throw Error(fmt::format("{}: the rank → node map has {} ranks, the graph {}", g.source, m.node_of_rank.size(),
                              g.num_ranks));
    lp_.base = base;
    lp_.source = g.source;
    lp_.col_l = add_column(ColumnRole::Latency, graph::kNoVertex, base.xL, 0);
    lp_.col_g = add_column(ColumnRole::Gap, graph::kNoVertex, base.xG, 0);
    lp_.col_t = add_column(ColumnRole::Runtime, graph::kNoVertex, 0, 1);
  }

  LpProblem run() {
    const uint64_t n = g_.num_vertices();
    if (n > static_cast<uint64_t>(std::numeric_limits<int>::max() / 4))
      throw Error(fmt::format("{}: {} vertices is more than an LP for Clp can index", g_.source, n));
    // Which times are read later: the start of a vertex by IRequires successors, the end of a
    // vertex by Requires successors (vertices without any bound the runtime t).
    std::vector<uint8_t> start_read(n, 0), end_read(n, 0);
    for (VertexId v = 0; v < n; ++v)
      for (uint32_t entry : g_.preds(v))
        (Graph::pred_is_irequires(entry) ? start_read : end_read)[Graph::pred_vertex(entry)] = 1;
    start_.assign(n, Expr{});
    end_.assign(n, Expr{});
    const std::vector<VertexId> order = graph::topological_order(g_, p_.S_bytes);
    std::vector<Expr> inputs;
    for (VertexId v : order) {
      collect_pred_inputs(v, inputs);
      switch (g_.kind[v]) {
        case VertexKind::Calc:
          start_[v] = max_of(inputs, ColumnRole::Start, v);
          end_[v] = plus(start_[v], static_cast<double>(g_.value[v]));
          break;
        case VertexKind::Send:
          start_[v] = max_of(inputs, ColumnRole::Start, v);
          // A rendezvous send ends when its receive is processed (topological order puts the
          // receive before every successor of the send).
          if (!rendezvous(v)) end_[v] = plus(start_[v], o_send(v));
          break;
        case VertexKind::Recv:
          receive(v, inputs, start_read[v] != 0);
          break;
      }
    }
    inputs.clear();
    for (VertexId v = 0; v < n; ++v)
      if (!end_read[v]) inputs.push_back(end_[v]);
    if (inputs.empty()) inputs.push_back(Expr{});
    for (const Expr& e : inputs) add_row_geq(lp_.col_t, e);
    return std::move(lp_);
  }

 private:
  bool rendezvous(VertexId send) const { return g_.value[send] > p_.S_bytes; }

  // s-1 for a message of s bytes, 0 for a 0-byte message (it has no bandwidth term).
  double gap_bytes(VertexId send) const {
    const uint64_t s = g_.value[send];
    return s == 0 ? 0.0 : static_cast<double>(s - 1);
  }
  double o_send(VertexId send) const { return p_.o_send_ns + gap_bytes(send) * p_.O_ns_per_byte; }
  double o_recv(VertexId send) const {
    return p_.o_recv_ns + gap_bytes(send) * p_.O_ns_per_byte + (rendezvous(send) ? p_.o_rndv_ns : 0.0);
  }

  // Latency L_const + L_coef·l of the message `send` → its receive.
  Expr latency(VertexId send) const {
    const uint32_t route = route_of(send);
    return Expr{-1, m_.L_const[route], m_.L_coef[route], 0};
  }
  // B(s) = (s-1)·(G_const + G_coef·g).
  Expr bytes_term(VertexId send) const {
    const uint32_t route = route_of(send);
    const double sb = gap_bytes(send);
    return Expr{-1, sb * m_.G_const[route], 0, sb * m_.G_coef[route]};
  }
  uint32_t route_of(VertexId send) const {
    if (m_.homogeneous()) return 0;
    return m_.route_of(g_.rank_of(send), g_.rank_of(g_.peer[send]));
  }

  void collect_pred_inputs(VertexId v, std::vector<Expr>& inputs) const {
    inputs.clear();
    for (uint32_t entry : g_.preds(v)) {
      const VertexId p = Graph::pred_vertex(entry);
      inputs.push_back(Graph::pred_is_irequires(entry) ? start_[p] : end_[p]);
    }
  }

  void receive(VertexId r, std::vector<Expr>& inputs, bool start_is_read) {
    const VertexId s = g_.peer[r];
    // With several predecessors, start(r) needs its own column only when some IRequires
    // successor reads it; otherwise the predecessors feed the receive's max() directly.
    if (start_is_read || inputs.size() <= 1) {
      start_[r] = max_of(inputs, ColumnRole::Start, r);
      inputs.assign(1, start_[r]);
    } else {
      start_[r] = Expr{};  // never read
    }
    const Expr lat = latency(s), bytes = bytes_term(s);
    if (!rendezvous(s)) {
      inputs.push_back(add(add(plus(start_[s], o_send(s)), lat), bytes));
      end_[r] = plus(max_of(inputs, ColumnRole::End, r), o_recv(s));
    } else {
      inputs.push_back(add(plus(start_[s], o_send(s)), lat));
      const Expr h = max_of(inputs, ColumnRole::Handshake, r);
      end_[r] = add(add(add(plus(h, o_recv(s)), lat), lat), bytes);
      end_[s] = add(plus(end_[r], o_send(s)), lat);
    }
  }

  // max() of the inputs: the input itself if there is one, else a new column y with y >= each.
  Expr max_of(std::vector<Expr>& inputs, ColumnRole role, VertexId v) {
    if (inputs.empty()) return Expr{};
    // Of inputs with the same column and coefficients only the largest constant can bind.
    std::sort(inputs.begin(), inputs.end(), [](const Expr& x, const Expr& y) {
      if (x.var != y.var) return x.var < y.var;
      if (x.a != y.a) return x.a < y.a;
      if (x.b != y.b) return x.b < y.b;
      return x.c > y.c;
    });
    auto same_shape = [](const Expr& x, const Expr& y) { return x.var == y.var && x.a == y.a && x.b == y.b; };
    inputs.erase(std::unique(inputs.begin(), inputs.end(), same_shape), inputs.end());
    if (inputs.size() == 1) return inputs[0];
    const int y = add_column(role, v, 0, 0);
    for (const Expr& e : inputs) add_row_geq(y, e);
    return Expr{y, 0, 0, 0};
  }

  int add_column(ColumnRole role, VertexId v, double lower, double cost) {
    if (lp_.col_lower.size() >= static_cast<size_t>(std::numeric_limits<int>::max()))
      throw Error(fmt::format("{}: the LP has more columns than Clp can index", g_.source));
    lp_.col_lower.push_back(lower);
    lp_.col_upper.push_back(std::numeric_limits<double>::infinity());
    lp_.objective.push_back(cost);
    lp_.col_role.push_back(role);
    lp_.col_vertex.push_back(v);
    return static_cast<int>(lp_.col_lower.size() - 1);
  }

  // y >= e, written as  y - e.var - a·l - b·g >= c.
  void add_row_geq(int y, const Expr& e) {
    if (lp_.row_lower.size() >= static_cast<size_t>(std::numeric_limits<int>::max()) ||
        lp_.row_index.size() + 4 >= static_cast<size_t>(std::numeric_limits<int>::max()))
      throw Error(fmt::format("{}: the LP has more rows than Clp can index", g_.source));
    lp_.row_index.push_back(y);
    lp_.row_value.push_back(1.0);
    if (e.var >= 0) {
      lp_.row_index.push_back(e.var);
      lp_.row_value.push_back(-1.0);
    }
    if (e.a != 0) {
      lp_.row_index.push_back(lp_.col_l);
      lp_.row_value.push_back(-e.a);
    }
    if (e.b != 0) {
      lp_.row_index.push_back(lp_.col_g);
      lp_.row_value.push_back(-e.b);
    }
    lp_.row_lower.push_back(e.c);
    lp_.row_start.push_back(static_cast<int64_t>(lp_.row_index.size()));
  }

  const Graph& g_;
  const NetworkModel& m_;
  const LogGP& p_;
  LpProblem lp_;
  std::vector<Expr> start_, end_;
};

}  // namespace

LpProblem build_lp(const Graph& g, const NetworkModel& model, const LpBounds& base) {
  return Builder(g, model, base).run();
}

LpProblem build_lp(const Graph& g, const LogGP& params) {
  return build_lp(g, homogeneous_model(params), LpBounds{params.L_ns, params.G_ns_per_byte});
}

std::string column_name(const Graph& g, const LpProblem& lp, int col) {
  const ColumnRole role = lp.col_role.at(col);
  switch (role) {
    case ColumnRole::Latency:
      return "l";
    case ColumnRole::Gap:
      return "g";
    case ColumnRole::Runtime:
      return "t";
    default:
      break;
  }
  const VertexId v = lp.col_vertex[col];
  const char* what = role == ColumnRole::Start ? "start" : role == ColumnRole::End ? "end" : "hs";
  return fmt::format("y_r{}_v{}_{}", g.rank_of(v), g.local_id(v), what);
}

}  // namespace llamp::analyzer::lp
