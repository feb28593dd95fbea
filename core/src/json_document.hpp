#pragma once
// What every llamp JSON file (LogGP parameters, noise recordings) is checked for first, in one
// place so their errors read alike: valid JSON (else the byte offset), an object, the expected
// "format" and "version". Errors name the file.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace llamp::detail {

// `what` completes "is this <what>?" in the format error, e.g. "a LogGP parameter file".
nlohmann::json parse_document(std::string_view text, const std::string& name, const char* format, int version,
                              const char* what);

// The whole file; "<path>: cannot open <what>" when it cannot be read.
std::string read_document(const std::string& path, const char* what);

}  // namespace llamp::detail
