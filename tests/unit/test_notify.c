/* SPDX-License-Identifier: MIT */
/*
 * test_notify.c — sd_notify's datagram without libsystemd: the test binds
 * the socket systemd would (a path, and an abstract name), sets
 * $NOTIFY_SOCKET, and reads back what fg_notify sent.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "floodgate/notify.h"
#include "fgtest.h"

static int bind_dgram(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 5 };
	size_t n = strlen(name);
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);

	ck_assert_int_ge(fd, 0);
	memcpy(sa.sun_path, name, n);
	if (name[0] == '@')
		sa.sun_path[0] = '\0';
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa,
			      (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n +
					  (name[0] == '/'))), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static void expect(int fd, const char *want)
{
	char buf[256];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);

	ck_assert_msg(n > 0, "nothing received");
	buf[n] = '\0';
	ck_assert_str_eq(buf, want);
}

START_TEST(test_path_socket)
{
	char dir[] = "/tmp/fg-test-notify.XXXXXX", path[96];
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/notify", dir);
	fd = bind_dgram(path);
	setenv("NOTIFY_SOCKET", path, 1);
	ck_assert_int_eq(fg_notify("READY=1"), 0);
	expect(fd, "READY=1");
	ck_assert_int_eq(fg_notify("STOPPING=1"), 0);
	expect(fd, "STOPPING=1");
	close(fd);
	unlink(path);
	rmdir(dir);
	/* the socket is gone: the error is said, not swallowed */
	ck_assert_int_eq(fg_notify("READY=1"), -ENOENT);
	unsetenv("NOTIFY_SOCKET");
}
END_TEST

START_TEST(test_abstract_socket)
{
	char name[64];
	int fd;

	snprintf(name, sizeof(name), "@fg-test-notify-%d", (int)getpid());
	fd = bind_dgram(name);
	ck_assert_int_eq(fg_notify_to(name, "READY=1\nSTATUS=serving"), 0);
	expect(fd, "READY=1\nSTATUS=serving");
	close(fd);
}
END_TEST

START_TEST(test_no_socket_is_no_op)
{
	unsetenv("NOTIFY_SOCKET");
	ck_assert_int_eq(fg_notify("READY=1"), 0);
	setenv("NOTIFY_SOCKET", "", 1);
	ck_assert_int_eq(fg_notify("READY=1"), 0);
	unsetenv("NOTIFY_SOCKET");
}
END_TEST

START_TEST(test_bad_names)
{
	char longname[200];

	ck_assert_int_eq(fg_notify_to("relative/path", "READY=1"), -EINVAL);
	ck_assert_int_eq(fg_notify_to("@", "READY=1"), -EINVAL);
	ck_assert_int_eq(fg_notify_to("/", "READY=1"), -EINVAL);
	memset(longname, 'a', sizeof(longname) - 1);
	longname[0] = '/';
	longname[sizeof(longname) - 1] = '\0';
	ck_assert_int_eq(fg_notify_to(longname, "READY=1"), -EINVAL);
	setenv("NOTIFY_SOCKET", "no-slash", 1);
	ck_assert_int_eq(fg_notify("READY=1"), -EINVAL);
	unsetenv("NOTIFY_SOCKET");
}
END_TEST

static Suite *notify_suite(void)
{
	Suite *s = suite_create("notify");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_path_socket);
	tcase_add_test(tc, test_abstract_socket);
	tcase_add_test(tc, test_no_socket_is_no_op);
	tcase_add_test(tc, test_bad_names);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(notify_suite)
