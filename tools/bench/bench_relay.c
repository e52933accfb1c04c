/* SPDX-License-Identifier: MIT */
/*
 * bench_relay.c — the outbound queue and the relay, measured.
 *
 *   bench_relay [--quick|--full] [--md FILE] [--dir DIR]
 *
 *  1. Queue write throughput with group commit at the default interval
 *     (10 ms): one engine thread commits articles made of held pieces, as
 *     floodgate-host does (no copy on the engine's thread); the writer
 *     thread checksums, appends and fdatasyncs. GB/s of record octets made
 *     durable, 2 KB and 700 KB articles.
 *  2. What group commit adds to a 239, commit() to done(): under light
 *     load (one article at a time, at random moments) at the default
 *     interval and, for reference, at 0 (a sync per article); under heavy
 *     load (a steady stream with 256 2 KB or 16 700 KB articles in flight,
 *     each replaced as soon as it is answered) at the default interval,
 *     with the articles per fdatasync that the groups reached.
 *  3. Relay to INN's innd (tools/inn/innd.sh, a throwaway instance): the
 *     articles are queued first, then the relay starts and the clock runs
 *     until innd has acknowledged the last one: articles/s and bytes/s.
 *     Next to it, in the same run, innd's own intake of the same number of
 *     articles of the same size from feedgen (TAKETHIS, one connection, the
 *     same window) on a fresh instance.
 *  4. Downstream feeds: relay throughput to one downstream without
 *     patterns against two patterned ones (each its half), and to the live
 *     one of two while the other is parked; the per-article cost of the
 *     routing decision (fg_feeds_select) on the side.
 * The data directory is on the disk the queue would use (default under
 * build/, not /tmp, which may be memory).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/article.h"
#include "floodgate/date.h"
#include "floodgate/feeds.h"
#include "floodgate/log.h"
#include "floodgate/relay.h"
#include "bench_kit.h"

static char datadir[320];
static char database[256];

/* Every stage starts from an empty queue directory of its own. */
static void fresh_dir(void)
{
	char cmd[600];

	if (datadir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", datadir);
		if (system(cmd) != 0)
			exit(1);
	}
	snprintf(datadir, sizeof(datadir), "%s/bench-relay.XXXXXX", database);
	if (!mkdtemp(datadir))
		exit(1);
}

static double now_s(void)
{
	return (double)fg_mono_ns() * 1e-9;
}

static uint64_t now_ns(void)
{
	return (uint64_t)(now_s() * 1e9);
}

static void die(const char *what)
{
	fprintf(stderr, "bench_relay: %s\n", what);
	exit(1);
}

/* An INN-acceptable article of about `size` octets, in wire form, posted
 * to `groups`. */
static size_t make_article_in(char *buf, size_t cap, const char *id, size_t size,
			      const char *groups)
{
	char date[40];
	size_t n;
	static const char line[] =
		"0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwx\r\n";

	fg_date_format(time(NULL) - 60, date, sizeof(date));
	n = (size_t)snprintf(buf, cap,
			     "Path: bench.fg.test!not-for-mail\r\nFrom: bench@fg.test\r\n"
			     "Newsgroups: %s\r\nSubject: relay bench\r\n"
			     "Message-ID: %s\r\nDate: %s\r\n\r\n", groups, id, date);
	while (n + sizeof(line) - 1 <= size && n + sizeof(line) - 1 < cap) {
		memcpy(buf + n, line, sizeof(line) - 1);
		n += sizeof(line) - 1;
	}
	return n;
}

static size_t make_article(char *buf, size_t cap, const char *id, size_t size)
{
	return make_article_in(buf, cap, id, size, "fg.test.text");
}

/* ------------------------------------------------------------ queue */

struct qrun {
	struct fg_queue *q;
	struct fg_queue_sink *s;
	struct fg_stats st;		/* the writer's counters */
	uint64_t done, failed;
	uint64_t *lat;			/* per cookie: commit time, then latency */
};

static void on_done(void *ctx, uint64_t cookie, int status)
{
	struct qrun *r = ctx;

	if (status)
		r->failed++;
	if (r->lat)
		r->lat[cookie] = now_ns() - r->lat[cookie];
	r->done++;
}

/* The queue and one handle; the writer is started unless a relay must
 * register first. */
