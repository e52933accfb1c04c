/* SPDX-License-Identifier: MIT */
/*
 * stack.c — what fg-taphost runs behind its TAP device: the modules of one
 * DPDK worker core, wired as dataplane/dpdk/worker.c wires them, with the
 * memory port (memport) in place of a NIC queue:
 *
 *   frames -> fg_net (Ethernet, ARP, ICMP, IPv4) -> fg_tcp -> fg_tcpsess
 *          -> fg_nntp_engine (NNTP sessions, rules) -> history + sink
 *
 * The history is private memory (an anonymous mapping sized by the
 * config's [history] capacity), as in the dataplane's passive mode: no
 * floodctld, no journal. The sink is the in-memory one in hold mode (the
 * engine holds article segments through tcpsess, so they count against
 * the connection's window; nothing is stored), or the null sink (copies
 * nothing; for articles larger than the receive window, which a holding
 * sink could never complete: the held octets would close the window for
 * good). The sink and the engine are built by the wiring (wiring.h), as
 * the dataplane's workers build theirs. One counter block takes every
 * module's counters.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/log.h"
#include "taphost.h"

static int history_create(struct th *t)
{
	struct fg_history_params hp = { 0 };

	hp.capacity = t->cfg->history_capacity;
	hp.side_capacity = t->cfg->version_numbers ? 65536 : 0;
	hp.full_policy = t->cfg->full_policy;
	hp.alarm_load_pct = t->cfg->alarm_load_pct;
	hp.now = time(NULL);
	t->hist_len = fg_history_region_size(hp.capacity, hp.side_capacity);
	if (!t->hist_len || fg_history_seed_random(hp.seed) != 0)
		return -EINVAL;
	t->hist_mem = mmap(NULL, t->hist_len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t->hist_mem == MAP_FAILED) {
		t->hist_mem = NULL;
		return -errno;
	}
	t->history = fg_history_create(t->hist_mem, t->hist_len, &hp);
	return t->history ? 0 : -EINVAL;
}

/* The sink (memory in hold mode, or null) and the engine, without a
 * writer slot (wiring.h). */
static int engine_create(struct th *t)
{
	struct fg_wiring_params wp = { 0 };
	uint32_t token;
	int err;

	if (getrandom(&token, sizeof(token), 0) != sizeof(token))
		token = (uint32_t)getpid();
	wp.sink = t->o.null_sink ? FG_WIRING_SINK_NULL : FG_WIRING_SINK_MEMORY;
	wp.mem.hold = true;
	wp.log_comp = TH_COMP;
	wp.log_who = "stack";
	wp.engine.cfg = t->cfg;
	wp.engine.history = t->history;
	wp.engine.stats = t->stats;
	wp.engine.max_sessions = t->o.tcp.max_conns;
	/* as the dataplane's quota: holds never take more than a quarter
	 * of the buffers, beyond that the sink copies */
	wp.engine.max_holds = FG_MAX(t->o.bufs / 4, 64u);
	wp.engine.token_base = token;
	t->wire = fg_wiring_build(&wp, &err);
	t->e = t->wire ? fg_wiring_engine(t->wire) : NULL;
	return t->wire ? 0 : err;
}

static void tap_sink(void *arg, const uint8_t *frame, uint32_t len, uint32_t flags)
{
	struct th *t = arg;

	(void)flags;
	if (write(t->fd, frame, len) != (ssize_t)len)
		t->tap_write_fail++;
}

static int net_create(struct th *t)
{
	struct fg_tcp_config tc = t->o.tcp;
	struct fg_tcpsess_params sp = { 0 };
	uint64_t secret[2];

	if (getrandom(secret, sizeof(secret), 0) != sizeof(secret))
		return -EIO;
	t->o.net.hash_seed = secret[0];
	tc.secret = secret[1];
	tc.n_listen = 0;
	for (unsigned i = 0; i < t->cfg->n_listen && tc.n_listen < FG_TCP_MAX_LISTEN; i++)
		if (t->cfg->listen[i].family == AF_INET)	/* the stack speaks IPv4 */
			tc.listen[tc.n_listen++] = t->cfg->listen[i];
	if (!tc.n_listen) {
		FG_LOG_ERR(TH_COMP, "%s: no IPv4 [site] listen address", t->o.config);
		return -EINVAL;
	}
	t->mp = fg_memport_create(t->o.bufs, 2048, tap_sink, t);
	t->net = t->mp ? fg_net_create(&t->o.net, fg_memport_ops(), t->mp, &t->stats->s) : NULL;
	if (!t->net || fg_net_set_faults(t->net, &t->o.faults) < 0)
		return -EINVAL;
	sp.net = t->net;
	sp.engine = t->e;
	sp.cfg = t->cfg;
	sp.stats = &t->stats->s;
	/* TCP connections plus sessions still finishing after their close */
	sp.max_conns = 2 * tc.max_conns;
	t->ts = fg_tcpsess_create(&sp);
	t->tcp = t->ts ? fg_tcp_create(t->net, &tc, &fg_tcpsess_app_ops, t->ts) : NULL;
	return t->tcp ? 0 : -EINVAL;
}

