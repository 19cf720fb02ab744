// Stub of XRT's native C++ API surface the generated host programs use: declarations only, enough for
// `g++ -fsyntax-only` to check a host program against it (XRT itself is not installed here).
#pragma once
#include <string>

#include "xrt_uuid.h"

namespace xrt {
class device {
 public:
  explicit device(unsigned int index);
  uuid load_xclbin(const std::string& xclbin_file_name);
};
}  // namespace xrt