static void qrun_open(struct qrun *r, uint64_t commit_ns, unsigned max_articles, bool start)
{
	struct fg_queue_params qp = { .dir = datadir, .commit_ns = commit_ns, .stats = &r->st };
	struct fg_queue_sink_params sp = { .max_articles = max_articles };
	int err;

	memset(r, 0, sizeof(*r));
	fresh_dir();
	r->q = fg_queue_open(&qp, NULL, &err);
	if (!r->q)
		die("queue open");
	r->s = fg_queue_sink_create(r->q, &sp);
	if (!r->s || (start && fg_queue_start(r->q) != 0))
		die("queue start");
}

static void qrun_close(struct qrun *r)
{
	fg_queue_stop(r->q);
	fg_queue_sink_destroy(r->s);
	fg_queue_close(r->q);
}

/* Commit one article (held pieces of `piece` octets); false if full. */
static bool commit_one(struct qrun *r, const char *art, size_t len, unsigned piece, uint64_t cookie)
{
	char id[64];
	void *h;

	snprintf(id, sizeof(id), "<q%llu.%d@bench.fg.test>", (unsigned long long)cookie, getpid());
	if (fg_queue_sink_ops.begin(r->s, id, strlen(id), 0, &h) != 0)
		return false;
	for (size_t off = 0; off < len; off += piece) {
		struct fg_iov seg = { (const uint8_t *)art + off,
				      (uint32_t)(len - off < piece ? len - off : piece), NULL };

		fg_queue_sink_ops.append(r->s, h, &seg, true);
	}
	if (r->lat)
		r->lat[cookie] = now_ns();
	fg_queue_sink_ops.commit(r->s, h, cookie);
	return true;
}

struct tput {
	double seconds, gbps, per_s;
	uint64_t commits;
};

static struct tput queue_throughput(size_t size, unsigned n)
{
	static char art[1 << 20];
	size_t len = make_article(art, sizeof(art), "<x@bench.fg.test>", size);
	uint64_t bytes = (uint64_t)n * fg_queue_rec_size(FG_QUEUE_REC_HEADER, 30, len);
	struct fg_stats st = { 0 };
	struct fg_queue_params qp = { .dir = datadir, .commit_ns = 10000000, .stats = &st };
	struct fg_queue_sink_params sp = { .max_articles = 4096 };
	struct qrun r;
	struct tput t;
	unsigned sent = 0;
	double t0;
	int err;

	memset(&r, 0, sizeof(r));
	fresh_dir();
	r.q = fg_queue_open(&qp, NULL, &err);
	r.s = r.q ? fg_queue_sink_create(r.q, &sp) : NULL;
	if (!r.s || fg_queue_start(r.q) != 0)
		die("queue start");
	t0 = now_s();
	while (r.done < n) {
		/* 64 KiB pieces: the host's receive chunks */
		while (sent < n && commit_one(&r, art, len, 65536, sent))
			sent++;
		if (!fg_queue_sink_ops.poll(r.s, now_ns(), on_done, &r))
			usleep(50);
	}
	t.seconds = now_s() - t0;
	t.gbps = (double)bytes / t.seconds / 1e9;
	t.per_s = n / t.seconds;
	t.commits = st.ctr[FG_CTR_QUEUE_COMMITS];
	if (r.failed)
		die("queue writes failed");
	qrun_close(&r);
	return t;
}

