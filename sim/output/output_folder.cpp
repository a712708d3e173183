#include "sim/output/output_folder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sim/output/output_error.h"
#include "sim/scenario/scenario_error.h"

namespace rdmasim {
namespace {

std::string folder_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// Absent, or a file that can be replaced.
void check_replaceable(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return;
  if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) return;
  const char* what = S_ISDIR(st.st_mode) ? "is a folder" : "is not a regular file";
  throw ScenarioError(path + ": " + what +
                      " (expected a file rdmasim can replace, or nothing: remove it or choose "
                      "another --out)");
}

void remove_file(const std::string& path, const char* what) {
  if (::unlink(path.c_str()) == 0 || errno == ENOENT) return;
  throw ScenarioError(path + ": cannot remove " + what + ": " + std::strerror(errno) +
                      " (expected a writable folder)");
}

}  // namespace

std::vector<std::string> prepare_outputs(const std::vector<std::string>& files) {
  std::vector<std::string> stale;
  if (files.empty()) return stale;
  for (const std::string& f : files) {
    check_replaceable(f);
    check_replaceable(temporary_name(f));
  }
  for (const std::string& f : files) {
    const std::string tmp = temporary_name(f);
    struct stat st {};
    if (::lstat(tmp.c_str(), &st) != 0) continue;
    remove_file(tmp, "the stale temporary of an earlier run");
    stale.push_back(tmp);
  }
  // A probe under the first temporary's name: if it survives a kill, the
  // next run removes it as stale.
  const std::string probe = temporary_name(files.front());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    throw ScenarioError(folder_of(probe) +
                        ": cannot write in the output folder: " + std::strerror(errno) +
                        " (expected a writable folder; nothing was simulated)");
  }
  ::close(fd);
  remove_file(probe, "a probe file");
  for (const std::string& f : files) remove_file(f, "the earlier run's output");
  return stale;
}

}  // namespace rdmasim
