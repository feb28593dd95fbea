// GOAL text reader. A hand-written tokenizer + recursive-descent parser: every token carries its
// line, every failure throws "file:line: ...", and nothing indexes without a bounds check, so any
// byte sequence either parses or produces an error.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "llamp/graph_io.hpp"

namespace llamp::graph {
namespace {

enum class Tok { Word, LBrace, RBrace, Colon, End };

struct Token {
  Tok type = Tok::End;
  std::string_view text;
  uint32_t line = 0;
};

class Lexer {
 public:
  Lexer(std::string_view text, const std::string& name) : s_(text), name_(name) {}

  [[noreturn]] void fail(uint32_t line, const std::string& what) const {
    throw Error(fmt::format("{}:{}: {}", name_, line, what));
  }

  // Whether `line` carried the polling-lag marker (GraphSink::poll_lag); each marker counts once.
  bool take_poll_lag_marker(uint32_t line) { return poll_lag_lines_.erase(line) > 0; }

  Token next() {
    skip_space_and_comments();
    Token t;
    t.line = line_;
    if (pos_ >= s_.size()) return t;
    char c = s_[pos_];
    if (c == '{' || c == '}' || c == ':') {
      t.type = c == '{' ? Tok::LBrace : c == '}' ? Tok::RBrace : Tok::Colon;
      t.text = s_.substr(pos_++, 1);
      return t;
    }
    size_t start = pos_;
    while (pos_ < s_.size() && is_word_char(s_[pos_])) ++pos_;
    if (pos_ == start) {
      auto byte = static_cast<unsigned char>(c);
      fail(line_, byte >= 0x20 && byte < 0x7f ? fmt::format("unexpected character '{}'", c)
                                              : fmt::format("unexpected byte 0x{:02x}", byte));
    }
    t.type = Tok::Word;
    t.text = s_.substr(start, pos_ - start);
    return t;
  }

 private:
  static bool is_word_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.' || c == '+';
  }
  void skip_space_and_comments() {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '\n') {
        ++line_;
        ++pos_;
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
        ++pos_;
      } else if (c == '/' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '/') {
        if (s_.substr(pos_).starts_with(kGoalPollLagMarker)) poll_lag_lines_.insert(line_);
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else if (c == '/' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '*') {
        uint32_t open_line = line_;
        pos_ += 2;
        while (pos_ + 1 < s_.size() && !(s_[pos_] == '*' && s_[pos_ + 1] == '/')) {
          if (s_[pos_] == '\n') ++line_;
          ++pos_;
        }
        if (pos_ + 1 >= s_.size()) fail(open_line, "comment opened with /* is never closed");
        pos_ += 2;
      } else {
        return;
      }
    }
  }

  std::string_view s_;
  const std::string& name_;
  size_t pos_ = 0;
  uint32_t line_ = 1;
  std::unordered_set<uint32_t> poll_lag_lines_;  // lines with a kGoalPollLagMarker comment
};

class Parser {
 public:
  Parser(std::string_view text, const std::string& name) : lex_(text, name), name_(name) {
    advance();
    advance();
  }

  Graph parse() {
    builder_.set_source(name_);
    expect_keyword("num_ranks");
    Token n = take_word("the number of ranks");
    uint64_t ranks = to_uint(n, "number of ranks", kMaxRanks);
    if (ranks == 0) lex_.fail(n.line, "num_ranks must be at least 1");
    num_ranks_ = static_cast<uint32_t>(ranks);
    builder_.begin(num_ranks_);
    std::vector<bool> seen(num_ranks_, false);
    while (cur_.type != Tok::End) {
      uint32_t rank_line = cur_.line;
      expect_keyword("rank");
      Token r = take_word("a rank number");
      uint64_t rank = to_uint(r, "rank", num_ranks_ - 1ull);
      if (seen[rank]) lex_.fail(r.line, fmt::format("rank {} appears twice", rank));
      seen[rank] = true;
      if (cur_.type != Tok::LBrace) lex_.fail(cur_.line, fmt::format("expected '{{' after 'rank {}'", rank));
      advance();
      parse_rank_body(static_cast<uint32_t>(rank), rank_line);
    }
    try {
      builder_.finish();
      return builder_.take();
    } catch (const Error& e) {
      throw Error(fmt::format("{} (while matching sends and receives)", e.what()));
    }
  }