/* The disk itself: sequential 1 MiB writes, one fdatasync at the end. */
static double disk_mbps(unsigned mib)
{
	static char buf[1 << 20];
	char path[400];
	double t0;
	int fd;

	fresh_dir();
	snprintf(path, sizeof(path), "%s/disk", datadir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		die("disk probe");
	memset(buf, 'd', sizeof(buf));
	t0 = now_s();
	for (unsigned i = 0; i < mib; i++)
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			die("disk probe write");
	if (fdatasync(fd) != 0)
		die("disk probe sync");
	close(fd);
	unlink(path);
	return mib * 1.048576 / (now_s() - t0);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct lat {
	double p50_ms, p99_ms, mean_ms;
	double per_s;			/* articles answered per second */
	double per_sync;		/* articles per fdatasync */
};

/* n articles of `size` octets, commit() to done(), with `inflight` of them
 * committed and not yet answered at any time: 1 with a random pause
 * after each answer is light load, more is a peer's stream (each answer
 * lets the next article in at once). */
static struct lat commit_latency(uint64_t commit_ns, size_t size, unsigned inflight, unsigned n)
{
	static char art[1 << 20];
	size_t len = make_article(art, sizeof(art), "<x@bench.fg.test>", size);
	unsigned sent = 0;
	struct qrun r;
	struct lat l;
	double sum = 0, t0;

	qrun_open(&r, commit_ns, inflight + 16, true);
	r.lat = calloc(n, sizeof(*r.lat));
	t0 = now_s();
	while (r.done < n) {
		while (sent < n && sent - r.done < inflight)
			commit_one(&r, art, len, 65536, sent++);
		if (!fg_queue_sink_ops.poll(r.s, now_ns(), on_done, &r))
			usleep(20);
		else if (inflight == 1)
			/* arrivals are not in step with the writer */
			usleep((useconds_t)(rand() % 3000));
	}
	l.per_s = n / (now_s() - t0);
	for (unsigned i = 0; i < n; i++)
		sum += (double)r.lat[i];
	qsort(r.lat, n, sizeof(*r.lat), cmp_u64);
	l.p50_ms = (double)r.lat[n / 2] / 1e6;
	l.p99_ms = (double)r.lat[n * 99 / 100] / 1e6;
	l.mean_ms = sum / n / 1e6;
	free(r.lat);
	qrun_close(&r);
	l.per_sync = r.st.ctr[FG_CTR_QUEUE_COMMITS] ? (double)n / r.st.ctr[FG_CTR_QUEUE_COMMITS] : 0;
	if (r.failed)
		die("queue writes failed");
	return l;
}

/* ------------------------------------------------------------ innd */

static uint16_t free_port(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &sl) != 0)
		die("no free port");
	close(fd);
	return ntohs(sin.sin_port);
}

static void innd(const char *verb, const char *dir, uint16_t port, unsigned history)
{
	char cmd[512];

	if (port)
		snprintf(cmd, sizeof(cmd), "tools/inn/innd.sh %s %s %u --history %u >/dev/null",
			 verb, dir, port, history);
	else
		snprintf(cmd, sizeof(cmd), "tools/inn/innd.sh %s %s >/dev/null", verb, dir);
	if (system(cmd) != 0)
		die(cmd);
}

struct relayrun {
	double seconds, per_s, mbps;
	uint64_t accepted;
};

/* The queue r (started) and a relay over it (not yet started: it starts
 * once the articles are durable) to the downstreams conf names; *cfg is
 * the caller's to free. */
static struct fg_relay *relay_open(struct qrun *r, const char *conf, struct fg_relay_params *rp,
				   struct fg_config **cfg)
{
	struct fg_config_errors errs;
	struct fg_relay *rl;
	int err;

	*cfg = fg_config_load_text("bench", conf, strlen(conf), &errs);
	if (!*cfg)
		die("relay config");
	qrun_open(r, 10000000, 4096, false);
	rp->cfg = *cfg;
	rp->q = r->q;
	rl = fg_relay_create(rp, &err);
	if (!rl)
		die("relay create");
	fg_queue_set_notify(r->q, fg_relay_notify, rl);
	if (fg_queue_start(r->q) != 0)
		die("queue start");
	return rl;
}

static struct relayrun relay_to_innd(const char *innd_dir, size_t size, unsigned n)
{
	static char art[1 << 20];
	uint16_t port = free_port();
	struct fg_relay_ds_status st;
	struct fg_queue_cursor end;
	struct fg_relay_params rp = { 0 };
	struct fg_relay *rl;
	struct relayrun out;
	struct fg_config *cfg;
	struct qrun r;
	char conf[256], id[64];
	uint64_t bytes = 0;
	unsigned sent = 0;
	double t0;

