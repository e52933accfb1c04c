/* SPDX-License-Identifier: MIT */
/*
 * notify.c — one datagram to systemd's notify socket (notify.h).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "floodgate/notify.h"

int fg_notify_to(const char *name, const char *state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(name);
	socklen_t salen;
	int fd, rc = 0;

	/* a path needs its NUL inside sun_path; an abstract name does not */
	if (n < 2 || (name[0] != '/' && name[0] != '@') ||
	    n > sizeof(sa.sun_path) - (name[0] == '/'))
		return -EINVAL;
	memcpy(sa.sun_path, name, n);
	if (name[0] == '@')
		sa.sun_path[0] = '\0';
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (name[0] == '/'));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (const struct sockaddr *)&sa,
		   salen) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

int fg_notify(const char *state)
{
	const char *name = getenv("NOTIFY_SOCKET");

	if (!name || !name[0])
		return 0;
	return fg_notify_to(name, state);
}
