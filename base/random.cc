#include "base/random.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>

namespace locklab {

std::string RandomToken() {
  unsigned char buf[16];
  size_t got = 0;
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open /dev/urandom");
  while (got < sizeof(buf)) {
    ssize_t n = read(fd, buf + got, sizeof(buf) - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  if (got != sizeof(buf)) throw std::runtime_error("short read from /dev/urandom");
  char hex[33];
  for (size_t i = 0; i < sizeof(buf); ++i) snprintf(hex + 2 * i, 3, "%02x", buf[i]);
  return std::string(hex, 32);
}

uint64_t RandomSeed(int bits) {
  uint64_t v = 0;
  for (char c : RandomToken().substr(0, static_cast<size_t>(bits / 4))) {
    v = v * 16 + static_cast<uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
  }
  return v + 1;
}

}  // namespace locklab
