/* SPDX-License-Identifier: MIT */
/*
 * test_startup.c — the start-up steps floodgate and floodgate-host share
 * (dataplane/startup), driven without DPDK or sockets: --sink's three
 * names and nothing else; the configuration from a file, the embedded
 * default, or refused with its error logged, and the sink it implies; the
 * signal set and SIGPIPE ignored; a private history table that takes
 * inserts and is undone; the cluster client with and without [cluster],
 * its writer slot in a region (refused and logged when none is free,
 * released at close), its publication paced; a file replaced whole, and a
 * directory that is not there refused and logged.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl_fixture.h"
#include "fgtest.h"
#include "floodgate/log.h"
#include "floodgate/startup.h"

/* A [cluster] the client is built for; nothing listens (never started). */
#define CLUSTER_CONF "[cluster]\nseeds 127.0.0.1:1\nsecret s\nbox b\n"
#define DOWNSTREAM_CONF "[downstream d]\naddress 127.0.0.1\nnewsgroups *\n"

static struct fg_config *config_text(const char *text)
{
	struct fg_config_errors errs;
	struct fg_config *cfg = fg_config_load_text("t.conf", text, strlen(text), &errs);

	ck_assert_msg(cfg != NULL, "config: %s", errs.n ? errs.err[0].text : "?");
	return cfg;
}