	innd("start", innd_dir, port, n * 2 + 1000);
	snprintf(conf, sizeof(conf), "[downstream innd]\naddress 127.0.0.1:%u\nwindow 64\n", port);
	rl = relay_open(&r, conf, &rp, &cfg);
	while (r.done < n) {
		while (sent < n) {
			void *h;
			size_t len;
			struct fg_iov seg;

			snprintf(id, sizeof(id), "<rb%u.%d.%ld@bench.fg.test>", sent, getpid(),
				 (long)time(NULL));
			len = make_article(art, sizeof(art), id, size);
			if (fg_queue_sink_ops.begin(r.s, id, strlen(id), 0, &h) != 0)
				break;
			seg = (struct fg_iov){ (const uint8_t *)art, (uint32_t)len, NULL };
			fg_queue_sink_ops.append(r.s, h, &seg, false);
			fg_queue_sink_ops.commit(r.s, h, sent);
			bytes += len;
			sent++;
		}
		if (!fg_queue_sink_ops.poll(r.s, now_ns(), on_done, &r))
			usleep(100);
	}
	fg_queue_durable(r.q, &end);
	t0 = now_s();
	if (fg_relay_start(rl) != 0)
		die("relay start");
	do {
		usleep(1000);
		fg_relay_status(rl, 0, &st);
	} while (st.acked.recno < end.recno && now_s() - t0 < 900);
	out.seconds = now_s() - t0;
	out.per_s = n / out.seconds;
	out.mbps = (double)bytes / out.seconds / 1e6;
	out.accepted = st.accepted;
	fg_relay_stop(rl);
	qrun_close(&r);
	fg_relay_destroy(rl);
	fg_config_free(cfg);
	innd("stop", innd_dir, 0, 0);
	return out;
}

/* feedgen's TAKETHIS intake on a fresh innd: articles/s and MB/s. */
static struct relayrun feedgen_to_innd(const char *innd_dir, size_t size, unsigned n)
{
	uint16_t port = free_port();
	struct relayrun out = { 0 };
	char cmd[512], json[8192], *p;
	size_t len;
	FILE *f;

	innd("start", innd_dir, port, n * 2 + 1000);
	snprintf(cmd, sizeof(cmd),
		 "build/release/bin/feedgen --host 127.0.0.1 --port %u --mode takethis --peers 1 "
		 "--conns 1 --dups 1 --articles %u --size %zuK --window 64 --seed 42 --cutoff 10d "
		 "--no-progress --json --timeout 600 --id-prefix relaybench%d", port, n, size / 1024,
		 getpid());
	f = popen(cmd, "r");
	len = f ? fread(json, 1, sizeof(json) - 1, f) : 0;
	if (f)
		pclose(f);
	json[len] = '\0';
	innd("stop", innd_dir, 0, 0);
	if ((p = strstr(json, "\"articles_per_s\":")))
		out.per_s = strtod(p + 17, NULL);
	if ((p = strstr(json, "\"bytes_per_s\":")))
		out.mbps = strtod(p + 14, NULL) / 1e6;
	if ((p = strstr(json, "\"accepted\":")))
		out.accepted = strtoull(p + 11, NULL, 10);
	if (out.per_s <= 0)
		die("feedgen gave no rate");
	out.seconds = n / out.per_s;
	return out;
}

/* ------------------------------------------------------------ main */

/* ------------------------------------------------------------ feeds */

/*
 * A downstream that takes everything at once (greeting, CAPABILITIES with
 * STREAMING, MODE STREAM, TAKETHIS read to its end and answered 239), so
 * that the figures below are the relay's and the feeds', not a server's.
 * A thread per connection; it stops when its listening socket is closed.
 */
struct nullsrv {
	int lfd;
	uint16_t port;
	pthread_t th;
};

static void null_say(int fd, const char *s)
{
	if (write(fd, s, strlen(s)) < 0)
		return;
}

static void *null_conn(void *arg)
{
	int fd = (int)(intptr_t)arg;
	static __thread char buf[1 << 16];
	size_t len = 0;
	bool in_article = false;
	char id[300], line[400];

	null_say(fd, "200 null server\r\n");
	for (;;) {
		char *nl;
		ssize_t n = read(fd, buf + len, sizeof(buf) - len);

		if (n <= 0)
			break;
		len += (size_t)n;
		while ((nl = memchr(buf, '\n', len)) != NULL) {
			size_t l = (size_t)(nl - buf) + 1;

			if (in_article) {
				if (l == 3 && buf[0] == '.') {
					snprintf(line, sizeof(line), "239 %s\r\n", id);
					null_say(fd, line);
					in_article = false;
				}
			} else if (sscanf(buf, "TAKETHIS %299s", id) == 1) {
				in_article = true;
			} else if (strncmp(buf, "CAPABILITIES", 12) == 0) {
				null_say(fd, "101 caps\r\nVERSION 2\r\nIHAVE\r\nSTREAMING\r\n.\r\n");
			} else if (strncmp(buf, "MODE STREAM", 11) == 0) {
				null_say(fd, "203 streaming\r\n");
			} else if (strncmp(buf, "QUIT", 4) == 0) {
				null_say(fd, "205 bye\r\n");
			} else if (sscanf(buf, "CHECK %299s", id) == 1) {
				snprintf(line, sizeof(line), "238 %s\r\n", id);
				null_say(fd, line);
			}
			memmove(buf, buf + l, len - l);
			len -= l;
		}
		if (len == sizeof(buf))
			len = 0;	/* a line longer than the buffer: article body */
	}
	close(fd);
	return NULL;
}

