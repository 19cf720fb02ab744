// Stub of xrt::kernel and xrt::run (see xrt_device.h).
#pragma once
#include <string>

#include "xrt_bo.h"
#include "xrt_device.h"
#include "xrt_uuid.h"

namespace xrt {
class run {
 public:
  void wait();
};

class kernel {
 public:
  kernel(const device& device, const uuid& xclbin_id, const std::string& name);
  int group_id(int argno) const;
  template <typename... Args>
  run operator()(Args&&... args);
};
}  // namespace xrt
