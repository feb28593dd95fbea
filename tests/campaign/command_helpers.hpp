#pragma once
// What the campaign tools' MPI tests share: a temporary file name (in this process's scratch
// directory, removed at exit) and running a shell command for its exit status.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <sys/wait.h>

#include "../scratch_dir.hpp"

namespace llamp::test {

inline std::string temp_file(const std::string& name) { return scratch_file(name + ".json").string(); }

inline int run(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace llamp::test