static void *null_main(void *arg)
{
	struct nullsrv *s = arg;

	for (;;) {
		pthread_t t;
		int fd = accept(s->lfd, NULL, NULL);

		if (fd < 0)
			break;
		if (pthread_create(&t, NULL, null_conn, (void *)(intptr_t)fd) != 0)
			close(fd);
		else
			pthread_detach(t);
	}
	return NULL;
}

static void null_start(struct nullsrv *s)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sin);
	int one = 1;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s->lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
	    listen(s->lfd, 16) != 0 || getsockname(s->lfd, (struct sockaddr *)&sin, &sl) != 0 ||
	    pthread_create(&s->th, NULL, null_main, s) != 0)
		die("null server");
	s->port = ntohs(sin.sin_port);
}

static void null_stop(struct nullsrv *s)
{
	shutdown(s->lfd, SHUT_RDWR);
	close(s->lfd);
	pthread_join(s->th, NULL);
}

enum feeds_case { FEEDS_ONE = 0, FEEDS_TWO, FEEDS_PARKED };

struct feedsrun {
	double per_s, mbps;		/* what the fed downstreams acknowledged */
	double select_ns;		/* fg_feeds_select per article */
	bool parked;			/* FEEDS_PARKED: the other was parked */
};

/* fg_feeds_select for cfg on two scanned articles in turn (one of each
 * half), in a loop long enough that the clock's own cost vanishes: ns per
 * article. */
static double select_ns(const struct fg_config *cfg)
{
	enum { ROUNDS = 1000000 };
	static char art[2][4096];
	struct fg_article scan[2];
	struct fg_feeds_set route;
	unsigned sent = 0;
	double t0;

	for (unsigned i = 0; i < 2; i++) {
		size_t len = make_article_in(art[i], sizeof(art[i]), "<sel@bench.fg.test>", 2048,
					     i ? "comp.lang.c" : "alt.binaries.pictures");

		fg_article_init(&scan[i], FG_ARTICLE_WIRE);
		fg_article_scan(&scan[i], art[i], len);
	}
	t0 = now_s();
	for (unsigned i = 0; i < ROUNDS; i++)
		sent += fg_feeds_select(cfg, &scan[i & 1], 2048, &route, NULL);
	if (sent == 0)
		die("no article routed");
	return (now_s() - t0) / ROUNDS * 1e9;
}

/*
 * Relay throughput with downstream feeds: `n` 2 KB articles, half posted
 * to alt.binaries.pictures, half to comp.lang.c, each routed at queue time
 * by fg_feeds_select (timed apart, select_ns: the per-article pattern cost), queued,
 * then relayed until every fed downstream has acknowledged all of it.
 *   ONE     one downstream, no patterns (newsgroups *): every article;
 *   TWO     binaries (alt.binaries.*) and text (*,!alt.binaries.*), each
 *           its half (the figure counts both halves);
 *   PARKED  TWO, with text's server away and text parked past its
 *           backlog limit: binaries' half.
 */
static struct feedsrun feeds_relay(enum feeds_case c, unsigned n)
{
	static char art[4096];
	struct nullsrv a, b = { .lfd = -1 };
	struct fg_relay_params rp = { .reconnect_min_ns = 1000000000ull };
	struct fg_relay_ds_status st;
	struct fg_queue_cursor end;
	struct fg_feeds_set route;
	struct feedsrun out = { 0 };
	struct fg_config *cfg;
	struct fg_relay *rl;
	struct qrun r;
	struct fg_article scan;
	char conf[512], id[64];
	uint64_t bytes = 0, fed_bytes = 0;
	unsigned sent = 0, fed = 0, nds;
	double t0;

