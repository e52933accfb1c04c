/* SPDX-License-Identifier: MIT */
/*
 * feedgen.h — feedgen's internals, shared by its main, client and report.
 */
#ifndef FEEDGEN_H
#define FEEDGEN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "workload/lathist.h"
#include "workload/wlcheck.h"
#include "workload/workload.h"

enum fg_feed_mode {
	FEED_CHECK = 0,		/* CHECK, TAKETHIS after 238 */
	FEED_TAKETHIS,		/* TAKETHIS only, as innfeed once most offers are wanted */
	FEED_IHAVE,		/* RFC 3977 6.3.2, one offer at a time */
};

#define FEED_DP_MAX_MEMBERS 4	/* --dpdk-member */

struct feed_opts {
	struct fg_wl_params wl;
	char host[64];
	uint16_t port;
	unsigned conns;			/* per peer */
	unsigned window;		/* commands in flight per connection */
	enum fg_feed_mode mode;
	bool capabilities;		/* CAPABILITIES before MODE STREAM */
	bool mode_stream;		/* MODE STREAM before streaming (RFC 4644 2.3) */
	double retry_delay;		/* seconds before a 431/436 is offered again */
	unsigned max_retries;		/* per offer */
	unsigned max_reconnects;	/* per connection */
	double timeout;			/* whole run, seconds; 0 = none */
	pid_t server_pid;		/* 0 = unknown */
	double rate;			/* first offers a second, all peers; 0 = no limit */
	char source[64];		/* peer i binds source + i; "" = any */
	bool json;
	const char *outcomes;		/* --outcomes FILE, or NULL */
	int progress;			/* -1 auto (a terminal), 0 off, 1 on */
	const char *pcap;
	char pcap_server[64];		/* ADDR:PORT the pcap's client streams go to */
	/* --dpdk PORT: the peers' TCP on the project's own stack over this
	 * DPDK port (dpdk.c), from dpdk_addr, on dpdk_queues queues */
	const char *dpdk;
	char dpdk_addr[64];
	unsigned dpdk_queues;
	/* --dpdk-member DEV: devices created before the port (a bond's
	 * members, the port then net_bonding0,mode=4,slave=...) */
	const char *dpdk_member[FEED_DP_MAX_MEMBERS];
	unsigned n_dpdk_members;
	/* --dpdk-peer-mac: the server's MAC, given (no ARP request) */
	uint8_t dpdk_peer_mac[6];
	bool has_dpdk_peer_mac;
	bool pcap_v6;			/* the pcap's flows over IPv6 (fd00::ADDR) */
	double duration;		/* --duration S: no first offer after S seconds; 0 = all */
	const char *accept_times;	/* --accept-times FILE: "<id> <ns>" per 239 received */
	/* --sink ADDR:PORT: a downstream sink in this process (sink.c) */
	const char *sink;
	const char *sink_times;		/* --sink-times FILE: "<id> <ns>" per 239 it sent */
	unsigned sink_wait;		/* connections to wait for before the peers start */
	double sink_drain;		/* seconds to wait after the peers for the sink's articles */
};

/* Per connection: response codes seen (100..599). */
#define FEED_CODES 600

struct feed_result {
	double elapsed;			/* seconds, first connect to last close */
	uint64_t offers;		/* first offers (CHECK/TAKETHIS/IHAVE), retries apart */
	uint64_t retries;		/* offers made again after 431/436 */
	uint64_t reoffers;		/* offers made again after 400 / a lost connection */
	uint64_t reconnects;
	uint64_t articles_sent;		/* TAKETHIS/IHAVE articles written */
	uint64_t article_bytes;		/* their wire octets */
	uint64_t bytes_out, bytes_in;	/* all octets on the sockets */
	uint64_t accepted;		/* 239/235 */
	uint64_t codes[FEED_CODES];	/* summed over connections */
	struct fg_lathist lat_offer;	/* CHECK / IHAVE line -> answer */
	struct fg_lathist lat_article;	/* TAKETHIS / IHAVE article -> answer */
	double cpu_self;		/* seconds (getrusage) */
	double cpu_server;		/* seconds (/proc/PID/stat), < 0 if unknown */
	unsigned n_conns;
	uint32_t (*conn_codes)[FEED_CODES];	/* per connection, n_conns rows */
	unsigned *conn_peer;
	bool timed_out;
	uint64_t accepted_bytes;	/* wire octets of the articles that got 239/235 */
	uint64_t articles_offered;	/* articles some answer came for (--duration) */
};

/* sink.c: the downstream sink (--sink). */
struct feed_sink_stats {
	uint64_t connections, articles, octets, checks;
	bool drained;			/* it had every accepted article at the end */
	double drain_s;			/* peers' end -> its last needed article */
};
struct feed_sink;
/* Listening and answering in a thread of its own; NULL on failure (said). */
struct feed_sink *feed_sink_start(const char *listen_spec, const char *times_path);
unsigned feed_sink_connections(struct feed_sink *s);
uint64_t feed_sink_articles(struct feed_sink *s);
/* Stops the thread, closes everything, and copies out the counts. */
void feed_sink_stop(struct feed_sink *s, struct feed_sink_stats *st);

/* dpdk.c: the kernel-free transport. */
struct fg_tcp;
struct fg_tcp_app_ops;
struct feed_dp;
struct feed_dp_params {
	const char *port;		/* the EAL's --vdev string */
	const char *const *member;	/* --vdev strings created before it */
	unsigned n_members;
	uint32_t peer;			/* the server, network order, and */
	const uint8_t *peer_mac;	/* its MAC when given (else NULL: ARP) */
	unsigned queues;		/* RX and TX queues (floodgate's workers) */
	uint32_t addr;			/* ours, network order */
};
/* NULL on failure (logged). The TCP instance's app is `ops` / `app`. */
struct feed_dp *feed_dp_open(const struct feed_dp_params *p, const struct fg_tcp_app_ops *ops,
			     void *app, unsigned max_conns);
void feed_dp_close(struct feed_dp *d);
/* Receive on every queue, then TCP's end of burst and timers; the frames
 * received. */
unsigned feed_dp_poll(struct feed_dp *d, uint64_t now_ns);
/* Poll until every connection has ended (its FIN acknowledged), at most
 * max_ns: an exit right after the last close would leave the server's
 * side of it open. */
void feed_dp_linger(struct feed_dp *d, uint64_t max_ns);
struct fg_tcp *feed_dp_tcp(struct feed_dp *d);
uint32_t feed_dp_addr(const struct feed_dp *d);

/* Runs the whole feed; 0, or -errno for a setup failure (socket, memory). */
int feed_run(const struct feed_opts *o, const struct fg_wl *wl, struct fg_wlc *chk,
	     struct feed_result *res);

/* Server CPU seconds (utime+stime+cutime+cstime), < 0 when unreadable. */
double feed_proc_cpu(pid_t pid);
double feed_self_cpu(void);

void feed_report_text(const struct feed_opts *o, const struct fg_wl *wl,
		      const struct fg_wlc *chk, const struct feed_result *r,
		      const struct feed_sink_stats *sink);
void feed_report_json(const struct feed_opts *o, const struct fg_wl *wl,
		      const struct fg_wlc *chk, const struct feed_result *r,
		      const struct feed_sink_stats *sink);

#endif
