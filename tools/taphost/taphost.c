/* SPDX-License-Identifier: MIT */
/*
 * taphost.c — fg-taphost: one DPDK worker core's modules (net, TCP,
 * tcpsess, the NNTP session engine, an in-memory history and a memory or
 * null sink; stack.c builds them) on a TAP device, so that real kernel
 * TCP clients — Python sockets, nc, INN's innfeed — hold full NNTP
 * sessions through the engine. Started inside a network namespace by the
 * tests; it opens /dev/net/tun (IFF_TAP | IFF_NO_PI) and configures
 * nothing else: the test brings the interface up and gives the kernel
 * side its addresses. Frames read from the device become memport buffers
 * (fg_memport), so the modules see exactly what the DPDK port gives them:
 * (data, len, handle) with reference counting.
 *
 *   fg-taphost --tap NAME --addr A.B.C.D --config FILE [--sink memory|null]
 *              [--mac 02:..] [--fault rx-drop=1,tx-drop=1,...,seed=N (percent)]
 *              [--max-conns N] [--syn-backlog N] [--syn-backlog-per-peer N]
 *              [--no-syncookies] [--sndbuf B] [--rcvbuf B] [--bufs N]
 *              [--idle-timeout-ms MS] [--time-wait-ms MS] [--rto-min-ms MS]
 *              [--stats-file PATH]
 *
 * The config file is floodgate.conf: [site] listen (its IPv4 endpoints;
 * default 0.0.0.0:119), server-name and path identity, [rules], [session],
 * [history] capacity, and the [peer] sections that map client addresses
 * to peers (a client that is no peer gets 502). --addr is the module's
 * own address on the device; --max-conns sizes TCP's connection blocks
 * and the engine's sessions alike.
 *
 * The loop is the DPDK worker's (dataplane/dpdk/worker.c), with poll(2)
 * on the device instead of its idle back-off: read a burst, engine poll
 * when due, tcpsess work, net poll. SIGTERM/SIGINT: new connections get
 * 400 (draining), every session "400 Server shutting down" and closes,
 * transfers finish; what is still open after 3 s is reset. Counters
 * (stack.c) are written as "name value" lines to the stats file on
 * SIGUSR1 and at exit, atomically (temp + rename). "ready" is printed on
 * stdout once the device is open.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/log.h"
#include "taphost.h"

#define RX_BURST 32
#define BUF_SIZE 2048
#define SHUTDOWN_GRACE_NS (3ull * 1000000000ull)

static volatile sig_atomic_t got_stop, got_usr1;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		got_usr1 = 1;
	else
		got_stop = 1;
}

static int tap_open(const char *name)
{
	struct ifreq ifr;
	int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		FG_LOG_ERR(TH_COMP, "/dev/net/tun: %s", strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		FG_LOG_ERR(TH_COMP, "TUNSETIFF %s: %s", name, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static void write_stats(const struct th *t)
{
	char tmp[512];
	FILE *f;

	if (!t->o.stats_file)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", t->o.stats_file);
	f = fopen(tmp, "w");
	if (!f) {
		FG_LOG_ERR(TH_COMP, "stats file %s: %s", tmp, strerror(errno));
		return;
	}
	th_write_counters(f, t);
	if (fclose(f) != 0 || rename(tmp, t->o.stats_file) != 0)
		FG_LOG_ERR(TH_COMP, "stats file %s: %s", t->o.stats_file, strerror(errno));
}

/* ------------------------------------------------------------ options */

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned v[6];

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6)
		return -1;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)v[i];
	return 0;
}

