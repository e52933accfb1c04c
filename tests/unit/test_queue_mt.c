/* SPDX-License-Identifier: MIT */
/*
 * test_queue_mt.c — the queue under concurrency (also run under TSan):
 * several engine threads, each with its own handle, commit articles while a
 * reader thread follows the durable end the way the relay does (segment
 * lookup, record headers, acknowledgements) and the writer rotates and
 * deletes small segments underneath it. Every article must complete
 * successfully exactly once, every record must be read exactly once, each
 * thread's records in its commit order, and once everything is
 * acknowledged only the current segment may remain.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fgtest.h"
#include "floodgate/datadir.h"
#include "floodgate/qwriter.h"

#define THREADS 3
#define PER_THREAD 1500

static char dir[64];
static struct fg_queue *q;

struct producer {
	unsigned t;
	unsigned done, failed;
	uint64_t next_cookie;
	bool order_ok;
	char art[THREADS * 8][600];
};

static void on_done(void *ctx, uint64_t cookie, int status)
{
	struct producer *p = ctx;

	if (status != 0)
		p->failed++;
	/* one handle's completions come back in commit order */
	if (cookie != p->next_cookie)
		p->order_ok = false;
	p->next_cookie = cookie + 1;
	p->done++;
}

static void *produce(void *arg)
{
	struct producer *p = arg;
	struct fg_queue_sink_params sp = { .max_articles = 64 };
	struct fg_queue_sink *s = fg_queue_sink_create(q, &sp);
	uint64_t until = fg_mono_ns() + 60ull * 1000000000;
	unsigned sent = 0;

	p->order_ok = true;
	while (p->done < PER_THREAD && fg_mono_ns() < until) {
		void *h;
		char id[40];

		fg_queue_sink_ops.poll(s, fg_mono_ns(), on_done, p);
		if (sent == PER_THREAD || fg_queue_sink_ops.full(s)) {
			usleep(100);
			continue;
		}
		snprintf(id, sizeof(id), "<t%u-%u@mt>", p->t, sent);
		/* held pieces must stay put until done: a buffer per slot in flight */
		snprintf(p->art[sent % 24], sizeof(p->art[0]), "Subject: %u %u\r\n\r\n%0*u\r\n", p->t,
			 sent, 100 + sent % 400, sent);
		if (fg_queue_sink_ops.begin(s, id, strlen(id), p->t, &h) != 0)
			continue;
		{
			const char *a = p->art[sent % 24];
			struct fg_iov seg = { (const uint8_t *)a, (uint32_t)strlen(a), NULL };

			fg_queue_sink_ops.append(s, h, &seg, sent % 2);
		}
		fg_queue_sink_ops.commit(s, h, sent);
		sent++;
		/* keep at most 24 in flight so the held buffers are not reused early */
		while (sent - p->done >= 24 && fg_mono_ns() < until) {
			fg_queue_sink_ops.poll(s, fg_mono_ns(), on_done, p);
			usleep(50);
		}
	}
	while (fg_queue_sink_busy(s) && fg_mono_ns() < until) {
		fg_queue_sink_ops.poll(s, fg_mono_ns(), on_done, p);
		usleep(100);
	}
	fg_queue_sink_destroy(s);
	return NULL;
}

struct reader {
	unsigned idx;
	uint64_t read;
	unsigned next[THREADS];
	bool ok;
	char why[320];
};

