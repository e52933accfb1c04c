/* SPDX-License-Identifier: MIT */
/*
 * nntpsrv.h — a scripted news server on loopback for the relay's unit
 * tests: a listening socket, a thread per connection running the test's
 * serve() (its script), buffered line reading that gives up once the
 * server stops, and a lingering close after serve() returns (unread input
 * at close() would turn it into an RST, which may destroy answers already
 * sent before the client read them).
 */
#ifndef FLOODGATE_TESTS_NNTPSRV_H
#define FLOODGATE_TESTS_NNTPSRV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FG_TEST_SRV_CONNS 64

struct fg_test_srv {
	/* the script: one connection, greeting included; must not close fd */
	void (*serve)(struct fg_test_srv *s, int fd);
	uint16_t port;			/* 0 at the first start: any; a restart keeps it */
	_Atomic unsigned conns;		/* connections accepted */
	_Atomic bool stop;
	int lfd;
	pthread_t th;
	pthread_t conn_th[FG_TEST_SRV_CONNS];
};

/* Buffered input of one connection. */
struct fg_test_rd {
	int fd;
	char buf[1 << 16];
	size_t len;
};

/* One line with its CRLF into out (cap octets): its length, or -1 at EOF,
 * a line too long, or once the server stops. */
int fg_test_srv_line(struct fg_test_srv *s, struct fg_test_rd *r, char *out, size_t cap);
/* An article's wire octets up to its terminator (not kept): its first
 * `cap` octets into got (*kept of them); returns them all, or -1 when the
 * connection ended first. */
long fg_test_srv_article(struct fg_test_srv *s, struct fg_test_rd *r, char *got, size_t cap,
			 size_t *kept);
/* printf(fmt, arg) to fd, best effort. */
void fg_test_say(int fd, const char *fmt, const char *arg);
/* The commands every script answers alike: CAPABILITIES (STREAMING listed
 * when `streaming`), MODE STREAM (203, or 500 when not streaming), QUIT
 * (205, then false: end the connection), anything else 500. */
bool fg_test_srv_common(int fd, const char *line, bool streaming);
void fg_test_srv_start(struct fg_test_srv *s);
/* Stop accepting, end every connection's reads, join the threads. */
void fg_test_srv_stop(struct fg_test_srv *s);

#endif