static int parse_args(int argc, char **argv, struct th_opts *o)
{
	enum { O_TAP = 256, O_ADDR, O_CONFIG, O_SINK, O_MAC, O_FAULT, O_MAXC, O_BACKLOG,
	       O_PEERBL, O_NOCOOKIE, O_SNDBUF, O_RCVBUF, O_BUFS, O_IDLE, O_TW, O_RTO, O_STATS };
	static const struct option lo[] = {
		{ "tap", 1, 0, O_TAP }, { "addr", 1, 0, O_ADDR }, { "config", 1, 0, O_CONFIG },
		{ "sink", 1, 0, O_SINK }, { "mac", 1, 0, O_MAC }, { "fault", 1, 0, O_FAULT },
		{ "max-conns", 1, 0, O_MAXC }, { "syn-backlog", 1, 0, O_BACKLOG },
		{ "syn-backlog-per-peer", 1, 0, O_PEERBL }, { "no-syncookies", 0, 0, O_NOCOOKIE },
		{ "sndbuf", 1, 0, O_SNDBUF }, { "rcvbuf", 1, 0, O_RCVBUF }, { "bufs", 1, 0, O_BUFS },
		{ "idle-timeout-ms", 1, 0, O_IDLE }, { "time-wait-ms", 1, 0, O_TW },
		{ "rto-min-ms", 1, 0, O_RTO }, { "stats-file", 1, 0, O_STATS }, { 0, 0, 0, 0 },
	};
	struct in_addr a;
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case O_TAP: o->tap = optarg; break;
		case O_ADDR:
			if (inet_pton(AF_INET, optarg, &a) != 1 || o->net.n_ipv4 == FG_NET_MAX_ADDRS)
				return -1;
			o->net.ipv4[o->net.n_ipv4++] = a.s_addr;
			break;
		case O_CONFIG: o->config = optarg; break;
		case O_SINK:
			if (strcmp(optarg, "null") && strcmp(optarg, "memory"))
				return -1;
			o->null_sink = !strcmp(optarg, "null");
			break;
		case O_MAC: if (parse_mac(optarg, o->net.mac) < 0) return -1; break;
		case O_FAULT: if (fg_net_faults_parse(optarg, &o->faults) < 0) return -1; break;
		case O_MAXC: o->tcp.max_conns = (unsigned)atoi(optarg); break;
		case O_BACKLOG: o->tcp.syn_backlog = (unsigned)atoi(optarg); break;
		case O_PEERBL: o->tcp.syn_backlog_per_peer = (unsigned)atoi(optarg); break;
		case O_NOCOOKIE: o->tcp.no_syncookies = true; break;
		case O_SNDBUF: o->tcp.sndbuf = (uint32_t)atoi(optarg); break;
		case O_RCVBUF: o->tcp.rcvbuf = (uint32_t)atoi(optarg); break;
		case O_BUFS: o->bufs = (unsigned)atoi(optarg); break;
		case O_IDLE: o->tcp.idle_timeout_ns = strtoull(optarg, NULL, 10) * 1000000ull; break;
		case O_TW: o->tcp.time_wait_ns = strtoull(optarg, NULL, 10) * 1000000ull; break;
		case O_RTO: o->tcp.rto_min_ns = strtoull(optarg, NULL, 10) * 1000000ull; break;
		case O_STATS: o->stats_file = optarg; break;
		default: return -1;
		}
	}
	return o->net.n_ipv4 && o->config && optind == argc && o->bufs >= 256 ? 0 : -1;
}

/* ------------------------------------------------------------ the loop */

static unsigned rx_burst(struct th *t, uint64_t now_ns)
{
	struct fg_rx_frame fr[RX_BURST];
	unsigned n = 0;

	while (n < RX_BURST) {
		ssize_t k;

		if (fg_memport_rx_frame(t->mp, NULL, BUF_SIZE, &fr[n]) < 0)
			break;	/* pool empty: frames wait in the kernel's queue */
		k = read(t->fd, fr[n].data, BUF_SIZE);
		if (k <= 0) {
			fg_memport_ops()->buf_unref(t->mp, fr[n].handle);
			break;
		}
		fr[n].len = (uint32_t)k;
		t->tap_reads++;
		n++;
	}
	if (n)
		fg_net_rx(t->net, fr, n, now_ns);
	return n;
}

/* One pass: wait for a frame or the next deadline (at most 100 ms), then
 * what a worker iteration does. Returns the time the engine is next due. */
