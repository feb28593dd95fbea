#pragma once
// One exception type for every user-facing failure: the message already says
// what went wrong, where (file, offset or line, rank) and, when possible, what to do.
#include <stdexcept>
#include <string>

namespace llamp {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace llamp
