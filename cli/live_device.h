// SPDX-License-Identifier: BSD-2-Clause
// The kinst device (/dev/kinst): opened once, version-checked, closed by
// RAII.  Shared by the live symbol source and, later, `trace`.
#ifndef KINSTCTL_LIVE_DEVICE_H
#define KINSTCTL_LIVE_DEVICE_H

#include <string>

namespace kinst {

class Device {
public:
	static constexpr const char *path = "/dev/kinst";
	// Opens and checks the ABI version; throws Error(Exit::live) saying
	// what to do (load the module, run as root) for `purpose`.
	static Device open_for(const std::string &purpose);
	Device(Device &&o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
	Device &operator=(Device &&) = delete;
	Device(const Device &) = delete;
	~Device();
	int fd() const { return fd_; }
	unsigned abi_version() const { return abi_; }

private:
	explicit Device(int fd, unsigned abi) : fd_(fd), abi_(abi) {}
	int fd_;
	unsigned abi_;
};

} // namespace kinst

#endif
