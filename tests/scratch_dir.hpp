#pragma once
// The tests' temporary files: every test that writes files asks scratch_dir for a directory, and
// the process removes them all when it exits, so a run of the suite leaves the temporary
// directory as it found it (ad-hoc helpers used to leave thousands of entries in /tmp).
// LLAMP_KEEP_TEST_FILES=1 keeps them to inspect after a failure; LLAMP_TEST_SCRATCH moves them.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <system_error>

namespace llamp::test {

namespace detail {

// The directories this process made; destroyed (and so removing them) at process exit.
class ScratchRegistry {
 public:
  ~ScratchRegistry() {
    const char* keep = std::getenv("LLAMP_KEEP_TEST_FILES");
    // A forked child that exits (a death test) must not remove its parent's files.
    if ((keep && *keep) || ::getpid() != owner_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& dir : dirs_) {
      std::error_code ignored;  // at exit: nothing to report to, and no throwing from a destructor
      std::filesystem::remove_all(dir, ignored);
    }
  }
  void add(const std::filesystem::path& dir) {
    std::lock_guard<std::mutex> lock(mutex_);
    dirs_.insert(dir);
  }

 private:
  std::mutex mutex_;
  std::set<std::filesystem::path> dirs_;
  pid_t owner_ = ::getpid();
};

inline ScratchRegistry& scratch_registry() {
  static ScratchRegistry registry;
  return registry;
}

}  // namespace detail

// A fresh, empty directory <base>/llamp-test-<name>-<pid> (the pid keeps concurrent test processes
// apart), removed at exit. Asking again for the same name empties it.
inline std::filesystem::path scratch_dir(const std::string& name) {
  const char* base = std::getenv("LLAMP_TEST_SCRATCH");
  const std::filesystem::path root =
      base && *base ? std::filesystem::path(base) : std::filesystem::temp_directory_path();
  const std::filesystem::path dir = root / ("llamp-test-" + name + "-" + std::to_string(::getpid()));
  detail::scratch_registry().add(dir);  // before creating it: removed even if a test fails midway
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// A path for one file in this process's shared "files" scratch directory (made once).
inline std::filesystem::path scratch_file(const std::string& name) {
  static const std::filesystem::path dir = scratch_dir("files");
  return dir / name;
}

}  // namespace llamp::test