/* A file under a fresh directory with this text; the path into buf. */
static const char *config_file(struct ctl_fixture *fx, char *buf, size_t len, const char *text)
{
	FILE *f;

	snprintf(buf, len, "%s/floodgate.conf", fx_dir(fx));
	f = fopen(buf, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	return buf;
}

START_TEST(test_parse_sink)
{
	static const char *bad[] = { "Queue", "", "queue ", "mem", "nul" };
	enum fg_wiring_sink s = FG_WIRING_SINK_NULL;

	ck_assert_int_eq(fg_startup_parse_sink("queue", &s), 0);
	ck_assert_int_eq(s, FG_WIRING_SINK_QUEUE);
	ck_assert_int_eq(fg_startup_parse_sink("memory", &s), 0);
	ck_assert_int_eq(s, FG_WIRING_SINK_MEMORY);
	ck_assert_int_eq(fg_startup_parse_sink("null", &s), 0);
	ck_assert_int_eq(s, FG_WIRING_SINK_NULL);
	for (unsigned i = 0; i < FG_ARRAY_SIZE(bad); i++) {
		s = FG_WIRING_SINK_MEMORY;
		ck_assert_int_eq(fg_startup_parse_sink(bad[i], &s), -EINVAL);
		ck_assert_int_eq(s, FG_WIRING_SINK_MEMORY);	/* left as it was */
	}
	ck_assert_int_eq(fg_startup_parse_sink(NULL, &s), -EINVAL);
}
END_TEST

START_TEST(test_parse_log_level)
{
	int lvl = -7;

	ck_assert_int_eq(fg_startup_parse_log_level("debug", &lvl), 0);
	ck_assert_int_eq(lvl, FG_LOG_DEBUG);
	ck_assert_int_eq(fg_startup_parse_log_level("err", &lvl), 0);
	ck_assert_int_eq(lvl, FG_LOG_ERR);
	ck_assert_int_eq(fg_startup_parse_log_level("loud", &lvl), -EINVAL);
	ck_assert_int_eq(lvl, FG_LOG_ERR);	/* left as it was */
	ck_assert_int_eq(fg_startup_parse_log_level(NULL, &lvl), -EINVAL);
	ck_assert_int_eq(lvl, FG_LOG_ERR);
}
END_TEST

START_TEST(test_config_default_and_file)
{
	struct ctl_fixture fx = { 0 };
	char path[256];
	struct fg_config *def = fg_startup_config_load(NULL, "test-startup");
	struct fg_config *cfg;

	ck_assert_ptr_nonnull(def);
	cfg = fg_startup_config_load(config_file(&fx, path, sizeof(path),
						 "[history]\ncapacity 5000\n" DOWNSTREAM_CONF),
				     "test-startup");
	ck_assert_ptr_nonnull(cfg);
	/* the file's value, not the default's */
	ck_assert_uint_eq(cfg->history_capacity, 5000);
	ck_assert_uint_ne(def->history_capacity, 5000);
	ck_assert_uint_eq(cfg->n_downstream, 1);
	fg_config_free(cfg);
	fg_config_free(def);
	fx_cleanup(&fx);
}
END_TEST

START_TEST(test_config_refused_is_logged)
{
	struct ctl_fixture fx = { 0 };
	struct fg_test_logcap cap;
	char path[256];
	struct fg_config *cfg;

	fg_test_logcap_start(&cap);
	cfg = fg_startup_config_load(config_file(&fx, path, sizeof(path),
						 "[history]\nno-such-key 1\n"),
				     "test-startup");
	fg_test_logcap_stop();
	ck_assert_ptr_null(cfg);
	ck_assert_msg(fg_test_logcap_has(&cap, "no-such-key"), "logged: %s", cap.text);
	/* a file that is not there either */
	fg_test_logcap_start(&cap);
	cfg = fg_startup_config_load("/nonexistent/floodgate.conf", "test-startup");
	fg_test_logcap_stop();
	ck_assert_ptr_null(cfg);
	ck_assert_msg(cap.lines > 0, "nothing logged");
	fx_cleanup(&fx);
}
END_TEST

START_TEST(test_default_sink)
{
	struct fg_config *plain = config_text("[history]\ncapacity 1000\n");
	struct fg_config *relaying = config_text(DOWNSTREAM_CONF);

	ck_assert_int_eq(fg_startup_default_sink(plain, true), FG_WIRING_SINK_MEMORY);
	ck_assert_int_eq(fg_startup_default_sink(plain, false), FG_WIRING_SINK_MEMORY);
	ck_assert_int_eq(fg_startup_default_sink(relaying, true), FG_WIRING_SINK_QUEUE);
	/* passive mode relays nothing, [downstream] or not */
	ck_assert_int_eq(fg_startup_default_sink(relaying, false), FG_WIRING_SINK_MEMORY);
	fg_config_free(plain);
	fg_config_free(relaying);
}
END_TEST

START_TEST(test_signals)
{
	static const int handled[] = { SIGTERM, SIGINT, SIGUSR1, SIGHUP };
	struct sigaction sa;
	sigset_t set;

	signal(SIGPIPE, SIG_DFL);
	fg_startup_signals(&set);
	for (unsigned i = 0; i < FG_ARRAY_SIZE(handled); i++)
		ck_assert_int_eq(sigismember(&set, handled[i]), 1);
	ck_assert_int_eq(sigismember(&set, SIGPIPE), 0);
	ck_assert_int_eq(sigismember(&set, SIGUSR2), 0);
	ck_assert_int_eq(sigismember(&set, SIGQUIT), 0);
	ck_assert_int_eq(sigaction(SIGPIPE, NULL, &sa), 0);
	ck_assert_ptr_eq((void *)sa.sa_handler, (void *)SIG_IGN);
}
END_TEST

START_TEST(test_table_private)
{
	struct fg_config *cfg = config_text("[history]\ncapacity 1000\n");
	struct fg_history_params hp;
	struct fg_startup_table t;
	struct fg_history_stats hs;

	fg_startup_table_params(&hp, cfg, 2000, 64);
	ck_assert_uint_eq(hp.capacity, 2000);
	ck_assert_uint_eq(hp.side_capacity, 64);
	ck_assert_int_eq(hp.full_policy, cfg->full_policy);
	ck_assert_uint_eq(hp.alarm_load_pct, cfg->alarm_load_pct);
	ck_assert_int_ne(hp.now, 0);
	ck_assert_int_eq(fg_startup_table_open(&t, &hp), 0);
	ck_assert_ptr_nonnull(t.h);
	ck_assert_ptr_nonnull(t.mem);
	ck_assert_uint_eq(t.len, fg_history_region_size(2000, 64));
	fg_history_stats(t.h, &hs);
	ck_assert_uint_ge(hs.slots, 2000);
	ck_assert_uint_eq(hs.entries, 0);
	fg_startup_table_close(&t);
	ck_assert_ptr_null(t.h);
	ck_assert_ptr_null(t.mem);
	fg_startup_table_close(&t);	/* again: nothing */
	/* no room for an entry: refused, nothing held */
	fg_startup_table_params(&hp, cfg, 0, 0);
	ck_assert_int_eq(fg_startup_table_open(&t, &hp), -EINVAL);
	ck_assert_ptr_null(t.h);
	ck_assert_ptr_null(t.mem);
	fg_config_free(cfg);
}
END_TEST

static struct fg_startup_cluster_params cluster_params(const struct fg_config *cfg,
						      struct fg_region *r)
{
	struct fg_startup_cluster_params p = {
		.cfg = cfg, .max_links = 2, .region = r, .slot_name = "test/cluster",
		.region_what = "the test region", .log_comp = "test",
	};

	return p;
}

START_TEST(test_cluster_none)
{
	struct fg_config *cfg = config_text("[history]\ncapacity 1000\n");
	struct fg_startup_cluster_params p = cluster_params(cfg, NULL);
	struct fg_startup_cluster c;

	memset(&c, 0xa5, sizeof(c));
	ck_assert_int_eq(fg_startup_cluster_open(&c, &p), 0);
	ck_assert_ptr_null(c.claimer);
	ck_assert_ptr_null(c.slot);
	fg_startup_cluster_publish(&c, "/nonexistent", 1000000000ull, "test");
	ck_assert_uint_eq(c.published_ns, 0);
	fg_startup_cluster_close(&c);
	fg_config_free(cfg);
}
END_TEST

START_TEST(test_cluster_slot)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 1000, 1, 64);
	struct fg_config *cfg = config_text(CLUSTER_CONF);
	struct fg_startup_cluster_params p = cluster_params(cfg, r);
	struct fg_startup_cluster a, b;
	struct fg_test_logcap cap;
	unsigned dead = 1;

	ck_assert_int_eq(fg_startup_cluster_open(&a, &p), 0);
	ck_assert_ptr_nonnull(a.claimer);
	ck_assert_ptr_nonnull(a.slot);
	/* the region's one slot is a's: b is refused, says where, keeps its client */
	fg_test_logcap_start(&cap);
	ck_assert_int_lt(fg_startup_cluster_open(&b, &p), 0);
	fg_test_logcap_stop();
	ck_assert_ptr_nonnull(b.claimer);
	ck_assert_ptr_null(b.slot);
	ck_assert_msg(fg_test_logcap_has(&cap, "cluster thread: no writer slot in the test region: "),
		      "logged: %s", cap.text);
	fg_startup_cluster_close(&b);
	/* a's slot released at close, not left live or dead: once
	 * floodctld's reaper frees it, b gets it */
	fg_startup_cluster_close(&a);
	ck_assert_ptr_null(a.claimer);
	ck_assert_ptr_null(a.slot);
	ck_assert_uint_eq(fg_region_reap(r, &dead, NULL), 1);
	ck_assert_uint_eq(dead, 0);
	ck_assert_int_eq(fg_startup_cluster_open(&b, &p), 0);
	ck_assert_ptr_nonnull(b.slot);
	fg_startup_cluster_close(&b);
	fg_config_free(cfg);
	fx_cleanup(&fx);
}
END_TEST