/* Read the record at *pos like the relay: 1 read, 0 nothing yet, -1 bad. */
static int read_one(struct reader *r, struct fg_queue_cursor *pos)
{
	struct fg_queue_segref sr;
	uint8_t buf[FG_QUEUE_REC_HEADER_MAX + FG_QUEUE_ID_MAX];
	struct fg_queue_rec rec;
	char path[256], id[FG_QUEUE_ID_MAX + 1];
	const char *why;
	unsigned t, n;
	int fd;

	if (fg_queue_segment_at(q, pos->pos, &sr) != 0 || sr.base > pos->pos)
		return 0;
	fg_queue_segment_path(dir, sr.segment, path, sizeof(path));
	fd = open(path, O_RDONLY);
	if (fd < 0 || pread(fd, buf, sizeof(buf), (off_t)(FG_QUEUE_SEG_HEADER + pos->pos - sr.base)) <
			      (ssize_t)FG_QUEUE_REC_HEADER) {
		snprintf(r->why, sizeof(r->why), "read at %llu", (unsigned long long)pos->pos);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	if (fg_queue_rec_header_decode(buf, sizeof(buf), &rec, &why) != 0 ||
	    rec.recno != pos->recno) {
		snprintf(r->why, sizeof(r->why), "record at %llu", (unsigned long long)pos->pos);
		return -1;
	}
	memcpy(id, buf + rec.hdr_len, rec.id_len);
	id[rec.id_len] = '\0';
	if (sscanf(id, "<t%u-%u@mt>", &t, &n) != 2 || t >= THREADS || n != r->next[t]) {
		snprintf(r->why, sizeof(r->why), "%s out of order", id);
		return -1;
	}
	r->next[t]++;
	pos->pos += rec.size;
	pos->recno++;
	return 1;
}

static void *consume(void *arg)
{
	struct reader *r = arg;
	struct fg_queue_cursor pos = { 0, 0 }, durable;
	uint64_t until = fg_mono_ns() + 60ull * 1000000000;

	r->ok = true;
	while (r->read < THREADS * PER_THREAD && fg_mono_ns() < until) {
		int got = 0;

		fg_queue_durable(q, &durable);
		while (pos.pos < durable.pos && (got = read_one(r, &pos)) == 1)
			r->read++;
		if (got < 0) {
			r->ok = false;
			break;
		}
		fg_queue_consumer_ack(q, r->idx, &pos);
		usleep(200);
	}
	return NULL;
}

START_TEST(producers_reader_rotation_deletion)
{
	struct fg_queue_params p = { .commit_ns = 1000000, .segment_bytes = FG_QUEUE_SEGMENT_MIN };
	static struct producer prod[THREADS];
	static struct reader rd;
	struct fg_queue_cursor start, end;
	pthread_t pt[THREADS], ct;
	uint64_t *nums, until;
	size_t nseg;
	int err, idx;

	strcpy(dir, "/tmp/fgq-mt-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	p.dir = dir;
	q = fg_queue_open(&p, NULL, &err);
	ck_assert_ptr_nonnull(q);
	idx = fg_queue_consumer(q, "reader", &start);
	ck_assert_int_eq(idx, 0);
	rd.idx = (unsigned)idx;
	ck_assert_int_eq(fg_queue_start(q), 0);
	for (unsigned i = 0; i < THREADS; i++) {
		prod[i].t = i;
		ck_assert_int_eq(pthread_create(&pt[i], NULL, produce, &prod[i]), 0);
	}
	ck_assert_int_eq(pthread_create(&ct, NULL, consume, &rd), 0);
	for (unsigned i = 0; i < THREADS; i++)
		pthread_join(pt[i], NULL);
	pthread_join(ct, NULL);
	for (unsigned i = 0; i < THREADS; i++) {
		ck_assert_uint_eq(prod[i].done, PER_THREAD);
		ck_assert_uint_eq(prod[i].failed, 0);
		ck_assert(prod[i].order_ok);
	}
	ck_assert_msg(rd.ok, "reader: %s", rd.why);
	ck_assert_uint_eq(rd.read, THREADS * PER_THREAD);
	fg_queue_durable(q, &end);
	ck_assert_uint_eq(end.recno, THREADS * PER_THREAD);
	/* everything acknowledged: only the current segment stays */
	until = fg_mono_ns() + 10ull * 1000000000;
	do {
		usleep(10000);
		ck_assert_int_eq(fg_datadir_list(dir, FG_QUEUE_SEG_PREFIX, FG_QUEUE_SEG_SUFFIX,
						 &nums, &nseg), 0);
		free(nums);
	} while (nseg > 1 && fg_mono_ns() < until);
	ck_assert_uint_eq(nseg, 1);
	fg_queue_stop(q);
	fg_queue_close(q);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		ck_assert_int_eq(system(cmd), 0);
	}
}
END_TEST

static Suite *queue_mt_suite(void)
{
	Suite *s = suite_create("queue_mt");
	TCase *tc = tcase_create("mt");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, producers_reader_rotation_deletion);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(queue_mt_suite)