	null_start(&a);
	if (c == FEEDS_TWO)
		null_start(&b);
	if (c == FEEDS_ONE)
		snprintf(conf, sizeof(conf), "[downstream all]\naddress 127.0.0.1:%u\nwindow 64\n",
			 a.port);
	else
		snprintf(conf, sizeof(conf), "[downstream binaries]\naddress 127.0.0.1:%u\n"
			 "window 64\nnewsgroups alt.binaries.*\nbacklog-bytes 0\n[downstream text]\n"
			 "address 127.0.0.1:%u\nwindow 64\nnewsgroups *,!alt.binaries.*\n%s",
			 a.port, c == FEEDS_TWO ? b.port : free_port(),
			 c == FEEDS_PARKED ? "backlog-articles 1000\n" : "backlog-bytes 0\n");
	nds = c == FEEDS_ONE ? 1 : 2;
	rl = relay_open(&r, conf, &rp, &cfg);
	while (r.done < n) {
		while (sent < n) {
			struct fg_iov seg;
			size_t len;
			void *h;

			snprintf(id, sizeof(id), "<fb%u.%d@bench.fg.test>", sent, getpid());
			len = make_article_in(art, sizeof(art), id, 2048,
					      sent % 2 ? "comp.lang.c" : "alt.binaries.pictures");
			if (fg_queue_sink_ops.begin(r.s, id, strlen(id), 0, &h) != 0)
				break;
			fg_article_init(&scan, FG_ARTICLE_WIRE);
			fg_article_scan(&scan, art, len);
			fg_feeds_select(cfg, &scan, len, &route, NULL);
			seg = (struct fg_iov){ (const uint8_t *)art, (uint32_t)len, NULL };
			fg_queue_sink_ops.append(r.s, h, &seg, false);
			fg_queue_sink_ops.route(r.s, h, &route);
			fg_queue_sink_ops.commit(r.s, h, sent);
			bytes += len;
			if (c != FEEDS_PARKED || sent % 2 == 0) {
				fed++;
				fed_bytes += len;
			}
			sent++;
		}
		if (!fg_queue_sink_ops.poll(r.s, now_ns(), on_done, &r))
			usleep(100);
	}
	out.select_ns = select_ns(cfg);
	fg_queue_durable(r.q, &end);
	t0 = now_s();
	if (fg_relay_start(rl) != 0)
		die("relay start");
	for (;;) {
		bool all = true;

		usleep(1000);
		for (unsigned d = 0; d < nds; d++) {
			fg_relay_status(rl, d, &st);
			if (c == FEEDS_PARKED && d == 1) {
				out.parked = st.q.parked;
				continue;
			}
			all &= st.acked.recno >= end.recno;
		}
		if (all || now_s() - t0 > 900)
			break;
	}
	out.per_s = fed / (now_s() - t0);
	out.mbps = (double)fed_bytes / (now_s() - t0) / 1e6;
	if (c == FEEDS_PARKED) {
		/* parking is judged by the writer's housekeeping: wait for it */
		for (unsigned i = 0; i < 50 && !out.parked; i++) {
			usleep(100000);
			fg_relay_status(rl, 1, &st);
			out.parked = st.q.parked;
		}
	}
	fg_relay_stop(rl);
	qrun_close(&r);
	fg_relay_destroy(rl);
	fg_config_free(cfg);
	null_stop(&a);
	if (b.lfd >= 0)
		null_stop(&b);
	(void)bytes;
	return out;
}

struct figures {
	double disk;
	struct tput q2k, q700k;
	struct lat l10, l0, heavy2k, heavy700k;
	struct relayrun r2k, f2k, r700k, f700k;
	struct feedsrun one, two, parked;
	unsigned nfeeds;
	bool big;
	unsigned nq2k, nq700k, nr2k, nr700k, nlat, nheavy2k, nheavy700k;
};

