#include "llamp/analyzer/noise.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "llamp/error.hpp"

namespace llamp::analyzer {

NoiseTimeline::NoiseTimeline(const std::vector<NoiseRecording>& recordings, uint32_t graph_ranks) {
  if (recordings.empty()) throw Error("noise: no recording");
  size_t lanes = 0;
  for (const NoiseRecording& r : recordings) lanes = std::max(lanes, r.ranks.size());
  lanes = std::min<size_t>(lanes, std::max<uint32_t>(graph_ranks, 1));  // lanes no rank uses are not kept
  begin_.resize(lanes);
  end_.resize(lanes);
  double offset = 0;
  for (const NoiseRecording& r : recordings) {
    for (size_t l = 0; l < lanes; ++l)
      for (auto [start, length] : r.ranks[l % r.ranks.size()].detours) {
        begin_[l].push_back(offset + static_cast<double>(start));
        end_[l].push_back(offset + static_cast<double>(start + length));
      }
    offset += static_cast<double>(r.duration_ns);
  }
  cycle_ = offset;
  // Resume cost per lane: the mean over the recordings that timed it, at every spin any of them used.
  resume_.resize(lanes);
  following_.resize(lanes);
  following_hot_.assign(lanes, 0.0);
  for (size_t l = 0; l < lanes; ++l) {
    std::vector<const ResumeCost*> costs;
    std::vector<double> spins;
    for (const NoiseRecording& r : recordings)
      if (const auto& c = r.ranks[l % r.ranks.size()].resume) {
        costs.push_back(&*c);
        for (auto [spin, mean] : c->after_ns) spins.push_back(static_cast<double>(spin));
      }
    std::sort(spins.begin(), spins.end());
    spins.erase(std::unique(spins.begin(), spins.end()), spins.end());
    std::vector<const ResumeCost*> following;
    for (const ResumeCost* c : costs)
      if (!c->following_ns.empty()) following.push_back(c);
    for (const ResumeCost* c : following) following_hot_[l] += c->following_hot_ns() / following.size();
    for (double w : spins) {
      double sum = 0;
      for (const ResumeCost* c : costs) sum += c->extra_ns(w);
      resume_[l].emplace_back(w, sum / static_cast<double>(costs.size()));
      if (following.empty()) continue;
      double slowdown = 0;
      for (const ResumeCost* c : following) slowdown += c->following_slowdown(w);
      following_[l].emplace_back(w, slowdown / static_cast<double>(following.size()));
    }
    has_resume_ = has_resume_ || !costs.empty();
    has_following_ = has_following_ || !following.empty();
  }
  size_t most = 1;
  for (const auto& b : begin_) most = std::max(most, b.size());
  const size_t buckets = std::min<size_t>(2 * most + 1, size_t{1} << 24);
  bucket_ns_ = cycle_ / static_cast<double>(buckets);
  first_.resize(lanes);
  for (size_t l = 0; l < lanes; ++l) {
    first_[l].resize(buckets + 1);
    size_t i = 0;
    for (size_t k = 0; k <= buckets; ++k) {
      const double start = static_cast<double>(k) * bucket_ns_;
      while (i < end_[l].size() && end_[l][i] <= start) ++i;
      first_[l][k] = static_cast<uint32_t>(i);
    }
  }
}

double NoiseTimeline::notice(uint32_t rank, double t, double since, double phase) const {
  const uint32_t l = lane_of(rank);
  const std::vector<double>& e = end_[l];
  const double u = std::fmod(t + phase, cycle_);
  const auto bucket = std::min(static_cast<size_t>(u / bucket_ns_), first_[l].size() - 1);
  size_t i = first_[l][bucket];  // the only candidate is the first detour ending after u
  while (i < e.size() && e[i] <= u) ++i;
  if (i == e.size() || begin_[l][i] > u) return t;  // no detour at t
  // It began u − begin before t; it counts if the rank was waiting then, i.e. not before `since`.
  return u - begin_[l][i] <= t - since ? t + (e[i] - u) : t;
}

double NoiseTimeline::resume_extra(uint32_t lane, double w, double work) const {
  if (resume_[lane].empty() || w <= 0) return 0.0;
  double extra = polyline_at(resume_[lane], w);
  if (!following_[lane].empty() && work > 0)
    extra += polyline_at(following_[lane], w) * std::min(work, following_hot_[lane]);
  return extra;
}

double NoiseTimeline::fraction(uint32_t lane) const {
  double total = 0;
  for (size_t i = 0; i < begin_[lane].size(); ++i) total += end_[lane][i] - begin_[lane][i];
  return cycle_ > 0 ? total / cycle_ : 0.0;
}

std::vector<uint8_t> polled_receives(const graph::Graph& g) {
  std::vector<uint8_t> polled;
  if (g.poll_lags.empty()) return polled;
  polled.assign(g.num_vertices(), 0);
  for (graph::VertexId lag : g.poll_lags)
    for (uint32_t entry : g.preds(lag)) {
      if (graph::Graph::pred_is_irequires(entry)) continue;
      const graph::VertexId u = graph::Graph::pred_vertex(entry);
      if (g.kind[u] == graph::VertexKind::Recv) polled[u] = 1;
    }
  return polled;
}

std::vector<float> following_work(const graph::Graph& g) {
  std::vector<uint8_t> lag(g.num_vertices(), 0);
  for (graph::VertexId v : g.poll_lags) lag[v] = 1;
  std::vector<float> work(g.num_vertices(), 0.0f);
  for (uint32_t r = 0; r < g.num_ranks; ++r) {
    // Backwards through the rank's vertices: the work after v is v+1's own (if a calc) plus what
    // follows v+1, up to the first receive.
    double after = 0;
    for (uint64_t v = g.rank_begin[r + 1]; v-- > g.rank_begin[r];) {
      work[v] = static_cast<float>(after);
      if (g.kind[v] == graph::VertexKind::Recv)
        after = 0;
      else if (g.kind[v] == graph::VertexKind::Calc && !lag[v])
        after += static_cast<double>(g.value[v]);
    }
  }
  return work;
}

NoiseTerms parse_noise_terms(const std::string& list) {
  if (list == "all") return {};
  NoiseTerms t{false, false, false};
  size_t begin = 0;
  while (begin <= list.size()) {
    const size_t end = std::min(list.find(',', begin), list.size());
    const std::string item = list.substr(begin, end - begin);
    if (item == "detours")
      t.detours = true;
    else if (item == "resume")
      t.resume = true;
    else if (item == "following")
      t.following = true;
    else
      throw Error(fmt::format("--noise-terms {}: '{}' is not a term (detours, resume, following or all)", list, item));
    begin = end + 1;
  }
  if (t.following && !t.resume)
    throw Error(fmt::format("--noise-terms {}: 'following' is part of the resume cost; add 'resume'", list));
  return t;
}

std::vector<std::string> noise_term_names(const NoiseTerms& terms) {
  std::vector<std::string> names;
  if (terms.detours) names.push_back("detours");
  if (terms.resume) names.push_back("resume");
  if (terms.following) names.push_back("following");
  return names;
}

void keep_noise_terms(std::vector<NoiseRecording>& recordings, const NoiseTerms& terms) {
  for (NoiseRecording& r : recordings)
    for (RankNoise& rank : r.ranks) {
      if (!terms.detours) rank.detours.clear();
      if (!terms.resume) rank.resume.reset();
      if (!terms.following && rank.resume) rank.resume->following_ns.clear();
    }
}

std::vector<NoisePoint> predict_with_noise(Engine& e, const NoiseTimeline& timeline, const std::vector<double>& xs,
                                           const NoiseOptions& options, const std::function<double(double)>& model_at) {
  if (options.samples == 0) throw Error("--noise-samples must be at least 1");
  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<double> uniform(0.0, timeline.cycle_ns());
  std::vector<double> phases(options.samples);
  for (double& p : phases) p = uniform(rng);

  unsigned threads = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = std::min<unsigned>(threads, options.samples);
  std::vector<Engine> twins;
  for (unsigned i = 1; i < threads; ++i) twins.push_back(e.twin());

  const std::vector<uint8_t> polled = polled_receives(e.graph());
  // With a resume cost: each wait's length at the traced latency, without noise (the traced
  // computation holds the resume cost of those waits already; NoiseShift::notice).
  std::vector<float> base_waits;
  const std::vector<float> work_after = timeline.has_following() ? following_work(e.graph()) : std::vector<float>();
  if (timeline.has_resume()) {
    base_waits.assign(e.graph().num_vertices(), 0.0f);
    model_at(e.base_xL());
    NoiseShift base{&timeline, 0, polled.empty() ? nullptr : &polled};
    base.waits_out = base_waits.data();
    e.evaluate_noisy(e.base_xL(), e.base_xG(), base);
  }
  std::vector<NoisePoint> points;
  std::vector<double> T(options.samples);
  for (double x : xs) {
    NoisePoint p;
    p.x = x;
    p.T_model = model_at(x);
    auto sample = [&](Engine& engine, unsigned first) {
      for (unsigned k = first; k < options.samples; k += threads)
        T[k] = engine.evaluate_noisy(x, engine.base_xG(),
                                     NoiseShift{&timeline, phases[k], polled.empty() ? nullptr : &polled,
                                                base_waits.empty() ? nullptr : base_waits.data(), nullptr,
                                                work_after.empty() ? nullptr : work_after.data()});
    };
    std::vector<std::thread> workers;
    for (unsigned i = 1; i < threads; ++i) workers.emplace_back(sample, std::ref(twins[i - 1]), i);
    sample(e, 0);
    for (auto& w : workers) w.join();
    double sum = 0, squares = 0;
    p.T_min = p.T_max = T[0];
    for (double t : T) {
      sum += t;
      p.T_min = std::min(p.T_min, t);
      p.T_max = std::max(p.T_max, t);
    }
    p.T_mean = sum / options.samples;
    for (double t : T) squares += (t - p.T_mean) * (t - p.T_mean);
    p.T_std = options.samples > 1 ? std::sqrt(squares / (options.samples - 1)) : 0.0;
    std::vector<double> sorted = T;
    std::sort(sorted.begin(), sorted.end());
    const size_t n = sorted.size();
    p.T_median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    points.push_back(p);
  }
  return points;
}

nlohmann::json noise_json(const std::vector<NoisePoint>& points, const NoiseTimeline& timeline,
                          const NoiseOptions& options) {
  nlohmann::json lanes = nlohmann::json::array();
  for (uint32_t l = 0; l < timeline.lanes(); ++l) {
    nlohmann::json lane = {{"lane", l}, {"fraction", timeline.fraction(l)}};
    if (!timeline.resume_points(l).empty()) {
      nlohmann::json resume = nlohmann::json::array();
      for (auto [w, extra] : timeline.resume_points(l)) resume.push_back({w, extra});
      lane["resume_extra_ns"] = resume;
    }
    if (!timeline.following_points(l).empty()) {
      nlohmann::json slowdown = nlohmann::json::array();
      for (auto [w, s] : timeline.following_points(l)) slowdown.push_back({w, s});
      lane["resume_following"] = {{"hot_ns", timeline.following_hot_ns(l)}, {"slowdown", slowdown}};
    }
    lanes.push_back(std::move(lane));
  }
  nlohmann::json list = nlohmann::json::array();
  for (const NoisePoint& p : points)
    list.push_back({{"L_ns", p.x},
                    {"T_model_ns", p.T_model},
                    {"T_noise_mean_ns", p.T_mean},
                    {"T_noise_median_ns", p.T_median},
                    {"T_noise_std_ns", p.T_std},
                    {"T_noise_min_ns", p.T_min},
                    {"T_noise_max_ns", p.T_max},
                    {"noise_ns", p.T_median - p.T_model},
                    {"noise_mean_ns", p.T_mean - p.T_model}});
  return {{"samples", options.samples},
          {"seed", options.seed},
          {"cycle_ns", timeline.cycle_ns()},
          {"lanes", lanes},
          {"points", list}};
}

}  // namespace llamp::analyzer
