// Stream values (owned by t_stream.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace redlab::fake {

struct StreamId {
  uint64_t ms = 0;
  uint64_t seq = 0;
  auto operator<=>(const StreamId&) const = default;
};

struct StreamValue {
  std::map<StreamId, std::vector<std::pair<std::string, std::string>>> entries;
  StreamId last_id;
};

}  // namespace redlab::fake
