// SPDX-License-Identifier: GPL-2.0-or-later
#include "notify.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "util.h"

/* The service manager's socket into sa: 1, 0 when there is none, or -EINVAL. */
static int notify_address(struct sockaddr_un *sa, socklen_t *sl)
{
	const char *path = getenv("NOTIFY_SOCKET");
	if (!path || !*path)
		return 0;
	*sa = (struct sockaddr_un){.sun_family = AF_UNIX};
	size_t len = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(sa->sun_path))
		return -EINVAL;
	memcpy(sa->sun_path, path, len);
	if (path[0] == '@')
		sa->sun_path[0] = '\0';
	*sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
	return 1;
}

int notify_service_manager_fd(const char *state, int fd)
{
	struct sockaddr_un sa;
	socklen_t sl = 0;
	int rc = notify_address(&sa, &sl);
	if (rc <= 0)
		return rc;
	_cleanup_close_ int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	struct iovec iov = {(void *)state, strlen(state)};
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	memset(&ctl, 0, sizeof(ctl));
	struct msghdr mh = {.msg_name = &sa, .msg_namelen = sl, .msg_iov = &iov, .msg_iovlen = 1};
	if (fd >= 0) {
		mh.msg_control = &ctl;
		mh.msg_controllen = sizeof(ctl);
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	if (sendmsg(s, &mh, MSG_NOSIGNAL) < 0)
		return -errno;
	return 1;
}

int notify_service_manager(const char *state)
{
	return notify_service_manager_fd(state, -1);
}
