/* SPDX-License-Identifier: MIT */
/*
 * restoring.c — floodgate-host while floodctld restores the history.
 *
 * A region in state BUILDING is a history being restored: answering an
 * offer from it could say 238 (or 431 to a TAKETHIS) for an ID the
 * restore has not reached yet. So until it is READY:
 *  1. listen on the configured addresses, as the workers will;
 *  2. greet every new connection "400 ..." with the reason and close it
 *     (RFC 3977 5.1.1; innd says 400 when it is throttled), before it can
 *     send a command: no CHECK, TAKETHIS or IHAVE is ever answered;
 *  3. every POLL_MS, look at the region again: READY → close the
 *     listeners and attach (the workers bind their own at once); no
 *     longer being built and not attachable (floodctld died) → give up,
 *     as without this wait.
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "floodgate/log.h"
#include "floodgate/session.h"
#include "host.h"

#define POLL_MS 100
#define GREETING FG_NNTP_RESTORING_LINE

static void greet_and_close(int lfd, uint64_t *greeted)
{
	int c;

	while ((c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		/* a fresh socket's buffer takes one line; a peer gone already
		 * is no concern of ours */
		if (send(c, GREETING, sizeof(GREETING) - 1, MSG_NOSIGNAL) > 0)
			(*greeted)++;
		close(c);
	}
}

struct fg_region *host_wait_restore(const struct host_opts *o, const struct fg_config *cfg)
{
	const struct fg_endpoint *eps = o->n_listen ? o->listen : cfg->listen;
	unsigned n = o->n_listen ? o->n_listen : cfg->n_listen, nl = 0;
	int lfd[FG_CONFIG_MAX_LISTEN], ep = -1;
	struct fg_region *r = NULL;
	uint64_t greeted = 0;
	char why[512];

	if (!fg_region_restoring(cfg->shm_path))
		return NULL;
	FG_LOG_NOTICE(HOST_COMP, "floodctld is restoring the history (%s): new sessions are "
		      "greeted with 400 until it is ready", cfg->shm_path);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		goto out_close;
	for (; nl < n; nl++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = 0 };

		lfd[nl] = host_listen_on(&eps[nl]);
		if (lfd[nl] < 0) {
			FG_LOG_ERR(HOST_COMP, "listen while waiting for the restore: %s",
				   strerror(-lfd[nl]));
			goto out_close;
		}
		ev.data.fd = lfd[nl];
		epoll_ctl(ep, EPOLL_CTL_ADD, lfd[nl], &ev);
	}
	while (fg_region_restoring(cfg->shm_path)) {
		struct epoll_event evs[FG_CONFIG_MAX_LISTEN];
		int k = epoll_wait(ep, evs, FG_CONFIG_MAX_LISTEN, POLL_MS);

		for (int i = 0; i < k; i++)
			greet_and_close(evs[i].data.fd, &greeted);
	}
	r = fg_region_attach(cfg->shm_path, why, sizeof(why));
	if (r)
		FG_LOG_NOTICE(HOST_COMP, "the history is restored: %llu sessions were greeted "
			      "with 400 meanwhile", (unsigned long long)greeted);
	else
		FG_LOG_ERR(HOST_COMP, "after the restore: %s", why);
out_close:
	while (nl-- > 0)
		close(lfd[nl]);
	if (ep >= 0)
		close(ep);
	return r;
}
