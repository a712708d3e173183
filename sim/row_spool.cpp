#include "sim/row_spool.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace rdmasim {

SpoolFile& SpoolFile::operator=(SpoolFile&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
    size_ = std::exchange(o.size_, 0);
    error_ = std::move(o.error_);
  }
  return *this;
}

SpoolFile::~SpoolFile() {
  if (fd_ >= 0) ::close(fd_);
}

namespace {

// An unlinked file in `dir`: O_TMPFILE where the file system has it, else a
// named one unlinked at once. -1 and errno if neither can be made.
int unlinked_file(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) return -1;
  std::string name = dir + "/.rdmasim-spool-XXXXXX";
  fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) return -1;
  if (::unlink(name.c_str()) != 0) {
    const int err = errno;
    ::close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

}  // namespace

bool SpoolFile::append(const std::string& dir, const void* data, size_t n) {
  if (!error_.empty()) return false;
  if (fd_ < 0) {
    fd_ = unlinked_file(dir);
    if (fd_ < 0) {
      error_ = "cannot create a temporary file in " + dir +
               " for the trace's rows: " + std::strerror(errno);
      return false;
    }
  }
  const char* p = static_cast<const char*>(data);
  for (size_t left = n; left > 0;) {
    const ssize_t w = ::pwrite(fd_, p, left, static_cast<off_t>(size_));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      error_ = "cannot write the trace's rows to a temporary file in " + dir + ": " +
               std::strerror(w < 0 ? errno : EIO);
      return false;
    }
    p += w;
    left -= static_cast<size_t>(w);
    size_ += static_cast<uint64_t>(w);
  }
  return true;
}

void SpoolFile::read(uint64_t offset, void* data, size_t n) const {
  char* p = static_cast<char*>(data);
  for (size_t left = n; left > 0;) {
    const ssize_t r = ::pread(fd_, p, left, static_cast<off_t>(offset));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      throw std::runtime_error(std::string("cannot read the trace's rows back from their "
                                           "temporary file: ") +
                               (r < 0 ? std::strerror(errno) : "it is shorter than written"));
    }
    p += r;
    left -= static_cast<size_t>(r);
    offset += static_cast<uint64_t>(r);
  }
}

}  // namespace rdmasim