START_TEST(test_cluster_publish_paced)
{
	struct ctl_fixture fx = { 0 };
	struct fg_config *cfg = config_text(CLUSTER_CONF);
	struct fg_startup_cluster_params p = cluster_params(cfg, NULL);
	const uint64_t t0 = 5ull * FG_STARTUP_CLUSTER_PUBLISH_NS;
	struct fg_startup_cluster c;
	const char *dir = fx_dir(&fx);
	char status[256];
	struct stat st;

	snprintf(status, sizeof(status), "%s/%s", dir, FG_CS_STATUS_FILE);
	ck_assert_int_eq(fg_startup_cluster_open(&c, &p), 0);
	ck_assert_ptr_nonnull(c.claimer);
	ck_assert_ptr_null(c.slot);	/* no region */
	fg_startup_cluster_publish(&c, dir, t0, "test");
	ck_assert_uint_eq(c.published_ns, t0);
	ck_assert_msg(stat(status, &st) == 0, "%s written", status);
	ck_assert_int_ne(c.status_written, 0);
	/* within the pace: nothing done (the file it would write is gone) */
	ck_assert_int_eq(unlink(status), 0);
	c.status_written = 0;
	fg_startup_cluster_publish(&c, dir, t0 + FG_STARTUP_CLUSTER_PUBLISH_NS - 1, "test");
	ck_assert_uint_eq(c.published_ns, t0);
	ck_assert_int_ne(stat(status, &st), 0);
	/* at the pace: published, and the health written for a new second */
	fg_startup_cluster_publish(&c, dir, t0 + FG_STARTUP_CLUSTER_PUBLISH_NS, "test");
	ck_assert_uint_eq(c.published_ns, t0 + FG_STARTUP_CLUSTER_PUBLISH_NS);
	ck_assert_msg(stat(status, &st) == 0, "%s written again", status);
	fg_startup_cluster_close(&c);
	fg_config_free(cfg);
	fx_cleanup(&fx);
}
END_TEST

