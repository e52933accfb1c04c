/* SPDX-License-Identifier: MIT */
/*
 * taphost.c — fg-taphost: runs the net + TCP modules on a TAP device so
 * real kernel TCP clients can talk to them. Started inside a network
 * namespace by the tests; it opens /dev/net/tun (IFF_TAP | IFF_NO_PI) and
 * configures nothing else: the test brings the interface up and gives the
 * kernel side its address. Frames read from the device become memport
 * buffers (fg_memport), so the module sees exactly what the DPDK port
 * will give it: (data, len, handle) with reference counting.
 *
 *   fg-taphost --tap NAME --addr A.B.C.D [--port 119] [--app nntp|echo|discard]
 *              [--mac 02:..] [--fault rx-drop=1,tx-drop=1,...,seed=N (percent)]
 *              [--max-conns N] [--syn-backlog N] [--syn-backlog-per-peer N]
 *              [--no-syncookies] [--sndbuf B] [--rcvbuf B] [--bufs N]
 *              [--idle-timeout-ms MS] [--time-wait-ms MS] [--rto-min-ms MS]
 *              [--stats-file PATH]
 *
 * Counters (every fg_stats counter that is not zero, then the harness's
 * and the app's own) are written as "name value" lines to the stats file
 * on SIGUSR1 and at exit (SIGTERM/SIGINT), atomically (temp + rename).
 * "ready" is printed on stdout once the device is open.
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

#include "apps.h"
#include "floodgate/log.h"
#include "floodgate/memport.h"
#include "floodgate/net.h"
#include "floodgate/stats.h"
#include "floodgate/tcp.h"

#define RX_BURST 32
#define BUF_SIZE 2048

static volatile sig_atomic_t got_stop, got_usr1;
static struct fg_stats stats;
static uint64_t tap_write_fail, tap_reads;

struct opts {
	const char *tap, *app, *stats_file;
	unsigned bufs;
	struct fg_net_config net;
	struct fg_tcp_config tcp;
	struct fg_net_faults faults;
};

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		got_usr1 = 1;
	else
		got_stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void tap_sink(void *arg, const uint8_t *frame, uint32_t len, uint32_t flags)
{
	int fd = *(int *)arg;

	(void)flags;
	if (write(fd, frame, len) != (ssize_t)len)
		tap_write_fail++;
}

static int tap_open(const char *name)
{
	struct ifreq ifr;
	int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		FG_LOG_ERR("taphost", "/dev/net/tun: %s", strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		FG_LOG_ERR("taphost", "TUNSETIFF %s: %s", name, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long pages = 0, rss = 0;

	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
		rss = -1;
	fclose(f);
	return rss < 0 ? -1 : rss * (sysconf(_SC_PAGESIZE) / 1024);
}

static void write_stats(const char *path, const struct fg_memport *mp, const struct fg_tcp *tcp)
{
	char tmp[512];
	FILE *f;

	if (!path)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	for (unsigned i = 0; i < FG_CTR__COUNT; i++)
		fprintf(f, "%s %lu\n", fg_counter_name(i), stats.ctr[i]);
	fprintf(f, "taphost_bufs_in_use %u\ntaphost_bufs_capacity %u\n"
		"taphost_buf_alloc_fail %lu\ntaphost_tap_write_fail %lu\n"
		"taphost_tap_reads %lu\ntaphost_conns_in_use %u\ntaphost_segs_in_use %u\n"
		"taphost_rss_kb %ld\n",
		fg_memport_in_use(mp), fg_memport_capacity(mp), fg_memport_alloc_failures(mp),
		tap_write_fail, tap_reads, fg_tcp_conns_in_use(tcp), fg_tcp_segs_in_use(tcp),
		rss_kb());
	taphost_app_print_stats(f);
	fclose(f);
	rename(tmp, path);
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned v[6];

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6)
		return -1;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)v[i];
	return 0;
}

/* "rx-drop=1,tx-dup=0.5,seed=7": percentages of TCP segments. */
static int parse_faults(char *s, struct fg_net_faults *f)
{
	for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
		char *eq = strchr(tok, '=');
		double pct;
		uint32_t ppm;

		if (!eq)
			return -1;
		*eq++ = 0;
		if (!strcmp(tok, "seed")) {
			f->seed = strtoull(eq, NULL, 0);
			continue;
		}
		pct = strtod(eq, NULL);
		if (pct < 0 || pct > 100)
			return -1;
		ppm = (uint32_t)(pct * 10000.0 + 0.5);
		if (!strcmp(tok, "rx-drop"))
			f->rx_drop_ppm = ppm;
		else if (!strcmp(tok, "rx-dup"))
			f->rx_dup_ppm = ppm;
		else if (!strcmp(tok, "rx-reorder"))
			f->rx_reorder_ppm = ppm;
		else if (!strcmp(tok, "tx-drop"))
			f->tx_drop_ppm = ppm;
		else if (!strcmp(tok, "tx-dup"))
			f->tx_dup_ppm = ppm;
		else if (!strcmp(tok, "tx-reorder"))
			f->tx_reorder_ppm = ppm;
		else
			return -1;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	enum { O_TAP = 256, O_ADDR, O_PORT, O_APP, O_MAC, O_FAULT, O_MAXC, O_BACKLOG,
	       O_PEERBL, O_NOCOOKIE, O_SNDBUF, O_RCVBUF, O_BUFS, O_IDLE, O_TW, O_RTO, O_STATS };
	static const struct option lo[] = {
		{ "tap", 1, 0, O_TAP }, { "addr", 1, 0, O_ADDR }, { "port", 1, 0, O_PORT },
		{ "app", 1, 0, O_APP }, { "mac", 1, 0, O_MAC }, { "fault", 1, 0, O_FAULT },
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
		case O_PORT: o->tcp.listen[0].port = (uint16_t)atoi(optarg); break;
		case O_APP: o->app = optarg; break;
		case O_MAC: if (parse_mac(optarg, o->net.mac) < 0) return -1; break;
		case O_FAULT: if (parse_faults(optarg, &o->faults) < 0) return -1; break;
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
	return o->net.n_ipv4 ? 0 : -1;
}

static void rx_burst(int fd, struct fg_memport *mp, struct fg_net *net)
{
	struct fg_rx_frame fr[RX_BURST];
	unsigned n = 0;

	while (n < RX_BURST) {
		ssize_t k;

		if (fg_memport_rx_frame(mp, NULL, BUF_SIZE, &fr[n]) < 0)
			break;	/* pool empty: frames wait in the kernel's queue */
		k = read(fd, fr[n].data, BUF_SIZE);
		if (k <= 0) {
			fg_memport_ops()->buf_unref(mp, fr[n].handle);
			break;
		}
		fr[n].len = (uint32_t)k;
		tap_reads++;
		n++;
	}
	if (n)
		fg_net_rx(net, fr, n, now_ns());
}

static void run(int fd, struct fg_memport *mp, struct fg_net *net, const struct opts *o,
		struct fg_tcp *tcp)
{
	while (!got_stop) {
		uint64_t now = now_ns(), dl = fg_net_next_deadline(net);
		int tmo = 100;
		struct pollfd pfd = { fd, POLLIN, 0 };

		if (dl != UINT64_MAX)
			tmo = dl <= now ? 0 : (int)FG_MIN((dl - now + 999999) / 1000000, 100u);
		if (poll(&pfd, 1, tmo) > 0 && (pfd.revents & POLLIN))
			rx_burst(fd, mp, net);
		fg_net_poll(net, now_ns());
		if (got_usr1) {
			got_usr1 = 0;
			write_stats(o->stats_file, mp, tcp);
		}
	}
}

int main(int argc, char **argv)
{
	struct opts o = { .tap = "fgt0", .app = "nntp", .bufs = 32768 };
	struct fg_memport *mp = NULL;
	struct fg_net *net = NULL;
	struct fg_tcp *tcp = NULL;
	int fd = -1, rc = 1;
	struct sigaction sa;

	memcpy(o.net.mac, (const uint8_t[]){ 0x02, 0xfc, 0x00, 0x00, 0x00, 0x01 }, 6);
	o.tcp.listen[0].port = 119;
	o.tcp.listen[0].family = AF_INET;
	o.tcp.n_listen = 1;
	if (parse_args(argc, argv, &o) < 0 || !taphost_app_ops(o.app)) {
		fprintf(stderr, "usage: fg-taphost --tap NAME --addr A.B.C.D [options] "
				"(see the head of tools/taphost/taphost.c)\n");
		return 2;
	}
	o.net.hash_seed = o.tcp.secret = now_ns() ^ ((uint64_t)getpid() << 32);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	fd = tap_open(o.tap);
	if (fd < 0)
		goto out;
	mp = fg_memport_create(o.bufs, BUF_SIZE, tap_sink, &fd);
	net = mp ? fg_net_create(&o.net, fg_memport_ops(), mp, &stats) : NULL;
	tcp = net ? fg_tcp_create(net, &o.tcp, taphost_app_ops(o.app), NULL) : NULL;
	if (!tcp || fg_net_set_faults(net, &o.faults) < 0) {
		FG_LOG_ERR("taphost", "cannot set up the modules");
		goto out;
	}
	printf("ready\n");
	fflush(stdout);
	run(fd, mp, net, &o, tcp);
	write_stats(o.stats_file, mp, tcp);
	rc = 0;
out:
	fg_tcp_destroy(tcp);
	fg_net_destroy(net);
	taphost_app_cleanup();
	fg_memport_destroy(mp);
	if (fd >= 0)
		close(fd);
	return rc;
}