 private:
  void advance() {
    cur_ = next_;
    next_ = lex_.next();
  }

  [[noreturn]] void unexpected(const Token& t, const std::string& wanted) const {
    if (t.type == Tok::End) lex_.fail(t.line, fmt::format("unexpected end of file, expected {}", wanted));
    lex_.fail(t.line, fmt::format("unexpected '{}', expected {}", t.text, wanted));
  }

  void expect_keyword(std::string_view kw) {
    if (cur_.type != Tok::Word || cur_.text != kw) unexpected(cur_, fmt::format("'{}'", kw));
    advance();
  }

  Token take_word(const std::string& wanted) {
    if (cur_.type != Tok::Word) unexpected(cur_, wanted);
    Token t = cur_;
    advance();
    return t;
  }

  uint64_t to_uint(const Token& t, std::string_view what, uint64_t max) const {
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec == std::errc::result_out_of_range || (ec == std::errc() && end == t.text.data() + t.text.size() && v > max))
      lex_.fail(t.line, fmt::format("{} '{}' is out of range (at most {})", what, t.text, max));
    if (ec != std::errc() || end != t.text.data() + t.text.size())
      lex_.fail(t.line, fmt::format("{} must be a non-negative integer, got '{}'", what, t.text));
    return v;
  }

  // -1 (wildcard) or a non-negative integer up to max.
  int64_t to_int_or_any(const Token& t, std::string_view what, uint64_t max) const {
    if (t.text == "-1") return -1;
    return static_cast<int64_t>(to_uint(t, what, max));
  }

  uint64_t to_size(const Token& t) const {
    if (t.text.size() < 2 || t.text.back() != 'b')
      lex_.fail(t.line, fmt::format("message size must be written as <bytes>b (e.g. 8b), got '{}'", t.text));
    Token digits = t;
    digits.text.remove_suffix(1);
    return to_uint(digits, "message size", std::numeric_limits<uint64_t>::max());
  }

  bool is_label(std::string_view s) const {
    if (s.empty() || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'))) return false;
    for (char c : s)
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
    return true;
  }

  // An optional "<keyword> <value>" field: present when the keyword is followed by a word that is
  // not itself a label definition (so a label named "cpu:" on the next line is not swallowed).
  bool optional_field(std::string_view kw, Token& value) {
    if (cur_.type != Tok::Word || cur_.text != kw || next_.type != Tok::Word) return false;
    advance();
    value = cur_;
    advance();
    return true;
  }

  uint64_t label_ref(uint32_t rank, const Token& t) const {
    auto it = labels_.find(t.text);
    if (it == labels_.end()) lex_.fail(t.line, fmt::format("label '{}' is not defined (yet) in rank {}", t.text, rank));
    return it->second;
  }

  void parse_rank_body(uint32_t rank, uint32_t rank_line) {
    labels_.clear();
    for (;;) {
      if (cur_.type == Tok::RBrace) {
        advance();
        return;
      }
      if (cur_.type == Tok::End)
        lex_.fail(cur_.line, fmt::format("rank {} block opened on line {} is never closed with '}}'", rank, rank_line));
      if (cur_.type != Tok::Word) unexpected(cur_, "a statement or '}'");

      std::string_view label;
      uint32_t label_line = cur_.line;
      if (next_.type == Tok::Colon) {
        label = cur_.text;
        if (!is_label(label)) lex_.fail(cur_.line, fmt::format("'{}' is not a valid label", label));
        if (labels_.count(label)) lex_.fail(cur_.line, fmt::format("label '{}' defined twice in rank {}", label, rank));
        advance();
        advance();
      } else if (cur_.text != "send" && cur_.text != "recv" && cur_.text != "calc") {
        parse_edge(rank);
        continue;
      }
      uint64_t id = parse_operation(rank);
      builder_.set_line_of_last(rank, label_line);
      if (!label.empty()) labels_.emplace(label, id);
    }
  }

  void parse_edge(uint32_t rank) {
    Token a = cur_;
    advance();
    if (cur_.type != Tok::Word || (cur_.text != "requires" && cur_.text != "irequires"))
      unexpected(cur_, fmt::format("'requires' or 'irequires' after '{}' (or an operation: send, recv, calc)", a.text));
    bool irequires = cur_.text == "irequires";
    advance();
    Token b = take_word("a label");
    uint64_t after = label_ref(rank, a), before = label_ref(rank, b);
    if (after == before) lex_.fail(a.line, fmt::format("'{}' cannot depend on itself", a.text));
    if (irequires)
      builder_.irequires_edge(rank, after, before);
    else
      builder_.requires_edge(rank, after, before);
  }

  uint64_t parse_operation(uint32_t rank) {
    Token op = take_word("send, recv or calc");
    Token v;
    if (op.text == "calc") {
      Token t = take_word("a calc time");
      uint64_t cost = to_uint(t, "calc time", std::numeric_limits<uint64_t>::max());
      if (optional_field("cpu", v)) to_uint(v, "cpu", std::numeric_limits<uint32_t>::max());
      return lex_.take_poll_lag_marker(t.line) ? builder_.poll_lag(rank, cost) : builder_.calc(rank, cost);
    }
    if (op.text != "send" && op.text != "recv") unexpected(op, "send, recv or calc");
    bool is_send = op.text == "send";
    uint64_t bytes = to_size(take_word("a message size like 8b"));
    expect_keyword(is_send ? "to" : "from");
    Token p = take_word("a rank");
    int64_t peer = is_send ? static_cast<int64_t>(to_uint(p, "destination rank", num_ranks_ - 1ull))
                           : to_int_or_any(p, "source rank", num_ranks_ - 1ull);
    int64_t tag = 0;
    if (optional_field("tag", v))
      tag = is_send ? static_cast<int64_t>(to_uint(v, "tag", std::numeric_limits<int32_t>::max()))
                    : to_int_or_any(v, "tag", std::numeric_limits<int32_t>::max());
    if (optional_field("cpu", v)) to_uint(v, "cpu", std::numeric_limits<uint32_t>::max());
    if (optional_field("nic", v)) to_uint(v, "nic", std::numeric_limits<uint32_t>::max());
    if (is_send) return builder_.send(rank, bytes, static_cast<uint32_t>(peer), static_cast<int32_t>(tag));
    return builder_.recv_wildcard(rank, bytes, peer < 0 ? kAnySource : static_cast<uint32_t>(peer),
                                  static_cast<int32_t>(tag));
  }

  Lexer lex_;
  const std::string& name_;
  Token cur_, next_;
  uint32_t num_ranks_ = 0;
  InMemoryGraphBuilder builder_;
  std::unordered_map<std::string_view, uint64_t> labels_;
};

}  // namespace

Graph parse_goal(std::string_view text, const std::string& name) { return Parser(text, name).parse(); }

Graph read_goal(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(fmt::format("{}: not a regular file", path));
  }
  if (st.st_size == 0) {
    ::close(fd);
    throw Error(fmt::format("{}:1: empty file, expected 'num_ranks'", path));
  }
  void* map = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) throw Error(fmt::format("{}: cannot map: {}", path, std::strerror(errno)));
  try {
    Graph g = parse_goal({static_cast<const char*>(map), static_cast<size_t>(st.st_size)}, path);
    ::munmap(map, static_cast<size_t>(st.st_size));
    return g;
  } catch (...) {
    ::munmap(map, static_cast<size_t>(st.st_size));
    throw;
  }
}

}  // namespace llamp::graph
