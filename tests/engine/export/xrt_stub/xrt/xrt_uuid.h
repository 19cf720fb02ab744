// Stub of xrt::uuid (see xrt_device.h).
#pragma once

namespace xrt {
class uuid {
 public:
  uuid();
};
}  // namespace xrt
