// Stub of xrt::bo (see xrt_device.h).
#pragma once
#include <cstddef>

enum xclBOSyncDirection { XCL_BO_SYNC_BO_TO_DEVICE = 0, XCL_BO_SYNC_BO_FROM_DEVICE = 1 };

namespace xrt {
class device;
using memory_group = unsigned int;

class bo {
 public:
  bo(const device& device, std::size_t size, memory_group group);
  void sync(xclBOSyncDirection direction);
  template <typename MapType>
  MapType map();
};
}  // namespace xrt
