// SPDX-License-Identifier: Apache-2.0
// A file descriptor closed when it goes out of scope: for the readers and writers that open a
// file themselves (host/file_writer, loops/loop_reader). Owned by one thread.
#pragma once

#include <unistd.h>

namespace jitterd {

class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace jitterd
