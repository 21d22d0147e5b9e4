// SPDX-License-Identifier: BSD-2-Clause
#include "live_device.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "error.h"

#include "abi.h"

namespace kinst {

Device
Device::open_for(const std::string &purpose)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		std::string hint;
		if (e == ENOENT)
#ifdef __FreeBSD__
			hint = "the kinst module is not loaded (kldload kinsttrace)";
#else
			hint = "the kinst module is not loaded (insmod kinst.ko)";
#endif
		else if (e == EACCES || e == EPERM)
			hint = "permission denied (the device is root-only: run as root)";
		else
			hint = strerror(e);
		throw Error(Exit::live, std::string(path) + ": cannot " + purpose + ": " + hint +
		    "; or give the kernel and modules as files with --kernel/--module");
	}
	struct kinst_version v;
	memset(&v, 0, sizeof(v));
	if (ioctl(fd, KINST_IOC_VERSION, &v) != 0) {
		int e = errno;
		close(fd);
		throw Error(Exit::live, std::string(path) + ": version query: " + strerror(e));
	}
	if ((v.abi_version >> 16) != KINST_ABI_VERSION_MAJOR) {
		close(fd);
		throw Error(Exit::live, std::string(path) + ": module ABI " +
		    std::to_string(v.abi_version >> 16) + "." + std::to_string(v.abi_version & 0xffff) +
		    ", kinstctl speaks " + std::to_string(KINST_ABI_VERSION_MAJOR) + "." +
		    std::to_string(KINST_ABI_VERSION_MINOR) + ": rebuild one of them");
	}
	return Device(fd, v.abi_version);
}

Device::~Device()
{
	if (fd_ >= 0)
		close(fd_);
}

} // namespace kinst