static void report(FILE *f, const struct figures *g, const char *mode, double load, bool md)
{
	const char *row = md ? "| %s | %s |\n" : "  %-58s %s\n";
	char v[160];

	if (md)
		fprintf(f, "### Outbound queue and relay (`bench_relay`)\n\n"
			"One engine thread, one writer thread, one relay thread; `--%s`, load average "
			"%.2f when it started (a shared 2-core machine: other jobs slow every figure). "
			"The queue writes to the root disk (virtio), the same one innd uses.\n\n"
			"| what | figure |\n| --- | --- |\n", mode, load);
	else
		fprintf(f, "bench_relay (%s), load average %.2f\n", mode, load);
	snprintf(v, sizeof(v), "%.2f GB/s", g->disk / 1e3);
	fprintf(f, row, "the disk: sequential 1 MiB writes, then one fdatasync", v);
	snprintf(v, sizeof(v), "%.2f GB/s, %.0f articles/s, %llu fdatasyncs", g->q2k.gbps, g->q2k.per_s,
		 (unsigned long long)g->q2k.commits);
	fprintf(f, row, "queue write, 2 KB articles, commit 10 ms", v);
	snprintf(v, sizeof(v), "%.2f GB/s, %.0f articles/s, %llu fdatasyncs", g->q700k.gbps,
		 g->q700k.per_s, (unsigned long long)g->q700k.commits);
	fprintf(f, row, "queue write, 700 KB articles, commit 10 ms", v);
	snprintf(v, sizeof(v), "p50 %.2f ms, p99 %.2f ms, mean %.2f ms", g->l10.p50_ms, g->l10.p99_ms,
		 g->l10.mean_ms);
	fprintf(f, row, "added latency of a 239, light load, commit 10 ms (default)", v);
	snprintf(v, sizeof(v), "p50 %.2f ms, p99 %.2f ms, mean %.2f ms", g->l0.p50_ms, g->l0.p99_ms,
		 g->l0.mean_ms);
	fprintf(f, row, "added latency of a 239, light load, commit 0 (a sync per article)", v);
	snprintf(v, sizeof(v), "p50 %.2f ms, p99 %.2f ms; %.0f articles/s, %.1f per fdatasync",
		 g->heavy2k.p50_ms, g->heavy2k.p99_ms, g->heavy2k.per_s, g->heavy2k.per_sync);
	fprintf(f, row, "added latency of a 239, heavy load: 256 2 KB articles in flight, "
		"commit 10 ms", v);
	snprintf(v, sizeof(v), "p50 %.2f ms, p99 %.2f ms; %.0f articles/s, %.1f per fdatasync",
		 g->heavy700k.p50_ms, g->heavy700k.p99_ms, g->heavy700k.per_s,
		 g->heavy700k.per_sync);
	fprintf(f, row, "added latency of a 239, heavy load: 16 700 KB articles in flight, "
		"commit 10 ms", v);
	snprintf(v, sizeof(v), "%.0f articles/s, %.1f MB/s (%llu of %u accepted)", g->r2k.per_s,
		 g->r2k.mbps, (unsigned long long)g->r2k.accepted, g->nr2k);
	fprintf(f, row, "relay to innd, 2 KB articles, 1 connection, window 64", v);
	snprintf(v, sizeof(v), "%.0f articles/s, %.1f MB/s", g->f2k.per_s, g->f2k.mbps);
	fprintf(f, row, "innd's intake from feedgen, 2 KB, same run", v);
	if (g->big) {
		snprintf(v, sizeof(v), "%.0f articles/s, %.1f MB/s (%llu of %u accepted)",
			 g->r700k.per_s, g->r700k.mbps, (unsigned long long)g->r700k.accepted,
			 g->nr700k);
		fprintf(f, row, "relay to innd, 700 KB articles", v);
		snprintf(v, sizeof(v), "%.0f articles/s, %.1f MB/s", g->f700k.per_s, g->f700k.mbps);
		fprintf(f, row, "innd's intake from feedgen, 700 KB, same run", v);
	}
	snprintf(v, sizeof(v), "%.0f articles/s, %.1f MB/s; routing %.0f ns/article",
		 g->one.per_s, g->one.mbps, g->one.select_ns);
	fprintf(f, row, "feeds: one downstream, no patterns (null server)", v);
	snprintf(v, sizeof(v), "%.0f articles/s, %.1f MB/s; routing %.0f ns/article",
		 g->two.per_s, g->two.mbps, g->two.select_ns);
	fprintf(f, row, "feeds: two patterned downstreams, half each", v);
	snprintf(v, sizeof(v), "%.0f articles/s, %.1f MB/s (the other %s)", g->parked.per_s,
		 g->parked.mbps, g->parked.parked ? "parked" : "NOT parked");
	fprintf(f, row, "feeds: the live one of two while the other is down", v);
	if (md)
		fprintf(f, "\nFeeds: %u articles of 2 KB, half to alt.binaries.pictures, half to "
			"comp.lang.c, routed at queue time (the ns/article is fg_feeds_select alone, a "
			"million calls on two scanned headers), "
			"then relayed to in-process servers that answer 239 at once, one connection "
			"each, window 64: the relay's own rate. Two downstreams read every record and "
			"pass over the other's half; the figure counts what the fed downstreams "
			"acknowledged.\n", g->nfeeds);
	if (md)
		fprintf(f, "\nQueue: %u and %u articles; latency: light load %u 2 KB articles one "
			"at a time, each after a random pause of up to 3 ms, heavy load %u and %u "
			"articles; relay: %u articles%s queued before the relay starts. The added "
			"latency of a 239 is the time from the engine's commit() to its done(): the "
			"writer's wake-up, the append, the fdatasync and the completion's way back. "
			"feedgen's workload has a few per cent of articles innd refuses (too old, "
			"dated ahead, bad IDs): its rate counts every article sent.\n",
			g->nq2k, g->nq700k, g->nlat, g->nheavy2k, g->nheavy700k, g->nr2k,
			g->big ? " (and the 700 KB run's)" : "");
	/* for report.py: the queue writer's own bound, put beside the 700 KB
	 * memif null-sink figure (docs/benchmarks.md, busy cycles) */
	if (md)
		fprintf(f, "\n<!-- fg-figure queue_write_700k_gbps=%.4f disk_gbps=%.4f -->\n",
			g->q700k.gbps, g->disk / 1e3);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "full", no_argument, NULL, 'f' },
		{ "md", required_argument, NULL, 'm' },
		{ "dir", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	const char *md = NULL, *mode = "quick", *base = "build";
	struct figures g = { .nq2k = 50000, .nq700k = 300, .nr2k = 20000, .nr700k = 300,
			     .nlat = 200, .nheavy2k = 20000, .nheavy700k = 300, .nfeeds = 20000 };
	char innd_dir[300], cmd[600];
	double load = bench_load_average();
	int o;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (o == 'q') {
			mode = "quick";
		} else if (o == 'f') {
			mode = "full";
			g.nq2k = 500000, g.nq700k = 3000, g.nr2k = 100000, g.big = true;
			g.nheavy2k = 200000, g.nheavy700k = 3000, g.nfeeds = 200000;
		} else if (o == 'm') {
			md = optarg;
		} else if (o == 'd') {
			base = optarg;
		} else {
			fprintf(stderr, "usage: bench_relay [--quick|--full] [--md FILE] [--dir DIR]\n");
			return 2;
		}
	}
	fg_log_set_level(FG_LOG_WARN);
	snprintf(database, sizeof(database), "%s", base);
	strcpy(innd_dir, "/tmp/fg-bench-relay.XXXXXX");
	if (!mkdtemp(innd_dir) || chmod(innd_dir, 0755) != 0)
		die("mkdtemp");
	strcat(innd_dir, "/innd");
	g.disk = disk_mbps(g.big ? 1024 : 256);
	g.q2k = queue_throughput(2048, g.nq2k);
	g.q700k = queue_throughput(700 * 1024, g.nq700k);
	g.l10 = commit_latency(10000000, 2048, 1, g.nlat);
	g.l0 = commit_latency(0, 2048, 1, g.nlat);
	g.heavy2k = commit_latency(10000000, 2048, 256, g.nheavy2k);
	g.heavy700k = commit_latency(10000000, 700 * 1024, 16, g.nheavy700k);
	g.r2k = relay_to_innd(innd_dir, 2048, g.nr2k);
	g.f2k = feedgen_to_innd(innd_dir, 2048, g.nr2k);
	if (g.big) {
		g.r700k = relay_to_innd(innd_dir, 700 * 1024, g.nr700k);
		g.f700k = feedgen_to_innd(innd_dir, 700 * 1024, g.nr700k);
	}
	g.one = feeds_relay(FEEDS_ONE, g.nfeeds);
	g.two = feeds_relay(FEEDS_TWO, g.nfeeds);
	g.parked = feeds_relay(FEEDS_PARKED, g.nfeeds);
	report(stdout, &g, mode, load, false);
	if (md) {
		FILE *f = fopen(md, "w");

		if (!f) {
			perror(md);
			return 1;
		}
		report(f, &g, mode, load, true);
		fclose(f);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s %.*s", datadir, (int)(strlen(innd_dir) - 5), innd_dir);
	return system(cmd) == 0 ? 0 : 1;
}
