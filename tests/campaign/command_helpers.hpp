#pragma once
// What the campaign tools' MPI tests share: a per-process temporary file name and running a shell
// command for its exit status.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <sys/wait.h>

namespace llamp::test {

inline std::string temp_file(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()) + ".json")).string();
}

inline int run(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace llamp::test
