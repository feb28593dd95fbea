#include "json_document.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "llamp/error.hpp"

namespace llamp::detail {

nlohmann::json parse_document(std::string_view text, const std::string& name, const char* format, int version,
                              const char* what) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(fmt::format("{}: offset {}: not valid JSON: {}", name, e.byte, e.what()));
  }
  if (!j.is_object()) throw Error(fmt::format("{}: expected a JSON object", name));
  if (!j.contains("format") || j["format"] != format)
    throw Error(fmt::format("{}: \"format\" must be \"{}\" (is this {}?)", name, format, what));
  if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<int64_t>() != version)
    throw Error(fmt::format("{}: unsupported \"version\" {} (this llamp reads version {})", name,
                            j.contains("version") ? j["version"].dump() : "(missing)", version));
  return j;
}

std::string read_document(const std::string& path, const char* what) {
  std::ifstream in(path);
  if (!in) throw Error(fmt::format("{}: cannot open {}", path, what));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace llamp::detail
