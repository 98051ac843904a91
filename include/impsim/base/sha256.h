// SHA-256 (FIPS 180-4), for the digests a shard document carries of the
// scenario it searched and of the options it searched with: shards of two
// different scenarios that share a file name must not merge into one count.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace impsim {

class Sha256 {
 public:
  Sha256();
  void add(std::string_view bytes);
  // The digest of everything added, as 64 lowercase hex digits. Once.
  std::string hex();

 private:
  void block(const unsigned char* p);
  std::array<uint32_t, 8> h_;
  unsigned char buf_[64];
  size_t used_ = 0;
  uint64_t length_ = 0;  // bytes added
};

// The digest of `bytes` in one call.
std::string sha256_hex(std::string_view bytes);

}  // namespace impsim
