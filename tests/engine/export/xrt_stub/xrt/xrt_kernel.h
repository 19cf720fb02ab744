// Stub of xrt::kernel and xrt::run (see xrt_device.h).
#pragma once
#include <string>

#include "xrt_bo.h"
#include "xrt_device.h"
#include "xrt_uuid.h"

// The command states of XRT's ert.h that hosts compare with.
enum ert_cmd_state { ERT_CMD_STATE_NEW = 1, ERT_CMD_STATE_QUEUED = 2, ERT_CMD_STATE_RUNNING = 3,
                     ERT_CMD_STATE_COMPLETED = 4, ERT_CMD_STATE_ERROR = 5, ERT_CMD_STATE_ABORT = 6 };

namespace xrt {
class run {
 public:
  ert_cmd_state wait();
};

class kernel {
 public:
  kernel(const device& device, const uuid& xclbin_id, const std::string& name);
  int group_id(int argno) const;
  template <typename... Args>
  run operator()(Args&&... args);
};
}  // namespace xrt
