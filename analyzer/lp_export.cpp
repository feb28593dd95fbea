// Export of the LP route's model in CPLEX LP and MPS formats through Clp's writers.
#include "llamp/analyzer/lp_export.hpp"

#include <ClpSimplex.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <fstream>

#include "llamp/analyzer/lp_solver.hpp"
#include "llamp/error.hpp"

namespace llamp::analyzer::lp {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

LpFileFormat lp_format_for_path(const std::string& path) {
  if (ends_with(path, ".lp")) return LpFileFormat::CplexLp;
  if (ends_with(path, ".mps")) return LpFileFormat::Mps;
  throw Error(fmt::format("{}: unknown LP file type (use a name ending in .lp or .mps)", path));
}

void write_lp_file(const graph::Graph& g, const LpProblem& lp, const std::string& path) {
  const LpFileFormat format = lp_format_for_path(path);
  {
    // Clp's writers report failures only on stderr; check that the path is writable first.
    std::ofstream probe(path, std::ios::trunc);
    if (!probe) throw Error(fmt::format("{}: cannot open for writing", path));
  }
  std::unique_ptr<ClpSimplex> model = make_clp_model(lp);
  std::vector<std::string> col_names(lp.num_cols()), row_names(lp.num_rows());
  for (int c = 0; c < lp.num_cols(); ++c) col_names[c] = column_name(g, lp, c);
  for (int r = 0; r < lp.num_rows(); ++r) row_names[r] = fmt::format("c{}", r);
  model->copyNames(row_names, col_names);
  model->setStrParam(ClpProbName, "llamp");
  if (format == LpFileFormat::CplexLp) {
    // No extension appended (the path has one); 1e-12: only exact integers are written as such;
    // 9 decimals keep ns values exact to the ps.
    model->writeLp(path.c_str(), "", 1e-12, 10, 9, 1.0, true);
  } else {
    // formatType 1: numbers with extra accuracy (still standard MPS every solver reads).
    if (model->writeMps(path.c_str(), 1, 2, 1.0) != 0) throw Error(fmt::format("{}: writing MPS failed", path));
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  bool empty = true;
  if (f) {
    empty = std::fgetc(f) == EOF;
    std::fclose(f);
  }
  if (empty) throw Error(fmt::format("{}: Clp wrote nothing", path));
}

}  // namespace llamp::analyzer::lp