int th_stack_create(struct th *t)
{
	struct fg_config_errors errs;
	int rc;

	memset(&errs, 0, sizeof(errs));
	t->cfg = fg_config_load_file(t->o.config, &errs);
	fg_config_errors_log(&errs);
	if (!t->cfg)
		return -EINVAL;
	if (!t->o.tcp.max_conns)
		t->o.tcp.max_conns = 4096;
	t->stats = aligned_alloc(FG_CACHE_LINE, sizeof(*t->stats));
	if (!t->stats)
		return -ENOMEM;
	memset(t->stats, 0, sizeof(*t->stats));
	rc = history_create(t);
	if (rc == 0)
		rc = engine_create(t);
	if (rc == 0)
		rc = net_create(t);
	if (rc != 0)
		FG_LOG_ERR(TH_COMP, "cannot set up the modules: %s", strerror(-rc));
	return rc;
}

/* In the reverse order of creation; every connection must be gone (the
 * caller's shutdown aborts what is left). */
void th_stack_destroy(struct th *t)
{
	fg_tcp_destroy(t->tcp);
	fg_tcpsess_destroy(t->ts);
	fg_net_destroy(t->net);
	fg_memport_destroy(t->mp);
	fg_wiring_destroy(t->wire);
	if (t->history)
		fg_history_detach(t->history);
	if (t->hist_mem)
		munmap(t->hist_mem, t->hist_len);
	free(t->stats);
	fg_config_free(t->cfg);
}

/* ------------------------------------------------------------ counters */

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

static void write_engine(FILE *f, const struct th *t)
{
	const struct fg_nntp_counters *c = t->stats;
	struct fg_history_stats hs;
	struct fg_sink_mem_stats ms;

	for (unsigned i = 0; i < FG_CTR__COUNT; i++)
		fprintf(f, "%s %lu\n", fg_counter_name(i), c->s.ctr[i]);
	for (unsigned i = 1; i < FG_REASON__COUNT; i++)
		fprintf(f, "rejected:%s %lu\n", fg_reason_name(i), c->s.rejected[i]);
	for (unsigned i = 0; i < FG_NNTP_VERB__COUNT; i++)
		fprintf(f, "nntp_command:%s %lu\n", fg_nntp_verb_name(i), c->n.verb[i]);
	for (unsigned i = 0; i < FG_NNTP_CODE__COUNT; i++)
		fprintf(f, "nntp_response:%u %lu\n", fg_nntp_code_number(i), c->n.code[i]);
	fg_history_stats(t->history, &hs);
	fprintf(f, "history_entries %lu\n", hs.entries);
	for (unsigned i = FG_HISTORY_OFFERED; i < FG_HISTORY_STATE__COUNT; i++)
		fprintf(f, "history_state:%s %lu\n", fg_history_state_name(i), hs.by_state[i]);
	fprintf(f, "sessions_open %u\ntransfers_open %u\nconnections %u\n",
		fg_nntp_engine_sessions(t->e), fg_nntp_engine_xfers(t->e), fg_tcpsess_in_use(t->ts));
	if (fg_wiring_sink_mem_stats(t->wire, &ms))
		fprintf(f, "sink_begun %lu\nsink_holds %lu\nsink_copies %lu\nsink_succeeded %lu\n"
			   "sink_discarded %lu\nsink_open %u\nsink_in_flight %u\n",
			ms.begun, ms.holds, ms.copies, ms.succeeded, ms.discarded, ms.open,
			ms.in_flight);
}

void th_write_counters(FILE *f, const struct th *t)
{
	write_engine(f, t);
	fprintf(f, "taphost_bufs_in_use %u\ntaphost_bufs_capacity %u\n"
		   "taphost_buf_alloc_fail %lu\ntaphost_tap_write_fail %lu\n"
		   "taphost_tap_reads %lu\ntaphost_conns_in_use %u\ntaphost_segs_in_use %u\n"
		   "taphost_rss_kb %ld\n",
		fg_memport_in_use(t->mp), fg_memport_capacity(t->mp),
		fg_memport_alloc_failures(t->mp), t->tap_write_fail, t->tap_reads,
		fg_tcp_conns_in_use(t->tcp), fg_tcp_segs_in_use(t->tcp), rss_kb());
}