static void write_lines(FILE *f, const void *arg)
{
	fprintf(f, "counter_a %u\ncounter_b 7\n", *(const unsigned *)arg);
}

START_TEST(test_write_file)
{
	struct ctl_fixture fx = { 0 };
	const char *dir = fx_dir(&fx);
	struct fg_test_logcap cap;
	char path[256], tmp[300], got[128] = "", bad[300];
	unsigned n = 41;
	struct stat st;
	FILE *f;

	snprintf(path, sizeof(path), "%s/stats", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	ck_assert_int_eq(fg_startup_write_file(path, "stats file", "test", write_lines, &n), 0);
	n = 42;		/* replaced, not appended */
	ck_assert_int_eq(fg_startup_write_file(path, "stats file", "test", write_lines, &n), 0);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_gt(fread(got, 1, sizeof(got) - 1, f), 0);
	fclose(f);
	ck_assert_str_eq(got, "counter_a 42\ncounter_b 7\n");
	ck_assert_int_ne(stat(tmp, &st), 0);	/* renamed into place */
	/* a directory that is not there: refused, the temporary file named */
	snprintf(bad, sizeof(bad), "%s/no-such-dir/stats", dir);
	fg_test_logcap_start(&cap);
	ck_assert_int_eq(fg_startup_write_file(bad, "stats file", "test", write_lines, &n), -ENOENT);
	fg_test_logcap_stop();
	ck_assert_msg(fg_test_logcap_has(&cap, "stats file ") &&
		      fg_test_logcap_has(&cap, "no-such-dir/stats.tmp: "), "logged: %s", cap.text);
	unlink(path);
	fx_cleanup(&fx);
}
END_TEST

static Suite *startup_suite(void)
{
	Suite *s = suite_create("startup");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_parse_sink);
	tcase_add_test(tc, test_parse_log_level);
	tcase_add_test(tc, test_config_default_and_file);
	tcase_add_test(tc, test_config_refused_is_logged);
	tcase_add_test(tc, test_default_sink);
	tcase_add_test(tc, test_signals);
	tcase_add_test(tc, test_table_private);
	tcase_add_test(tc, test_cluster_none);
	tcase_add_test(tc, test_cluster_slot);
	tcase_add_test(tc, test_cluster_publish_paced);
	tcase_add_test(tc, test_write_file);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(startup_suite)
