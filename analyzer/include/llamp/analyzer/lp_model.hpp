#pragma once
// The LP route (paper 000, Sec. II-C, Algorithm 1, Appendix B): an execution graph becomes a linear
// program whose optimum is the runtime T under the LogGPS model, with the network latency L and the
// per-byte gap G as decision variables `l` and `g` bounded below by their values. The LP is
// solved by COIN-OR Clp (lp_solver.hpp) or exported for other solvers (lp_export.hpp).
//
// Model (the same one docs/analyzer.md states for the native engine, term by term; all in ns):
//   start(v) = max over predecessors p of  end(p) (Requires) | start(p) (IRequires);  0 without any
//   Calc:            end = start + cost
//   B(s) = (s-1)·G for s >= 1, 0 for s = 0;  o_s = o_send + (s-1)·O,  o_r = o_recv + (s-1)·O
//   (+ o_rndv for the receive of a rendezvous message: its handshake)
//   eager send (s <= S):   end = start + o_s;   arrival = start + o_s + L + B(s)
//   receive of an eager message:  end = max(start(recv), arrival) + o_r
//   rendezvous (s > S, Appendix B, RDMA-read): the handshake
//     h = max(start(send) + o_s + L, start(recv))   (the request-to-send meets a posted receive)
//     end(recv) = h + o_r + 2L + B(s)              (read request, data comes back)
//     end(send) = end(recv) + L + o_s              (the sender learns the read finished)
//   T = max over all vertices of end(v).
// Algorithm 1 in one topological pass: every time above is an affine expression
//   var + c + a·l + b·g  (var: one LP column or none),
// and a new column y with rows y >= input_i is created only where a max() has several inputs.
// The objective column t gets t >= end(v) for every vertex no Requires edge leaves.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "llamp/graph.hpp"
#include "llamp/analyzer/network.hpp"

namespace llamp::analyzer::lp {

// The network model is the native engine's (network.hpp): a message on route r has latency
// L_const[r] + L_coef[r]·l and per-byte gap G_const[r] + G_coef[r]·g, so l and g are the sweep
// variables xL and xG (homogeneous LogGPS: l = L, g = G). Their lower bounds are the given base
// values; o_send, o_recv, O and S enter as constants.
struct LpBounds {
  double xL = 0;  // lower bound of l
  double xG = 0;  // lower bound of g
};

// What an LP column stands for (for names in exported files and for reading vertex times back).
enum class ColumnRole : uint8_t { Latency, Gap, Runtime, Start, End, Handshake };

// A row reads  sum(value_k * x[index_k]) >= lower  (all rows are >= rows; there are no upper
// bounds except the runtime cap the tolerance LP adds).
struct LpProblem {
  std::vector<double> col_lower, col_upper, objective;
  std::vector<ColumnRole> col_role;
  std::vector<graph::VertexId> col_vertex;  // kNoVertex for l, g, t
  std::vector<int64_t> row_start{0};        // CSR by rows; size num_rows + 1
  std::vector<int> row_index;
  std::vector<double> row_value;
  std::vector<double> row_lower;
  int col_l = -1, col_g = -1, col_t = -1;
  LpBounds base;
  std::string source;  // the graph file, for messages

  int num_cols() const { return static_cast<int>(col_lower.size()); }
  int num_rows() const { return static_cast<int>(row_lower.size()); }
  int64_t num_nonzeros() const { return static_cast<int64_t>(row_index.size()); }
};

// Algorithm 1. Throws graph::CycleError when the dependencies (with rendezvous ones for the given
// S) form a cycle, llamp::Error when the LP would exceed Clp's 32-bit column/row indices.
LpProblem build_lp(const graph::Graph& g, const NetworkModel& model, const LpBounds& base);
// Homogeneous LogGPS: l >= L, g >= G.
LpProblem build_lp(const graph::Graph& g, const LogGP& params);

// "y_r1_v5_end": the column's name in exported files (CPLEX LP names: letters, digits, _).
std::string column_name(const graph::Graph& g, const LpProblem& lp, int col);

}  // namespace llamp::analyzer::lp