static uint64_t iteration(struct th *t, uint64_t engine_due)
{
	struct pollfd pfd = { t->fd, POLLIN, 0 };
	uint64_t now_ns = fg_mono_ns(), next = FG_MIN(fg_net_next_deadline(t->net), engine_due);
	int tmo = next <= now_ns ? 0 : (int)FG_MIN((next - now_ns + 999999) / 1000000, 100u);
	struct timespec wall;
	unsigned got = 0;

	if (poll(&pfd, 1, tmo) > 0 && (pfd.revents & POLLIN))
		got = 1;
	clock_gettime(CLOCK_REALTIME, &wall);
	now_ns = fg_mono_ns();
	/* the TCP callbacks (accept, data) run the engine with this time */
	fg_tcpsess_set_time(t->ts, wall.tv_sec, now_ns);
	if (got)
		got = rx_burst(t, now_ns);
	if (got || now_ns >= engine_due) {
		fg_nntp_engine_poll(t->e, wall.tv_sec, now_ns);
		engine_due = fg_nntp_engine_next_poll(t->e, now_ns);
	}
	fg_tcpsess_work(t->ts);
	/* TCP timers, and the answers and window updates of this pass */
	fg_net_poll(t->net, now_ns);
	fg_tcpsess_work(t->ts);
	if (got_usr1) {
		got_usr1 = 0;
		write_stats(t);
	}
	return engine_due;
}

/* As the dataplane's shutdown: drain, 400 to every session, let the
 * transfers finish and the answers reach the peers, then reset the rest. */
static void shutdown_sequence(struct th *t, uint64_t engine_due)
{
	uint64_t deadline = fg_mono_ns() + SHUTDOWN_GRACE_NS;

	fg_tcpsess_set_draining(t->ts, true);
	fg_nntp_engine_shutdown(t->e);
	while (fg_mono_ns() < deadline && (fg_nntp_engine_sessions(t->e) || fg_nntp_engine_xfers(t->e) ||
					fg_tcpsess_unfinished(t->ts)))
		engine_due = iteration(t, engine_due);
	if (fg_tcpsess_abort_all(t->ts))
		fg_tcpsess_work(t->ts);
	/* transfers of aborted sessions complete at the sink's next poll */
	while (fg_mono_ns() < deadline + SHUTDOWN_GRACE_NS && fg_nntp_engine_xfers(t->e))
		engine_due = iteration(t, engine_due);
	fg_net_poll(t->net, fg_mono_ns());
	fg_tcpsess_work(t->ts);
	if (fg_nntp_engine_sessions(t->e) || fg_nntp_engine_xfers(t->e))
		FG_LOG_ERR(TH_COMP, "stopped with %u sessions and %u transfers open",
			   fg_nntp_engine_sessions(t->e), fg_nntp_engine_xfers(t->e));
}

int main(int argc, char **argv)
{
	static struct th t = { .fd = -1, .o = { .tap = "fgt0", .bufs = 32768 } };
	struct sigaction sa;
	uint64_t engine_due = 0;
	int rc = 1;

	memcpy(t.o.net.mac, (const uint8_t[]){ 0x02, 0xfc, 0x00, 0x00, 0x00, 0x01 }, 6);
	if (parse_args(argc, argv, &t.o) < 0) {
		fprintf(stderr, "usage: fg-taphost --tap NAME --addr A.B.C.D --config FILE "
				"[options] (see the head of tools/taphost/taphost.c)\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	t.fd = tap_open(t.o.tap);
	if (t.fd < 0 || th_stack_create(&t) != 0)
		goto out;
	printf("ready\n");
	fflush(stdout);
	while (!got_stop)
		engine_due = iteration(&t, engine_due);
	shutdown_sequence(&t, engine_due);
	write_stats(&t);
	rc = 0;
out:
	th_stack_destroy(&t);
	if (t.fd >= 0)
		close(t.fd);
	return rc;
}
