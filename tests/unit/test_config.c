/* SPDX-License-Identifier: MIT */
/*
 * test_config.c — floodgate.conf: value syntaxes, every key, every error
 * class with its exact "file:line: key: message", error collection, the
 * RFC 5537 checks at their boundaries, defaults, the embedded default,
 * the format round trip, peer lookup, and that docs/configuration.md
 * documents every key and quotes the embedded default exactly.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "floodgate/config.h"
#include "floodgate/log.h"
#include "fgtest.h"

/* appended to texts that test something else, so the load is otherwise clean */
#define PEER_AND_DS "[peer p]\naddress 192.0.2.1\n[downstream d]\naddress 127.0.0.1\n"

static struct fg_config_errors errs;
static char fmtbuf[1 << 20];

static struct fg_config *load(const char *text)
{
	return fg_config_load_text("t.conf", text, strlen(text), &errs);
}

static const char *all_errors(void)
{
	static char buf[8192];

	buf[0] = '\0';
	for (unsigned i = 0; i < errs.n; i++)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "\n  E %s", errs.err[i].text);
	for (unsigned i = 0; i < errs.n_warn; i++)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "\n  W %s", errs.warn[i].text);
	return buf;
}

/* The load fails with exactly one error, `want`. */
static void expect_error(const char *text, const char *want)
{
	struct fg_config *cfg = load(text);

	ck_assert_msg(cfg == NULL, "loaded; wanted error %s", want);
	ck_assert_msg(errs.total == 1 && errs.n == 1 && strcmp(errs.err[0].text, want) == 0,
		      "want only:\n  %s\ngot:%s", want, all_errors());
}

/* The load succeeds with exactly one warning, `want`. */
static void expect_warning(const char *text, const char *want)
{
	struct fg_config *cfg = load(text);

	ck_assert_msg(cfg != NULL, "refused:%s", all_errors());
	ck_assert_msg(errs.n_warn == 1 && strcmp(errs.warn[0].text, want) == 0,
		      "want warning:\n  %s\ngot:%s", want, all_errors());
	fg_config_free(cfg);
}

static struct fg_config *load_clean(const char *text)
{
	struct fg_config *cfg = load(text);

	ck_assert_msg(cfg != NULL && errs.total == 0 && errs.n_warn == 0, "not clean:%s",
		      all_errors());
	return cfg;
}

/* load(format(cfg)) == cfg, byte for byte, and format is a fixed point. */
static void assert_round_trip(const struct fg_config *cfg)
{
	static char again[1 << 20];
	size_t n = fg_config_format(cfg, fmtbuf, sizeof(fmtbuf));
	struct fg_config *back;

	ck_assert_uint_lt(n, sizeof(fmtbuf));
	ck_assert_uint_eq(n, strlen(fmtbuf));
	back = fg_config_load_text("fmt", fmtbuf, n, &errs);
	ck_assert_msg(back != NULL, "formatted text refused:%s\n%s", all_errors(), fmtbuf);
	ck_assert_msg(memcmp(cfg, back, sizeof(*cfg)) == 0, "round trip differs:\n%s", fmtbuf);
	fg_config_format(back, again, sizeof(again));
	ck_assert_str_eq(fmtbuf, again);
	fg_config_free(back);
}

/* ---------------------------------------------------------------- values */

START_TEST(test_durations)
{
	static const struct {
		const char *s;
		int rc;
		int64_t v;
	} c[] = {
		{ "90", 0, 90 }, { "0", 0, 0 }, { "10d", 0, 864000 }, { "1w", 0, 604800 },
		{ "1d12h", 0, 129600 }, { "2h30m", 0, 9000 }, { "1m30s", 0, 90 },
		{ "1000ms", 0, 1 }, { "1000000us", 0, 1 }, { "007", 0, 7 },
		{ "106751d", 0, INT64_C(106751) * 86400 },
		{ "1500ms", -EINVAL, 0 },	/* not whole seconds */
		{ "1d12", -EINVAL, 0 }, { "5m1h", -EINVAL, 0 }, { "1s1s", -EINVAL, 0 },
		{ "", -EINVAL, 0 }, { "-1", -EINVAL, 0 }, { "+1", -EINVAL, 0 },
		{ "1x", -EINVAL, 0 }, { "d", -EINVAL, 0 }, { "1 d", -EINVAL, 0 },
		{ "1D", -EINVAL, 0 }, { "1.5h", -EINVAL, 0 },
		{ "106752d", -ERANGE, 0 }, { "9223372036854775807", -ERANGE, 0 },
		{ "99999999999999999999", -ERANGE, 0 },
	};
	int64_t v;

	for (size_t i = 0; i < FG_ARRAY_SIZE(c); i++) {
		v = -42;
		ck_assert_msg(fg_parse_duration(c[i].s, &v) == c[i].rc, "\"%s\"", c[i].s);
		if (c[i].rc == 0)
			ck_assert_msg(v == c[i].v, "\"%s\" -> %lld", c[i].s, (long long)v);
		else
			ck_assert_int_eq(v, -42);
	}
	ck_assert_int_eq(fg_parse_duration_ms("250ms", &v), 0);
	ck_assert_int_eq(v, 250);
	ck_assert_int_eq(fg_parse_duration_ms("2", &v), 0);	/* bare = seconds */
	ck_assert_int_eq(v, 2000);
	ck_assert_int_eq(fg_parse_duration_ms("1s500ms", &v), 0);
	ck_assert_int_eq(v, 1500);
	ck_assert_int_eq(fg_parse_duration_ms("1us", &v), -EINVAL);
}
END_TEST

START_TEST(test_sizes_and_bools)
{
	uint64_t v;
	bool b;

	ck_assert_int_eq(fg_parse_size("0", &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(fg_parse_size("1000000", &v), 0);
	ck_assert_uint_eq(v, 1000000);
	ck_assert_int_eq(fg_parse_size("1K", &v), 0);
	ck_assert_uint_eq(v, 1024);
	ck_assert_int_eq(fg_parse_size("16m", &v), 0);
	ck_assert_uint_eq(v, 16u << 20);
	ck_assert_int_eq(fg_parse_size("8G", &v), 0);
	ck_assert_uint_eq(v, UINT64_C(8) << 30);
	ck_assert_int_eq(fg_parse_size("3T", &v), 0);
	ck_assert_uint_eq(v, UINT64_C(3) << 40);
	ck_assert_int_eq(fg_parse_size("18446744073709551615", &v), 0);
	ck_assert_uint_eq(v, UINT64_MAX);
	ck_assert_int_eq(fg_parse_size("18446744073709551616", &v), -ERANGE);
	ck_assert_int_eq(fg_parse_size("16777216T", &v), -ERANGE);
	ck_assert_int_eq(fg_parse_size("16777215T", &v), 0);
	ck_assert_int_eq(fg_parse_size("1KB", &v), -EINVAL);
	ck_assert_int_eq(fg_parse_size("1.5G", &v), -EINVAL);
	ck_assert_int_eq(fg_parse_size("K", &v), -EINVAL);
	ck_assert_int_eq(fg_parse_size("1P", &v), -EINVAL);
	ck_assert_int_eq(fg_parse_size("", &v), -EINVAL);
	ck_assert_int_eq(fg_parse_size("-1", &v), -EINVAL);

	for (const char *const *s = (const char *const[]){ "on", "yes", "true", "ON", "True",
							   NULL }; *s; s++) {
		b = false;
		ck_assert_int_eq(fg_parse_bool(*s, &b), 0);
		ck_assert(b);
	}
	for (const char *const *s = (const char *const[]){ "off", "no", "false", "NO", NULL };
	     *s; s++) {
		b = true;
		ck_assert_int_eq(fg_parse_bool(*s, &b), 0);
		ck_assert(!b);
	}
	ck_assert_int_eq(fg_parse_bool("1", &b), -EINVAL);
	ck_assert_int_eq(fg_parse_bool("enabled", &b), -EINVAL);
	ck_assert_int_eq(fg_parse_bool("", &b), -EINVAL);
	ck_assert_int_eq(fg_parse_bool("onn", &b), -EINVAL);
}
END_TEST

START_TEST(test_prefixes)
{
	struct fg_prefix p;
	uint8_t a4[4], a6[16];
	char buf[64];

	ck_assert_int_eq(fg_parse_prefix("192.0.2.0/24", &p), 0);
	ck_assert_int_eq(p.family, AF_INET);
	ck_assert_uint_eq(p.len, 24);
	ck_assert(!fg_prefix_host_bits(&p));
	inet_pton(AF_INET, "192.0.2.77", a4);
	ck_assert(fg_prefix_contains(&p, AF_INET, a4));
	inet_pton(AF_INET, "192.0.3.1", a4);
	ck_assert(!fg_prefix_contains(&p, AF_INET, a4));
	ck_assert_int_eq(fg_prefix_format(&p, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "192.0.2.0/24");
	ck_assert_int_eq(fg_prefix_format(&p, buf, 12), -ENOSPC);

	ck_assert_int_eq(fg_parse_prefix("192.0.2.1", &p), 0);
	ck_assert_uint_eq(p.len, 32);
	ck_assert_int_eq(fg_prefix_format(&p, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "192.0.2.1");
	ck_assert_int_eq(fg_parse_prefix("192.0.2.10/24", &p), 0);
	ck_assert(fg_prefix_host_bits(&p));
	ck_assert_int_eq(fg_parse_prefix("192.0.2.128/25", &p), 0);
	ck_assert(!fg_prefix_host_bits(&p));
	inet_pton(AF_INET, "192.0.2.127", a4);
	ck_assert(!fg_prefix_contains(&p, AF_INET, a4));	/* the partial byte */
	inet_pton(AF_INET, "192.0.2.200", a4);
	ck_assert(fg_prefix_contains(&p, AF_INET, a4));

	ck_assert_int_eq(fg_parse_prefix("2001:db8::/32", &p), 0);
	ck_assert_int_eq(p.family, AF_INET6);
	inet_pton(AF_INET6, "2001:db8:ffff::1", a6);
	ck_assert(fg_prefix_contains(&p, AF_INET6, a6));
	ck_assert(!fg_prefix_contains(&p, AF_INET, a6));	/* family must agree */
	ck_assert_int_eq(fg_parse_prefix("::1", &p), 0);
	ck_assert_uint_eq(p.len, 128);
	ck_assert_int_eq(fg_parse_prefix("0.0.0.0/0", &p), 0);
	ck_assert(fg_prefix_contains(&p, AF_INET, a4));
	ck_assert_int_eq(fg_parse_prefix("::/0", &p), 0);
	ck_assert(fg_prefix_contains(&p, AF_INET6, a6));

	static const char *const bad[] = {
		"192.0.2.0/33", "192.0.2.0/024", "192.0.2.0/", "192.0.2.0/-1", "host.example",
		"2001:db8::/129", "", "/24", "192.0.2.0/24/1", "192.0.2", "::1/ 8",
	};
	for (size_t i = 0; i < FG_ARRAY_SIZE(bad); i++)
		ck_assert_msg(fg_parse_prefix(bad[i], &p) == -EINVAL, "%s", bad[i]);
}
END_TEST

/* [dataplane] address: several of our addresses, both families, on one
 * line or several; [site] listen likewise; peers matched by either. */
START_TEST(test_dual_stack)
{
	struct fg_config *cfg = load(
		"[site]\nlisten 198.18.0.2:119 [2001:db8::2]:119\nlisten [::]:433\n"
		"[dataplane]\naddress 198.18.0.2/24 2001:db8::2/64\naddress fd00::7/128\n"
		"[peer v4]\naddress 198.18.0.0/24\n[peer v6]\naddress 2001:db8::/48\n"
		"[peer v6-host]\naddress 2001:db8::1\n[downstream d]\naddress 127.0.0.1\n");
	const struct fg_config_peer *p;
	uint8_t a6[16], a4[4];
	char buf[64];

	/* loaded, with one warning: the host inside the /48 */
	ck_assert_ptr_nonnull(cfg);
	ck_assert_uint_eq(errs.n_warn, 1);
	ck_assert_uint_eq(cfg->n_dp_addr, 3);
	fg_prefix_format(&cfg->dp_addr[1], buf, sizeof(buf));
	ck_assert_str_eq(buf, "2001:db8::2/64");
	fg_prefix_format(&cfg->dp_addr[2], buf, sizeof(buf));
	ck_assert_str_eq(buf, "fd00::7");
	ck_assert_uint_eq(cfg->n_listen, 3);
	ck_assert_int_eq(cfg->listen[1].family, AF_INET6);
	fg_endpoint_format(&cfg->listen[2], buf, sizeof(buf));
	ck_assert_str_eq(buf, "[::]:433");
	/* longest match, in each family */
	inet_pton(AF_INET6, "2001:db8::1", a6);
	p = fg_config_find_peer(cfg, AF_INET6, a6);
	ck_assert_ptr_nonnull(p);
	ck_assert_str_eq(p->name, "v6-host");
	inet_pton(AF_INET6, "2001:db8::9", a6);
	ck_assert_str_eq(fg_config_find_peer(cfg, AF_INET6, a6)->name, "v6");
	inet_pton(AF_INET, "198.18.0.1", a4);
	ck_assert_str_eq(fg_config_find_peer(cfg, AF_INET, a4)->name, "v4");
	inet_pton(AF_INET6, "2001:db9::1", a6);
	ck_assert_ptr_null(fg_config_find_peer(cfg, AF_INET6, a6));
	assert_round_trip(cfg);
	fg_config_free(cfg);
}
END_TEST

/* What floodgate refuses at start in a file that loads: listen endpoints
 * the port would never receive; the other programs refuse none of it. */
START_TEST(test_program_refusals)
{
	struct fg_config *cfg = load(
		"[site]\nlisten 198.18.0.2:119 [fd00::9]:119 [::]:433 0.0.0.0:563\n"
		"[dataplane]\naddress 198.18.0.2/24 fd00::2/64\n" PEER_AND_DS);
	char why[4][FG_CONFIG_REFUSAL_MAX];
	enum fg_program p;

	ck_assert_ptr_nonnull(cfg);
	ck_assert_int_eq(fg_config_program_parse("floodgate", &p), 0);
	ck_assert_int_eq(p, FG_PROGRAM_FLOODGATE);
	ck_assert_int_eq(fg_config_program_parse("floodgate-host", &p), 0);
	ck_assert_int_eq(p, FG_PROGRAM_FLOODGATE_HOST);
	ck_assert_int_eq(fg_config_program_parse("innd", &p), -EINVAL);
	ck_assert_uint_eq(fg_config_refusals(cfg, FG_PROGRAM_FLOODGATE, why, 4), 1);
	ck_assert_str_eq(why[0], "[site] listen [fd00::9]:119 is not one of [dataplane] address, "
				 "so the port would never receive its connections");
	ck_assert_uint_eq(fg_config_refusals(cfg, FG_PROGRAM_FLOODGATE_HOST, why, 4), 0);
	ck_assert_uint_eq(fg_config_refusals(cfg, FG_PROGRAM_FLOODCTLD, why, 4), 0);
	ck_assert_ptr_nonnull(strstr(fg_config_host_refusals(FG_PROGRAM_FLOODGATE), "hugepages"));
	fg_config_free(cfg);
	/* an IPv4-only port: the IPv6 wildcard has nothing to arrive on; the
	 * count goes on past what fits */
	cfg = load("[site]\nlisten [::]:119 [fd00::1]:119 [fd00::2]:119\n"
		   "[dataplane]\naddress 198.18.0.2/24\n" PEER_AND_DS);
	ck_assert_uint_eq(fg_config_refusals(cfg, FG_PROGRAM_FLOODGATE, why, 1), 3);
	ck_assert_str_eq(why[0], "[site] listen [::]:119: [dataplane] address has no IPv6 "
				 "address, so the port would never receive these connections");
	fg_config_free(cfg);
	/* passive mode listens to a capture: any endpoint goes */
	cfg = load("[site]\nlisten [fd00::c613:1]:119\n"
		   "[dataplane]\nmode passive\naddress 198.18.0.2/24\n" PEER_AND_DS);
	ck_assert_uint_eq(fg_config_refusals(cfg, FG_PROGRAM_FLOODGATE, why, 4), 0);
	fg_config_free(cfg);
}
END_TEST

/* floodgate's refusals of a file whose [dataplane] section is `dp`, at
 * most `max` messages into `why` (the count goes on past them). */
static unsigned dp_refusals(const char *dp, char (*why)[FG_CONFIG_REFUSAL_MAX], unsigned max)
{
	char text[512];
	struct fg_config *cfg;
	unsigned n;

	snprintf(text, sizeof(text), "[dataplane]\n%s%s", dp, PEER_AND_DS);
	cfg = load(text);
	ck_assert_ptr_nonnull(cfg);
	n = fg_config_refusals(cfg, FG_PROGRAM_FLOODGATE, why, max);
	ck_assert_uint_eq(fg_config_refusals(cfg, FG_PROGRAM_FLOODGATE_HOST, why + max, 0), 0);
	fg_config_free(cfg);
	return n;
}

/* The EAL's refusals, in either mode, with the words floodgate logs: a
 * PCI port with --no-pci in eal-args ("--no-pci" inside another word is
 * not the option; the default eal-args have it, the default port is a
 * tap); -l LIST and -c MASK with too few lcores (--lcores: the host's). */
START_TEST(test_port_refusals)
{
	char why[4][FG_CONFIG_REFUSAL_MAX];

	ck_assert_uint_eq(dp_refusals("port 0000:01:00.0,rxq_pkt_burst=8\n"
				      "eal-args --no-huge --no-pci -l 0-1\n", why, 4), 1);
	ck_assert_str_eq(why[0], "[dataplane] port 0000:01:00.0,rxq_pkt_burst=8 is a PCI device "
				 "but eal-args has --no-pci");
	ck_assert_uint_eq(dp_refusals("mode passive\nport 01:00.1\neal-args --no-pci\n", why, 4), 1);
	ck_assert_uint_eq(dp_refusals("address 198.18.0.2/24\n", why, 4), 0);
	ck_assert_uint_eq(dp_refusals("port 0000:01:00.0\neal-args -l 0-1 --vdev=x,a=--no-pci\n",
				      why, 4), 0);
	ck_assert_uint_eq(dp_refusals("workers 3\neal-args -l 0-1,3\n", why, 4), 1);
	ck_assert_str_eq(why[0], "3 workers need 4 lcores; the EAL has 3 (eal-args -l/--lcores)");
	ck_assert_uint_eq(dp_refusals("workers 3\neal-args -l0-2,5\n", why, 4), 0);
	ck_assert_uint_eq(dp_refusals("workers 2\neal-args -c 0x5\n", why, 4), 1);
	ck_assert_uint_eq(dp_refusals("workers 2\neal-args --lcores=(0-1)@0\n", why, 4), 0);
	ck_assert_uint_eq(dp_refusals("workers 2\neal-args -l 3-1\n", why, 4), 0);
	/* both at once, counted past what fits */
	ck_assert_uint_eq(dp_refusals("workers 2\nport 01:00.0\neal-args --no-pci -l 0\n", why, 1),
			  2);
	ck_assert(fg_config_port_is_pci("0000:01:00.0"));
	ck_assert(fg_config_port_is_pci("01:00.0,devargs"));
	ck_assert(!fg_config_port_is_pci("net_tap0,iface=fg0"));
	ck_assert(!fg_config_port_is_pci("01:00.0x"));
	ck_assert(!fg_config_port_is_pci(""));
}
END_TEST

START_TEST(test_endpoints)
{
	struct fg_endpoint ep;
	char buf[64];

	ck_assert_int_eq(fg_parse_endpoint("192.0.2.1:119", 0, &ep), 0);
	ck_assert_int_eq(ep.family, AF_INET);
	ck_assert_uint_eq(ep.port, 119);
	ck_assert_int_eq(fg_endpoint_format(&ep, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "192.0.2.1:119");
	ck_assert_int_eq(fg_parse_endpoint("192.0.2.1", 433, &ep), 0);
	ck_assert_uint_eq(ep.port, 433);
	ck_assert_int_eq(fg_parse_endpoint("[2001:db8::1]:563", 0, &ep), 0);
	ck_assert_int_eq(ep.family, AF_INET6);
	ck_assert_uint_eq(ep.port, 563);
	ck_assert_int_eq(fg_endpoint_format(&ep, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "[2001:db8::1]:563");
	ck_assert_int_eq(fg_parse_endpoint("[::1]", 119, &ep), 0);
	ck_assert_uint_eq(ep.port, 119);
	ck_assert_int_eq(fg_parse_endpoint("::1", 119, &ep), 0);	/* bare IPv6 */
	ck_assert_int_eq(ep.family, AF_INET6);
	ck_assert_int_eq(fg_parse_endpoint("1.2.3.4:65535", 0, &ep), 0);
	ck_assert_uint_eq(ep.port, 65535);

	static const char *const bad[] = {
		"192.0.2.1",	/* no default port */
		"192.0.2.1:0", "192.0.2.1:65536", "192.0.2.1:", "[192.0.2.1]:1", "[::1]x",
		"[::1", "name.example:119", ":119", "", "192.0.2.1:+1", "[::1]:", "[]:1",
	};
	for (size_t i = 0; i < FG_ARRAY_SIZE(bad); i++)
		ck_assert_msg(fg_parse_endpoint(bad[i], 0, &ep) == -EINVAL, "%s", bad[i]);
}
END_TEST

START_TEST(test_endpoint_sockaddr)
{
	struct sockaddr_storage ss;
	const struct sockaddr_in *a4 = (const struct sockaddr_in *)&ss;
	const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)&ss;
	struct fg_endpoint ep;
	char buf[INET6_ADDRSTRLEN];

	ck_assert_int_eq(fg_parse_endpoint("192.0.2.7:1119", 0, &ep), 0);
	memset(&ss, 0xa5, sizeof(ss));
	ck_assert_uint_eq(fg_endpoint_sockaddr(&ep, &ss), sizeof(struct sockaddr_in));
	ck_assert_int_eq(a4->sin_family, AF_INET);
	ck_assert_uint_eq(ntohs(a4->sin_port), 1119);
	ck_assert_str_eq(inet_ntop(AF_INET, &a4->sin_addr, buf, sizeof(buf)), "192.0.2.7");
	ck_assert_int_eq(((const uint8_t *)&ss)[sizeof(*a4)], 0);	/* the rest zeroed */

	ck_assert_int_eq(fg_parse_endpoint("[2001:db8::9]:563", 0, &ep), 0);
	memset(&ss, 0xa5, sizeof(ss));
	ck_assert_uint_eq(fg_endpoint_sockaddr(&ep, &ss), sizeof(struct sockaddr_in6));
	ck_assert_int_eq(a6->sin6_family, AF_INET6);
	ck_assert_uint_eq(ntohs(a6->sin6_port), 563);
	ck_assert_str_eq(inet_ntop(AF_INET6, &a6->sin6_addr, buf, sizeof(buf)), "2001:db8::9");
	ck_assert_uint_eq(a6->sin6_flowinfo, 0);
	ck_assert_uint_eq(a6->sin6_scope_id, 0);
}
END_TEST

/* ---------------------------------------------------------------- keys */

START_TEST(test_embedded_default)
{
	struct fg_config *cfg = fg_config_load_default(&errs);
	const struct fg_config_peer *tap, *local;
	char buf[64];

	ck_assert_msg(cfg != NULL && errs.total == 0 && errs.n_warn == 0, "%s", all_errors());
	ck_assert_int_eq(cfg->cutoff, 10 * 86400);
	ck_assert_int_eq(cfg->future_margin, 86400);
	ck_assert_int_eq(cfg->expiry, FG_EXPIRY_FIRST_SEEN);
	ck_assert_int_eq(cfg->retention, 11 * 86400);
	ck_assert(!cfg->honor_supersedes && !cfg->honor_versions);
	ck_assert(cfg->remember_rejects && cfg->version_numbers);
	ck_assert_uint_eq(cfg->n_listen, 1);
	fg_endpoint_format(&cfg->listen[0], buf, sizeof(buf));
	ck_assert_str_eq(buf, "10.99.0.1:119");
	fg_prefix_format(&cfg->dp_addr[0], buf, sizeof(buf));
	ck_assert_str_eq(buf, "10.99.0.1/24");
	ck_assert_str_eq(cfg->port, "net_tap0,iface=fg0");
	ck_assert_str_eq(cfg->eal_args, "--no-huge -m 512 --no-pci --no-shconf --no-telemetry");
	ck_assert_str_eq(cfg->data_dir, "/var/lib/floodgate");
	ck_assert_str_eq(cfg->shm_path, "/dev/shm/floodgate");
	ck_assert_str_eq(cfg->control_socket, "/run/floodgate/control.sock");
	fg_endpoint_format(&cfg->http, buf, sizeof(buf));
	ck_assert_str_eq(buf, "127.0.0.1:9119");
	ck_assert_uint_eq(cfg->n_downstream, 1);
	fg_endpoint_format(&cfg->downstream[0].addr, buf, sizeof(buf));
	ck_assert_str_eq(buf, "127.0.0.1:11119");
	ck_assert_uint_eq(cfg->n_peer, 2);
	tap = fg_config_peer_by_name(cfg, "tap");
	local = fg_config_peer_by_name(cfg, "local");
	ck_assert_ptr_nonnull(tap);
	ck_assert_ptr_nonnull(local);
	ck_assert_ptr_null(fg_config_peer_by_name(cfg, "nobody"));
	ck_assert_str_eq(tap->newsgroups, "*,!junk,!control.cancel");
	ck_assert_uint_eq(local->n_addr, 2);
	assert_round_trip(cfg);
	fg_config_free(cfg);
}
END_TEST

/* Every key left out takes the default the documentation gives. */
START_TEST(test_defaults)
{
	struct fg_config *cfg = load_clean(PEER_AND_DS);
	char host[256] = "", buf[64];

	ck_assert_int_eq(gethostname(host, sizeof(host)), 0);
	ck_assert_str_eq(cfg->server_name, host);
	ck_assert_uint_eq(cfg->n_path_ids, 1);
	ck_assert_str_eq(cfg->path_ids[0], host);
	ck_assert_uint_eq(cfg->n_listen, 1);
	fg_endpoint_format(&cfg->listen[0], buf, sizeof(buf));
	ck_assert_str_eq(buf, "0.0.0.0:119");
	ck_assert_int_eq(cfg->cutoff, 864000);
	ck_assert_int_eq(cfg->future_margin, 86400);
	ck_assert_int_eq(cfg->expiry, FG_EXPIRY_FIRST_SEEN);
	ck_assert_int_eq(cfg->retention, 864000 + 86400);
	ck_assert_uint_eq(cfg->max_article_size, 1000000);
	ck_assert(cfg->version_numbers && !cfg->honor_versions && !cfg->honor_supersedes);
	ck_assert(cfg->remember_rejects);
	ck_assert_uint_eq(cfg->n_required_headers, 4);
	ck_assert_str_eq(cfg->required_headers[0], "From");
	ck_assert_str_eq(cfg->required_headers[3], "Subject");
	ck_assert_int_eq(cfg->offer_timeout, 10);
	ck_assert_uint_eq(cfg->max_line, 512);
	ck_assert_int_eq(cfg->idle_timeout, 600);
	ck_assert_uint_eq(cfg->max_pending_bytes, 16u << 20);
	ck_assert_uint_eq(cfg->max_pending_commands, 1024);
	ck_assert_int_eq(cfg->clock_skew_limit, 3600);
	ck_assert_uint_eq(cfg->history_capacity, 4u << 20);
	ck_assert_uint_eq(cfg->history_shards, 0);
	ck_assert_int_eq(cfg->full_policy, FG_FULL_DEFER);
	ck_assert_uint_eq(cfg->alarm_load_pct, 90);
	ck_assert_str_eq(cfg->shm_path, "/dev/shm/floodgate");
	ck_assert_str_eq(cfg->data_dir, "/var/lib/floodgate");
	ck_assert_int_eq(cfg->journal_commit_ms, 1000);
	ck_assert_int_eq(cfg->snapshot_interval, 300);
	ck_assert_uint_eq(cfg->snapshot_keep, 2);
	ck_assert_int_eq(cfg->queue_commit_ms, 10);
	ck_assert_uint_eq(cfg->queue_limit, UINT64_C(8) << 30);
	ck_assert_int_eq(cfg->queue_max_age, 0);
	ck_assert_int_eq(cfg->warmup, cfg->cutoff);
	ck_assert_int_eq(cfg->ack_timeout_ms, 250);
	fg_endpoint_format(&cfg->http, buf, sizeof(buf));
	ck_assert_str_eq(buf, "127.0.0.1:9119");
	ck_assert_str_eq(cfg->control_socket, "/run/floodgate/control.sock");
	ck_assert_str_eq(cfg->verdict_log, "");
	ck_assert_uint_eq(cfg->verdict_log_rotate, 256u << 20);
	ck_assert_uint_eq(cfg->verdict_log_keep, 8);
	ck_assert_int_eq(cfg->report_interval, 60);
	ck_assert_uint_eq(cfg->report_keep, 8);
	ck_assert_int_eq(cfg->dp_mode, FG_DATAPLANE_ACTIVE);
	ck_assert_str_eq(cfg->eal_args, "--no-huge -m 512 --no-pci --no-shconf --no-telemetry");
	ck_assert_str_eq(cfg->port, "net_tap0,iface=fg0");
	ck_assert_uint_eq(cfg->workers, 1);
	ck_assert_uint_eq(cfg->rx_queues, 1);
	ck_assert_uint_eq(cfg->mbufs, 16383);
	ck_assert_uint_eq(cfg->tcp_connections, 4096);
	fg_prefix_format(&cfg->dp_addr[0], buf, sizeof(buf));
	ck_assert_str_eq(buf, "10.99.0.1/24");
	for (int i = 0; i < 6; i++)
		ck_assert_uint_eq(cfg->dp_mac[i], 0);
	ck_assert_uint_eq(cfg->idle_backoff_us, 100);
	ck_assert(cfg->dp_gro);
	ck_assert_uint_eq(cfg->n_dp_vlan, 0);
	ck_assert_int_eq(cfg->dp_exception, FG_EXCEPTION_NONE);
	ck_assert_str_eq(cfg->dp_exception_iface, "fgx0");
	ck_assert_uint_eq(cfg->dp_exception_rate, 10000);
	ck_assert_int_eq(cfg->log_target, FG_LOG_TO_STDERR);
	ck_assert_int_eq(cfg->log_timestamps, FG_LOG_TIME_AUTO);
	ck_assert_str_eq(cfg->peer[0].newsgroups, "*");
	ck_assert_uint_eq(cfg->peer[0].max_connections, 0);
	ck_assert_uint_eq(cfg->peer[0].max_outstanding_offers, 1024);
	ck_assert_uint_eq(cfg->peer[0].max_article_size, 0);
	ck_assert_uint_eq(cfg->downstream[0].addr.port, 119);
	ck_assert_uint_eq(cfg->downstream[0].connections, 1);
	ck_assert_uint_eq(cfg->downstream[0].window, 64);
	ck_assert_int_eq(cfg->downstream[0].mode, FG_DOWNSTREAM_STREAM);
	ck_assert(!cfg->downstream[0].check_first);
	ck_assert(!cfg->downstream[0].acknowledges);
	assert_round_trip(cfg);
	fg_config_free(cfg);
}
END_TEST

/* Every key set to something other than its default, read back. */
static const char full_text[] =
	"# every key, none at its default\n"
	"[site]\n"
	"server-name      news.example.net\n"
	"path-identity    news.example.net feed.example\n"
	"path-identity    old-name.example\n"
	"listen           192.0.2.1:119 [2001:db8::1]:433\n"
	"listen           192.0.2.1\t\t# port 119 by default\n"
	"[rules]\n"
	"cutoff           8d\n"
	"future-margin    6h\n"
	"expiry           article-date\n"
	"retention        30d\n"
	"max-article-size 4M\n"
	"version-numbers  off\n"
	"honor-versions   no\n"
	"honor-supersedes yes\n"
	"remember-rejects false\n"
	"required-headers From Subject X-Required\n"
	"[session]\n"
	"offer-timeout    5s\n"
	"max-line         1024\n"
	"idle-timeout     1h\n"
	"max-pending-bytes 64M\n"
	"max-pending-commands 4096\n"
	"clock-skew-limit 0\n"
	"[history]\n"
	"capacity         1G\n"
	"shards           128\n"
	"full-policy      evict-oldest\n"
	"alarm-load       75\n"
	"shm-path         \"/dev/hugepages/flood gate\"\n"
	"[persistence]\n"
	"data-dir         /srv/floodgate\n"
	"journal-commit   250ms\n"
	"snapshot-interval 1h\n"
	"snapshot-keep    5\n"
	"queue-commit     0\n"
	"queue-limit      100G\n"
	"queue-max-age    6h\n"
	"warmup           0\n"
	"ack-timeout      1s\n"
	"[stats]\n"
	"http             [::1]:9200\n"
	"control-socket   /tmp/fg.sock\n"
	"verdict-log      /var/log/floodgate/verdicts\n"
	"verdict-log-rotate 1G\n"
	"verdict-log-keep 30\n"
	"report-interval  5m\n"
	"report-keep      31\n"
	"[dataplane]\n"
	"mode             passive\n"
	"eal-args         -l 0-3 --vdev \"net_pcap0,rx_pcap=/tmp/a b.pcap\" --no-pci\n"
	"port             0000:3b:00.0\n"
	"workers          3\n"
	"rx-queues        6\n"
	"mbufs            262143\n"
	"tcp-connections  65536\n"
	"address          198.51.100.7/28\n"
	"mac              02:00:5e:10:00:01\n"
	"idle-backoff     1ms\n"
	"gro              off\n"
	"vlan             10 198.51.100.33/28\n"
	"vlan             20\n"
	"exception-path   tap\n"
	"exception-iface  box-uplink0\n"
	"exception-rate   2500\n"
	"[log]\n"
	"target           journal\n"
	"timestamps       off\n"
	"[downstream spool-a]\n"
	"address          [2001:db8::25]\n"
	"connections      4\n"
	"window           256\n"
	"mode             ihave\n"
	"[downstream spool-b]\n"
	"address          192.0.2.26:1119\n"
	"check-first      on\n"
	"acknowledges     on\n"
	"[peer upstream-1]\n"
	"address          203.0.113.0/24\n"
	"address          2001:db8:1::/48\n"
	"newsgroups       *, !junk,!control.*\n"
	"newsgroups       @alt.binaries.warez.*\n"
	"max-connections  8\n"
	"max-connection-rate 3\n"
	"max-article-size 10M\n"
	"max-outstanding-offers 4096\n"
	"[peer upstream-2]\n"
	"address          198.51.100.200\n";

START_TEST(test_every_key)
{
	struct fg_config *cfg = load(full_text);
	char buf[64], *argv[8], args[1024];

	/* the second listen line repeats 192.0.2.1:119 */
	ck_assert_ptr_null(cfg);
	ck_assert_str_eq(errs.err[0].text, "t.conf:7: listen: an address is listed twice");
	{
		static char fixed[sizeof(full_text)];
		char *at;

		strcpy(fixed, full_text);
		at = strstr(fixed, "listen           192.0.2.1\t");
		memcpy(at, "listen           192.0.2.2\t", 27);
		cfg = load_clean(fixed);
	}
	ck_assert_str_eq(cfg->server_name, "news.example.net");
	ck_assert_uint_eq(cfg->n_path_ids, 3);
	ck_assert_str_eq(cfg->path_ids[2], "old-name.example");
	ck_assert_uint_eq(cfg->n_listen, 3);
	fg_endpoint_format(&cfg->listen[1], buf, sizeof(buf));
	ck_assert_str_eq(buf, "[2001:db8::1]:433");
	ck_assert_uint_eq(cfg->listen[2].port, 119);
	ck_assert_int_eq(cfg->cutoff, 8 * 86400);
	ck_assert_int_eq(cfg->future_margin, 6 * 3600);
	ck_assert_int_eq(cfg->expiry, FG_EXPIRY_ARTICLE_DATE);
	ck_assert_int_eq(cfg->retention, 30 * 86400);
	ck_assert_uint_eq(cfg->max_article_size, 4u << 20);
	ck_assert(!cfg->version_numbers && !cfg->honor_versions && cfg->honor_supersedes);
	ck_assert(!cfg->remember_rejects);
	ck_assert_uint_eq(cfg->n_required_headers, 3);
	ck_assert_str_eq(cfg->required_headers[2], "X-Required");
	ck_assert_int_eq(cfg->offer_timeout, 5);
	ck_assert_uint_eq(cfg->max_line, 1024);
	ck_assert_int_eq(cfg->idle_timeout, 3600);
	ck_assert_uint_eq(cfg->max_pending_bytes, 64u << 20);
	ck_assert_uint_eq(cfg->max_pending_commands, 4096);
	ck_assert_int_eq(cfg->clock_skew_limit, 0);
	ck_assert_uint_eq(cfg->history_capacity, 1u << 30);
	ck_assert_uint_eq(cfg->history_shards, 128);
	ck_assert_int_eq(cfg->full_policy, FG_FULL_EVICT_OLDEST);
	ck_assert_uint_eq(cfg->alarm_load_pct, 75);
	ck_assert_str_eq(cfg->shm_path, "/dev/hugepages/flood gate");
	ck_assert_str_eq(cfg->data_dir, "/srv/floodgate");
	ck_assert_int_eq(cfg->journal_commit_ms, 250);
	ck_assert_int_eq(cfg->snapshot_interval, 3600);
	ck_assert_uint_eq(cfg->snapshot_keep, 5);
	ck_assert_int_eq(cfg->queue_commit_ms, 0);
	ck_assert_uint_eq(cfg->queue_limit, UINT64_C(100) << 30);
	ck_assert_int_eq(cfg->queue_max_age, 6 * 3600);
	ck_assert_int_eq(cfg->warmup, 0);
	ck_assert_int_eq(cfg->ack_timeout_ms, 1000);
	fg_endpoint_format(&cfg->http, buf, sizeof(buf));
	ck_assert_str_eq(buf, "[::1]:9200");
	ck_assert_str_eq(cfg->control_socket, "/tmp/fg.sock");
	ck_assert_str_eq(cfg->verdict_log, "/var/log/floodgate/verdicts");
	ck_assert_uint_eq(cfg->verdict_log_rotate, 1u << 30);
	ck_assert_uint_eq(cfg->verdict_log_keep, 30);
	ck_assert_int_eq(cfg->report_interval, 300);
	ck_assert_uint_eq(cfg->report_keep, 31);
	ck_assert_int_eq(cfg->dp_mode, FG_DATAPLANE_PASSIVE);
	ck_assert_int_eq(fg_config_split_args(cfg->eal_args, args, sizeof(args), argv, 8), 5);
	ck_assert_str_eq(argv[0], "-l");
	ck_assert_str_eq(argv[3], "net_pcap0,rx_pcap=/tmp/a b.pcap");
	ck_assert_str_eq(argv[4], "--no-pci");
	ck_assert_int_eq(fg_config_split_args(cfg->eal_args, args, sizeof(args), argv, 4), -E2BIG);
	ck_assert_int_eq(fg_config_split_args(cfg->eal_args, args, 8, argv, 8), -ENOSPC);
	ck_assert_str_eq(cfg->port, "0000:3b:00.0");
	ck_assert_uint_eq(cfg->workers, 3);
	ck_assert_uint_eq(cfg->rx_queues, 6);
	ck_assert_uint_eq(cfg->mbufs, 262143);
	ck_assert_uint_eq(cfg->tcp_connections, 65536);
	fg_prefix_format(&cfg->dp_addr[0], buf, sizeof(buf));
	ck_assert_str_eq(buf, "198.51.100.7/28");
	ck_assert_uint_eq(cfg->dp_mac[0], 0x02);
	ck_assert_uint_eq(cfg->dp_mac[5], 0x01);
	ck_assert_uint_eq(cfg->idle_backoff_us, 1000);
	ck_assert(!cfg->dp_gro);
	ck_assert_uint_eq(cfg->n_dp_vlan, 2);
	ck_assert_uint_eq(cfg->dp_vlan[0].id, 10);
	ck_assert_uint_eq(cfg->dp_vlan[0].addr.len, 28);
	ck_assert_uint_eq(cfg->dp_vlan[0].addr.addr[3], 33);
	ck_assert_uint_eq(cfg->dp_vlan[1].id, 20);
	ck_assert_int_eq(cfg->dp_vlan[1].addr.family, 0);
	ck_assert_int_eq(cfg->dp_exception, FG_EXCEPTION_TAP);
	ck_assert_str_eq(cfg->dp_exception_iface, "box-uplink0");
	ck_assert_uint_eq(cfg->dp_exception_rate, 2500);
	ck_assert_int_eq(cfg->log_target, FG_LOG_TO_JOURNAL);
	ck_assert_int_eq(cfg->log_timestamps, FG_LOG_TIME_OFF);
	ck_assert_uint_eq(cfg->n_downstream, 2);
	ck_assert_uint_eq(cfg->downstream[0].addr.port, 119);
	ck_assert_uint_eq(cfg->downstream[0].connections, 4);
	ck_assert_uint_eq(cfg->downstream[0].window, 256);
	ck_assert_int_eq(cfg->downstream[0].mode, FG_DOWNSTREAM_IHAVE);
	ck_assert(cfg->downstream[1].check_first);
	ck_assert(cfg->downstream[1].acknowledges && !cfg->downstream[0].acknowledges);
	ck_assert_uint_eq(cfg->downstream[1].addr.port, 1119);
	ck_assert_uint_eq(cfg->n_peer, 2);
	ck_assert_uint_eq(cfg->peer[0].n_addr, 2);
	ck_assert_str_eq(cfg->peer[0].newsgroups, "*,!junk,!control.*,@alt.binaries.warez.*");
	ck_assert_uint_eq(cfg->peer[0].max_connections, 8);
	ck_assert_uint_eq(cfg->peer[0].max_connection_rate, 3);
	ck_assert_uint_eq(cfg->peer[1].max_connection_rate, 0);
	ck_assert_uint_eq(cfg->peer[0].max_article_size, 10u << 20);
	ck_assert_uint_eq(cfg->peer[0].max_outstanding_offers, 4096);
	ck_assert_uint_eq(cfg->peer[1].max_outstanding_offers, 1024);
	assert_round_trip(cfg);
	fg_config_free(cfg);
}
END_TEST

START_TEST(test_syntax_details)
{
	struct fg_config *cfg;

	/* CRLF, blanks, comments after values, no final newline, "#" inside a word */
	cfg = load_clean("\t[rules]  # the rules\r\n\r\n  cutoff\t9d   # comment\r\n"
			 "[site]\nserver-name news#1#\npath-identity news\n"
			 "[ peer  a-1 ]\naddress 192.0.2.1\n[downstream d]\naddress 127.0.0.1");
	ck_assert_int_eq(cfg->cutoff, 9 * 86400);
	ck_assert_str_eq(cfg->server_name, "news#1#");
	ck_assert_str_eq(cfg->peer[0].name, "a-1");
	fg_config_free(cfg);
	/* quotes: escapes inside, a "#" word, other backslashes literal */
	cfg = load_clean("[site]\nserver-name \"#news\\\"1\\\\\"\npath-identity n\n[peer p]\naddress 192.0.2.1\n"
			 "newsgroups \"a\\*b\"\n[downstream d]\naddress 127.0.0.1\n");
	ck_assert_str_eq(cfg->server_name, "#news\"1\\");
	ck_assert_str_eq(cfg->peer[0].newsgroups, "a\\*b");
	assert_round_trip(cfg);
	fg_config_free(cfg);
	/* off values, "none" headers */
	cfg = load_clean("[stats]\nhttp off\nverdict-log off\n[rules]\nrequired-headers none\n"
			 PEER_AND_DS);
	ck_assert_uint_eq(cfg->http.port, 0);
	ck_assert_uint_eq(cfg->n_required_headers, 0);
	assert_round_trip(cfg);
	fg_config_free(cfg);
	/* a section may be reopened; its keys are still unique */
	cfg = load_clean("[rules]\ncutoff 8d\n[session]\n[rules]\nfuture-margin 1h\n" PEER_AND_DS);
	ck_assert_int_eq(cfg->future_margin, 3600);
	fg_config_free(cfg);
	/* an empty file is the defaults, with the two warnings that say so */
	cfg = load("");
	ck_assert_ptr_nonnull(cfg);
	ck_assert_uint_eq(errs.n_warn, 2);
	ck_assert_str_eq(errs.warn[0].text, "t.conf: peer: no [peer] sections: every "
			 "connection will be refused");
	ck_assert_str_eq(errs.warn[1].text, "t.conf: downstream: no [downstream] sections: "
			 "accepted articles are queued but relayed nowhere, and warm-up "
			 "lookups are off");
	fg_config_free(cfg);
	/* passive mode needs no downstream */
	cfg = load("[dataplane]\nmode passive\n[peer p]\naddress 192.0.2.1\n");
	ck_assert_ptr_nonnull(cfg);
	ck_assert_uint_eq(errs.n_warn, 0);
	fg_config_free(cfg);
}
END_TEST

/* ---------------------------------------------------------------- errors */

START_TEST(test_structure_errors)
{
	expect_error("cutoff 9d\n" PEER_AND_DS,
		     "t.conf:1: cutoff: key outside any section (start with [site])");
	expect_error("[rulez]\ncutoff 9d\n" PEER_AND_DS,
		     "t.conf:1: [rulez]: unknown section (known: site, rules, session, history, "
		     "persistence, stats, dataplane, log, cluster, peer NAME, downstream NAME)");
	expect_error("[rules]\ncutof 9d\n" PEER_AND_DS, "t.conf:2: cutof: unknown key in [rules]");
	expect_error("[rules]\nmax-line 600\n" PEER_AND_DS,
		     "t.conf:2: max-line: unknown key in [rules] (it belongs in [session])");
	expect_error("[rules]\ncutoff 9d\ncutoff 8d\n" PEER_AND_DS,
		     "t.conf:3: cutoff: already set at line 2");
	expect_error("[rules]\ncutoff 9d\n[rules]\ncutoff 8d\n" PEER_AND_DS,
		     "t.conf:4: cutoff: already set at line 2");
	expect_error(PEER_AND_DS "[peer p]\naddress 192.0.2.2\n",
		     "t.conf:5: [peer p]: duplicate peer name (first at line 1)");
	expect_error(PEER_AND_DS "[downstream d]\naddress 127.0.0.2\n",
		     "t.conf:5: [downstream d]: duplicate downstream name (first at line 3)");
	expect_error("[rules\n" PEER_AND_DS, "t.conf:1: [rules: section header without \"]\"");
	expect_error("[rules] cutoff 9d\n" PEER_AND_DS,
		     "t.conf:1: [rules]: text after the section header");
	expect_error("[peer]\n" PEER_AND_DS, "t.conf:1: [peer]: needs exactly one name: "
		     "[peer NAME]");
	expect_error("[peer a b]\n" PEER_AND_DS, "t.conf:1: [peer a b]: needs exactly one "
		     "name: [peer NAME]");
	expect_error("[rules strict]\n" PEER_AND_DS, "t.conf:1: [rules strict]: [rules] takes "
		     "no name");
	expect_error("[peer a/b]\n" PEER_AND_DS, "t.conf:1: [peer a/b]: a name is 1-63 "
		     "letters, digits, \"-\", \"_\" or \".\"");
	expect_error("[]\n" PEER_AND_DS, "t.conf:1: []: unknown section (known: site, rules, "
		     "session, history, persistence, stats, dataplane, log, cluster, peer NAME, "
		     "downstream NAME)");
	/* keys of a refused section are not reported again */
	expect_error("[bogus]\nfoo 1\nbar 2\n" PEER_AND_DS,
		     "t.conf:1: [bogus]: unknown section (known: site, rules, session, history, "
		     "persistence, stats, dataplane, log, cluster, peer NAME, downstream NAME)");
}
END_TEST

/* [cluster]: off by default; seeds need a secret and host:port words. */
START_TEST(test_cluster_section)
{
	struct fg_config *cfg = load(PEER_AND_DS);

	ck_assert_msg(cfg != NULL, "refused:%s", all_errors());
	ck_assert_str_eq(cfg->cluster_seeds, "");
	ck_assert_int_eq(cfg->cluster_window_ms, 3600 * 1000);
	ck_assert_int_eq(cfg->cluster_timeout_ms, 50);
	fg_config_free(cfg);
	cfg = load("[cluster]\nseeds 10.0.0.1:7000,10.0.0.2:7001\nsecret s3cret\nbox b1\n"
		   "window 30m\ntimeout 20ms\npassword pw\n" PEER_AND_DS);
	ck_assert_msg(cfg != NULL, "refused:%s", all_errors());
	ck_assert_str_eq(cfg->cluster_seeds, "10.0.0.1:7000,10.0.0.2:7001");
	ck_assert_str_eq(cfg->cluster_secret, "s3cret");
	ck_assert_str_eq(cfg->cluster_password, "pw");
	ck_assert_str_eq(cfg->cluster_box, "b1");
	ck_assert_int_eq(cfg->cluster_window_ms, 30 * 60 * 1000);
	ck_assert_int_eq(cfg->cluster_timeout_ms, 20);
	fg_config_free(cfg);
	expect_error("[cluster]\nseeds 10.0.0.1:7000\n" PEER_AND_DS,
		     "t.conf:2: seeds: needs [cluster] secret (the same on every box of the "
		     "site: it keys the hash of the IDs in the cluster)");
	expect_error("[cluster]\nseeds 10.0.0.1:7000,10.0.0.2\nsecret s\n" PEER_AND_DS,
		     "t.conf:2: seeds: \"10.0.0.2\" is not host:port (seeds are "
		     "host:port,host:port)");
	expect_error("[cluster]\nseeds :7000\nsecret s\n" PEER_AND_DS,
		     "t.conf:2: seeds: \":7000\" is not host:port (seeds are host:port,host:port)");
	expect_error("[cluster]\nseeds h:70x\nsecret s\n" PEER_AND_DS,
		     "t.conf:2: seeds: \"h:70x\" is not host:port (seeds are host:port,host:port)");
}
END_TEST

START_TEST(test_line_errors)
{
	char big[5000];

	expect_error("[rules]\ncutoff \"9d\n" PEER_AND_DS, "t.conf:2: cutoff: unterminated quote");
	expect_error("[rules]\ncutoff \"9d\"x\n" PEER_AND_DS,
		     "t.conf:2: cutoff: text after a closing quote (put a blank after it)");
	expect_error("[rules]\ncutoff 9\"d\n" PEER_AND_DS,
		     "t.conf:2: cutoff: a quote inside a word (quote the whole word)");
	expect_error("[rules]\ncutoff 9d\x01\n" PEER_AND_DS,
		     "t.conf:2: line: control character 0x01");
	{
		static const char nul[] = "[rules]\ncutoff 9d\0x\n" PEER_AND_DS;
		struct fg_config *cfg = fg_config_load_text("t.conf", nul, sizeof(nul) - 1, &errs);

		ck_assert_ptr_null(cfg);
		ck_assert_str_eq(errs.err[0].text, "t.conf:2: line: control character 0x00");
	}
	snprintf(big, sizeof(big), "[rules]\ncutoff %04100d\n" PEER_AND_DS, 9);
	expect_error(big, "t.conf:2: line: longer than 4096 octets");
	/* a long comment is fine; a long header hides its keys */
	memset(big, '#', 4200);
	big[4200] = '\0';
	fg_config_free(load_clean(strcat(big, "\n" PEER_AND_DS)));
	snprintf(big, sizeof(big), "[%04500d]\ncutoff 1x\n" PEER_AND_DS, 0);
	expect_error(big, "t.conf:1: line: longer than 4096 octets");
	expect_error("[rules]\ncutoff\n" PEER_AND_DS, "t.conf:2: cutoff: missing value");
	expect_error("[rules]\ncutoff 9d 1h\n" PEER_AND_DS, "t.conf:2: cutoff: expects one "
		     "value, got 2 (quote a value that holds blanks)");
}
END_TEST

START_TEST(test_value_errors)
{
	expect_error("[rules]\ncutoff 9x\n" PEER_AND_DS,
		     "t.conf:2: cutoff: \"9x\" is not a duration (90, 10d, 1d12h, 250ms)");
	expect_error("[rules]\ncutoff 0\n" PEER_AND_DS,
		     "t.conf:2: cutoff: 0 is out of range: must be at least 1s");
	expect_error("[stats]\nreport-interval 0\n" PEER_AND_DS,
		     "t.conf:2: report-interval: 0 is out of range: must be between 1s and 1h");
	expect_error("[stats]\nreport-keep 401\n" PEER_AND_DS,
		     "t.conf:2: report-keep: 401 is out of range: must be between 1 and 400");
	expect_error("[session]\noffer-timeout 2h\n" PEER_AND_DS,
		     "t.conf:2: offer-timeout: 2h is out of range: must be between 1s and 1h");
	expect_error("[session]\nmax-line 511\n" PEER_AND_DS,
		     "t.conf:2: max-line: 511 is out of range: must be between 512 and 65536");
	expect_error("[session]\nmax-line 5e2\n" PEER_AND_DS,
		     "t.conf:2: max-line: \"5e2\" is not a whole number");
	expect_error("[session]\nmax-line 99999999999\n" PEER_AND_DS,
		     "t.conf:2: max-line: 99999999999 is out of range: must be between 512 "
		     "and 65536");
	expect_error("[peer q]\naddress 192.0.2.9\nmax-outstanding-offers 0\n" PEER_AND_DS,
		     "t.conf:3: max-outstanding-offers: 0 is out of range: must be between 1 "
		     "and 16777216");
	expect_error("[history]\ncapacity 0\n" PEER_AND_DS,
		     "t.conf:2: capacity: 0 is out of range: must be between 1 and 1T");
	expect_error("[history]\ncapacity 2T\n" PEER_AND_DS,
		     "t.conf:2: capacity: 2T is out of range: must be between 1 and 1T");
	expect_error("[history]\nshards 3\n" PEER_AND_DS,
		     "t.conf:2: shards: 3 is not a power of two (or 0 for one shard per 16M entries)");
	expect_error("[history]\nshards 512\n" PEER_AND_DS,
		     "t.conf:2: shards: 512 is out of range: must be between 0 and 256");
	expect_error("[history]\nalarm-load 101%\n" PEER_AND_DS,
		     "t.conf:2: alarm-load: 101 is out of range: must be between 1 and 100");
	expect_error("[history]\nalarm-load ninety\n" PEER_AND_DS,
		     "t.conf:2: alarm-load: \"ninety\" is not a percentage (90 or 90%)");
	expect_error("[history]\nshm-path dev/shm\n" PEER_AND_DS,
		     "t.conf:2: shm-path: \"dev/shm\" is not an absolute path");
	expect_error("[history]\nfull-policy panic\n" PEER_AND_DS,
		     "t.conf:2: full-policy: \"panic\" is not one of: defer, evict-oldest");
	expect_error("[rules]\nhonor-supersedes maybe\n" PEER_AND_DS,
		     "t.conf:2: honor-supersedes: \"maybe\" is not on/off, yes/no or true/false");
	expect_error("[log]\ntarget file\n" PEER_AND_DS,
		     "t.conf:2: target: \"file\" is not one of: stderr, journal, syslog");
	expect_error("[log]\ntimestamps yes\n" PEER_AND_DS,
		     "t.conf:2: timestamps: \"yes\" is not one of: auto, on, off");
	expect_error("[dataplane]\nworkers 0\n" PEER_AND_DS,
		     "t.conf:2: workers: 0 is out of range: must be between 1 and 127");
	expect_error("[dataplane]\naddress 10.99.0.0/24\n" PEER_AND_DS,
		     "t.conf:2: address: 10.99.0.0/24 is a network; give our address on it "
		     "(10.99.0.1/24, 2001:db8::1/64)");
	expect_error("[dataplane]\naddress fd00::/64\n" PEER_AND_DS,
		     "t.conf:2: address: fd00::/64 is a network; give our address on it "
		     "(10.99.0.1/24, 2001:db8::1/64)");
	expect_error("[dataplane]\naddress 10.99.0.1/24 fd00::1/64 10.99.0.1/16\n" PEER_AND_DS,
		     "t.conf:2: address: 10.99.0.1/16 listed twice");
	expect_error("[dataplane]\nmac 01:00:5e:00:00:01\n" PEER_AND_DS,
		     "t.conf:2: mac: 01:00:5e:00:00:01 is not a unicast address");
	expect_error("[dataplane]\nmac 02:00:5e:00:00\n" PEER_AND_DS,
		     "t.conf:2: mac: \"02:00:5e:00:00\" is not a MAC address (02:00:00:00:00:01) "
		     "or auto");
	expect_error("[dataplane]\nvlan 4095 10.0.0.1/24\n" PEER_AND_DS,
		     "t.conf:2: vlan: \"4095\" is not a VLAN ID (1 to 4094)");
	expect_error("[dataplane]\nvlan 0\n" PEER_AND_DS,
		     "t.conf:2: vlan: \"0\" is not a VLAN ID (1 to 4094)");
	expect_error("[dataplane]\nvlan ten\n" PEER_AND_DS,
		     "t.conf:2: vlan: \"ten\" is not a VLAN ID (1 to 4094)");
	expect_error("[dataplane]\nvlan 10 10.0.0.1/24\nvlan 10 10.0.1.1/24\n" PEER_AND_DS,
		     "t.conf:3: vlan: VLAN 10 is listed twice");
	expect_error("[dataplane]\nvlan 10\nvlan 20\n" PEER_AND_DS,
		     "t.conf:3: vlan: `address` is on VLAN 10 already");
	expect_error("[dataplane]\nvlan 10 10.0.0.0/24\n" PEER_AND_DS,
		     "t.conf:2: vlan: 10.0.0.0/24 is a network; give our address on it "
		     "(10.99.0.1/24, 2001:db8::1/64)");
	expect_error("[dataplane]\nvlan 10 10.0.0.1/24 10.0.0.2/24\n" PEER_AND_DS,
		     "t.conf:2: vlan: expects a VLAN ID and at most one address");
	expect_error("[dataplane]\nvlan 10 10.99.0.1/24\n" PEER_AND_DS,
		     "t.conf:2: vlan: VLAN 10: the address is in `address` already (`vlan 10` "
		     "alone puts `address` on the VLAN)");
	expect_error("[dataplane]\naddress 10.99.0.1/24\naddress 2001:db8::1/64\nvlan 10\n"
		     PEER_AND_DS,
		     "t.conf:4: vlan: VLAN 10: `vlan 10` alone would put `address` on the VLAN, "
		     "and IPv6 addresses are untagged in this version (give the IPv4 address: "
		     "`vlan 10 ADDRESS/LEN`)");
	expect_error("[dataplane]\nvlan 10 2001:db8:10::1/64\n" PEER_AND_DS,
		     "t.conf:2: vlan: VLAN 10: IPv6 addresses are untagged in this version");
	expect_error("[dataplane]\naddress 10.99.0.1/24\nvlan 1 10.1.0.1/24\nvlan 2 10.2.0.1/24\n"
		     "vlan 3 10.3.0.1/24\nvlan 4 10.4.0.1/24\nvlan 5 10.5.0.1/24\n"
		     "vlan 6 10.6.0.1/24\nvlan 7 10.7.0.1/24\naddress 10.98.0.1/24\n" PEER_AND_DS,
		     "t.conf:9: vlan: 9 IPv4 addresses in `address` and `vlan` together: "
		     "a port has at most 8");
	expect_error("[dataplane]\nexception-path kernel\n" PEER_AND_DS,
		     "t.conf:2: exception-path: \"kernel\" is not one of: none, tap");
	expect_error("[dataplane]\nexception-iface a-name-too-long0\n" PEER_AND_DS,
		     "t.conf:2: exception-iface: too long (at most 15 octets)");
	expect_error("[dataplane]\nexception-rate 0\n" PEER_AND_DS,
		     "t.conf:2: exception-rate: 0 is out of range: must be between 1 and 10000000");
	expect_error("[dataplane]\nport \"net tap\"\n" PEER_AND_DS,
		     "t.conf:2: port: must be printable ASCII without blanks");
	expect_error("[site]\nlisten 192.0.2.1:0\n" PEER_AND_DS,
		     "t.conf:2: listen: \"192.0.2.1:0\" is not an address:port (IPv6 as "
		     "[addr]:port; port 1-65535)");
	expect_error("[stats]\nhttp 127.0.0.1\n" PEER_AND_DS,
		     "t.conf:2: http: \"127.0.0.1\" is not an address:port (the port is "
		     "required; IPv6 as [addr]:port)");
	expect_error("[site]\npath-identity news!example\n" PEER_AND_DS,
		     "t.conf:2: path-identity: \"news!example\" is not a path identity (RFC 5536 "
		     "3.1.5; at most 63 octets)");
	expect_error("[site]\nlisten 192.0.2.1:1 192.0.2.1:2 192.0.2.1:3 192.0.2.1:4 "
		     "192.0.2.1:5 192.0.2.1:6 192.0.2.1:7 192.0.2.1:8 192.0.2.1:9\n" PEER_AND_DS,
		     "t.conf:2: listen: too many values (at most 8)");
	expect_error("[rules]\nrequired-headers From From\n" PEER_AND_DS,
		     "t.conf:2: required-headers: From listed twice");
	expect_error("[rules]\nrequired-headers Subject:\n" PEER_AND_DS,
		     "t.conf:2: required-headers: \"Subject:\" is not a header field name (at "
		     "most 31 octets)");
	expect_error("[peer p]\naddress 192.0.2.10/24\n[downstream d]\naddress 127.0.0.1\n",
		     "t.conf:2: address: 192.0.2.10/24 has host bits set (did you mean "
		     "192.0.2.0/24?)");
	expect_error("[peer p]\naddress 192.0.2.1\nnewsgroups comp.*,[a-\n"
		     "[downstream d]\naddress 127.0.0.1\n",
		     "t.conf:3: newsgroups: \"comp.*,[a-\": unterminated character class "
		     "(missing \"]\") (at offset 7)");
	expect_error("[peer p]\naddress 192.0.2.1\nnewsgroups *, ,junk\n"
		     "[downstream d]\naddress 127.0.0.1\n",
		     "t.conf:3: newsgroups: \"*,,junk\": empty pattern (at offset 2)");
	expect_error("[peer p]\naddress 192.0.2.1\nmax-connections -1\n"
		     "[downstream d]\naddress 127.0.0.1\n",
		     "t.conf:3: max-connections: \"-1\" is not a whole number");
	expect_error("[downstream d]\naddress 127.0.0.1\nmode nntp\n[peer p]\naddress 192.0.2.1\n",
		     "t.conf:3: mode: \"nntp\" is not one of: stream, ihave");
}
END_TEST

START_TEST(test_section_checks)
{
	expect_error("[peer p]\nnewsgroups *\n[downstream d]\naddress 127.0.0.1\n",
		     "t.conf:1: address: peer p has no address");
	expect_error("[downstream d]\nwindow 8\n[peer p]\naddress 192.0.2.1\n",
		     "t.conf:1: address: downstream d has no address");
	expect_error("[peer a]\naddress 192.0.2.0/24\n[peer b]\naddress 192.0.2.0/24\n"
		     "[downstream d]\naddress 127.0.0.1\n",
		     "t.conf:4: address: 192.0.2.0/24 is also peer a's (line 2): a connection "
		     "must map to one peer");
	expect_error("[peer a]\naddress 2001:db8::/32 192.0.2.1\naddress 2001:db8::/32\n"
		     "[downstream d]\naddress 127.0.0.1\n",
		     "t.conf:3: address: 2001:db8::/32 is listed twice (line 2)");
	expect_warning("[peer a]\naddress 192.0.2.0/24\n[peer b]\naddress 192.0.2.128/25\n"
		       "[downstream d]\naddress 127.0.0.1\n",
		       "t.conf:4: address: 192.0.2.128/25 overlaps peer a's 192.0.2.0/24 "
		       "(line 2): connections from 192.0.2.128/25 belong to peer b (the most "
		       "specific prefix wins)");
	expect_warning("[peer b]\naddress 192.0.2.7\n[peer a]\naddress 192.0.2.0/24\n"
		       "[downstream d]\naddress 127.0.0.1\n",
		       "t.conf:4: address: 192.0.2.0/24 overlaps peer b's 192.0.2.7 (line 2): "
		       "connections from 192.0.2.7 belong to peer b (the most specific prefix "
		       "wins)");
	/* nested prefixes inside one peer are harmless */
	fg_config_free(load_clean("[peer a]\naddress 192.0.2.0/24 192.0.2.7\n"
				  "[downstream d]\naddress 127.0.0.1\n"));
	expect_error("[downstream a]\naddress 127.0.0.1\n[downstream b]\naddress 127.0.0.1:119\n"
		     "[peer p]\naddress 192.0.2.1\n",
		     "t.conf:4: address: same server as downstream a");
	expect_warning("[downstream d]\naddress 127.0.0.1\nmode ihave\ncheck-first on\n"
		       "[peer p]\naddress 192.0.2.1\n",
		       "t.conf:4: check-first: ignored with mode ihave (IHAVE always asks first)");
	expect_warning("[downstream d]\naddress 127.0.0.1\nmode ihave\nacknowledges on\n"
		       "[peer p]\naddress 192.0.2.1\n",
		       "t.conf:4: acknowledges: downstream d: mode ihave streams nothing: its "
		       "articles take the queue's path (written and synced first)");
	expect_error("[rules]\nversion-numbers off\nhonor-versions on\n" PEER_AND_DS,
		     "t.conf:3: honor-versions: needs version-numbers on (the side index finds "
		     "the newer version)");
	expect_error("[dataplane]\nworkers 4\nrx-queues 2\n" PEER_AND_DS,
		     "t.conf:3: rx-queues: 2 is fewer than workers 4: every worker polls a "
		     "queue of its own");
	expect_error("[stats]\ncontrol-socket /run/floodgate/a-very-long-directory-name/"
		     "another-very-long-directory-name/yet-another-long-directory/the.sock\n"
		     PEER_AND_DS,
		     "t.conf:2: control-socket: too long for a unix socket (at most 107 octets)");
	expect_error("[site]\nlisten [::1]:119 [::1]\n" PEER_AND_DS,
		     "t.conf:2: listen: an address is listed twice");
	expect_error("[site]\nserver-name \"news server\"\n" PEER_AND_DS,
		     "t.conf:2: server-name: must be printable ASCII without blanks");
}
END_TEST

/* A refused value gets no default and no follow-on complaint about it. */
START_TEST(test_no_cascade)
{
	expect_error("[peer p]\naddress 192.0.2.300\n[downstream d]\naddress 127.0.0.1\n",
		     "t.conf:2: address: \"192.0.2.300\" is not an IPv4 or IPv6 address or prefix");
	expect_error("[peer p]\naddress \"192.0.2.1\n[downstream d]\naddress 127.0.0.1\n",
		     "t.conf:2: address: unterminated quote");
	expect_error("[rules]\ncutoff 2d\nretention x\n" PEER_AND_DS,
		     "t.conf:3: retention: \"x\" is not a duration (90, 10d, 1d12h, 250ms)");
	expect_error("[rules]\ncutoff bad\nretention 2d\n" PEER_AND_DS,
		     "t.conf:2: cutoff: \"bad\" is not a duration (90, 10d, 1d12h, 250ms)");
	expect_error("[dataplane]\nworkers many\nrx-queues 1\n" PEER_AND_DS,
		     "t.conf:2: workers: \"many\" is not a whole number");
}
END_TEST

START_TEST(test_error_collection)
{
	struct fg_config *cfg;
	char text[8192] = "[rules]\n";

	cfg = load("[rules]\ncutoff 1x\nfuture-margin 2d\nbogus on\n[peer]\n"
		   "[session]\nmax-line 1\n[peer p]\n[downstream d]\naddress 127.0.0.1\n");
	ck_assert_ptr_null(cfg);
	ck_assert_uint_eq(errs.total, 6);
	ck_assert_uint_eq(errs.n, 6);
	ck_assert_str_eq(errs.err[0].text, "t.conf:2: cutoff: \"1x\" is not a duration (90, 10d, "
			 "1d12h, 250ms)");
	ck_assert_str_eq(errs.err[1].text, "t.conf:4: bogus: unknown key in [rules]");
	ck_assert_str_eq(errs.err[2].text, "t.conf:5: [peer]: needs exactly one name: "
			 "[peer NAME]");
	ck_assert_str_eq(errs.err[3].text, "t.conf:7: max-line: 1 is out of range: must be "
			 "between 512 and 65536");
	ck_assert_str_eq(errs.err[4].text, "t.conf:3: future-margin: 2d is more than 24h: "
			 "RFC 5537 3.6 rejects articles dated more than 24 hours ahead; only a "
			 "smaller margin is allowed");
	ck_assert_str_eq(errs.err[5].text, "t.conf:8: address: peer p has no address");
	/* the parts, for `floodctl config --check --json` */
	ck_assert_uint_eq(errs.err[2].line, 5);
	ck_assert_int_eq(errs.err[2].key_len, 6);
	ck_assert_int_eq(strncmp(errs.err[2].text + errs.err[2].key_off, "[peer]", 6), 0);
	ck_assert_str_eq(errs.err[2].text + errs.err[2].msg_off, "needs exactly one name: [peer NAME]");
	ck_assert_uint_eq(errs.err[4].line, 3);
	ck_assert_int_eq(strncmp(errs.err[4].text + errs.err[4].key_off, "future-margin",
				 errs.err[4].key_len), 0);

	/* more than the struct keeps: all counted, the first 32 kept */
	for (int i = 0; i < 40; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "unknown-%d 1\n", i);
	cfg = load(text);
	ck_assert_ptr_null(cfg);
	ck_assert_uint_eq(errs.total, 40);
	ck_assert_uint_eq(errs.n, 32);
	ck_assert_str_eq(errs.err[31].text, "t.conf:33: unknown-31: unknown key in [rules]");
}
END_TEST

/* ---------------------------------------------------------------- RFC 5537 */

START_TEST(test_future_margin_boundary)
{
	struct fg_config *cfg = load_clean("[rules]\nfuture-margin 24h\n" PEER_AND_DS);

	ck_assert_int_eq(cfg->future_margin, 86400);
	fg_config_free(cfg);
	fg_config_free(load_clean("[rules]\nfuture-margin 0\n" PEER_AND_DS));
	expect_error("[rules]\nfuture-margin 86401\n" PEER_AND_DS,
		     "t.conf:2: future-margin: 86401s is more than 24h: RFC 5537 3.6 rejects "
		     "articles dated more than 24 hours ahead; only a smaller margin is allowed");
}
END_TEST

START_TEST(test_retention_boundary)
{
	struct fg_config *cfg;

	/* RFC 5537 3.3: first-seen retention >= cutoff + 24 h, exactly */
	cfg = load_clean("[rules]\ncutoff 10d\nretention 11d\n" PEER_AND_DS);
	ck_assert_int_eq(cfg->retention, 11 * 86400);
	fg_config_free(cfg);
	expect_error("[rules]\ncutoff 10d\nretention 950399\n" PEER_AND_DS,
		     "t.conf:3: retention: 950399s is less than cutoff 10d + 24h: RFC 5537 3.3 "
		     "requires first-seen expiry to keep history at least 24 hours longer than "
		     "the cutoff");
	/* order of the lines does not matter; the retention line is named */
	expect_error("[rules]\nretention 8d\nexpiry first-seen\ncutoff 8d\n" PEER_AND_DS,
		     "t.conf:2: retention: 8d is less than cutoff 8d + 24h: RFC 5537 3.3 "
		     "requires first-seen expiry to keep history at least 24 hours longer than "
		     "the cutoff");
	/* by article date, retention plays no part */
	fg_config_free(load_clean("[rules]\nexpiry article-date\nretention 1d\n" PEER_AND_DS));
	/* derived retention always satisfies the rule */
	cfg = load_clean("[rules]\ncutoff 45d\n" PEER_AND_DS);
	ck_assert_int_eq(cfg->retention, 46 * 86400);
	ck_assert_int_eq(cfg->warmup, 45 * 86400);
	fg_config_free(cfg);
}
END_TEST

START_TEST(test_cutoff_boundaries)
{
	struct fg_config *cfg;

	cfg = load_clean("[rules]\ncutoff 45d\n" PEER_AND_DS);
	ck_assert_int_eq(cfg->cutoff, FG_CUTOFF_MAX);
	fg_config_free(cfg);
	expect_error("[rules]\ncutoff 3888001\n" PEER_AND_DS,
		     "t.conf:2: cutoff: 3888001s is more than 45d: history entries keep the "
		     "article date as an offset from first-seen, which reaches back 45d at "
		     "most (docs/history.md)");
	fg_config_free(load_clean("[rules]\ncutoff 7d\n" PEER_AND_DS));
	expect_warning("[rules]\ncutoff 604799\n" PEER_AND_DS,
		       "t.conf:2: cutoff: 604799s is under 7 days: articles still propagating "
		       "will be rejected as too old (RFC 5537 3.3)");
	/* a warning does not refuse: the values are used */
	cfg = load("[rules]\ncutoff 1d\n" PEER_AND_DS);
	ck_assert_ptr_nonnull(cfg);
	ck_assert_int_eq(cfg->retention, 2 * 86400);
	fg_config_free(cfg);
}
END_TEST

/* ---------------------------------------------------------------- lookup */

START_TEST(test_find_peer)
{
	struct fg_config *cfg = load("[peer wide]\naddress 192.0.2.0/24 2001:db8::/32\n"
				     "[peer narrow]\naddress 192.0.2.64/26\n"
				     "[peer host]\naddress 192.0.2.70 2001:db8:0:1::/64\n"
				     "[peer everyone-v6]\naddress ::/0\n"
				     "[downstream d]\naddress 127.0.0.1\n");
	uint8_t a[16];

	ck_assert_msg(cfg != NULL, "%s", all_errors());
	inet_pton(AF_INET, "192.0.2.70", a);
	ck_assert_str_eq(fg_config_find_peer(cfg, AF_INET, a)->name, "host");
	inet_pton(AF_INET, "192.0.2.71", a);
	ck_assert_str_eq(fg_config_find_peer(cfg, AF_INET, a)->name, "narrow");
	inet_pton(AF_INET, "192.0.2.1", a);
	ck_assert_str_eq(fg_config_find_peer(cfg, AF_INET, a)->name, "wide");
	inet_pton(AF_INET, "198.51.100.1", a);
	ck_assert_ptr_null(fg_config_find_peer(cfg, AF_INET, a));
	inet_pton(AF_INET6, "2001:db8:0:1::5", a);
	ck_assert_str_eq(fg_config_find_peer(cfg, AF_INET6, a)->name, "host");
	inet_pton(AF_INET6, "2001:db8:0:2::5", a);
	ck_assert_str_eq(fg_config_find_peer(cfg, AF_INET6, a)->name, "wide");
	inet_pton(AF_INET6, "fe80::1", a);
	ck_assert_str_eq(fg_config_find_peer(cfg, AF_INET6, a)->name, "everyone-v6");
	/* an IPv4-mapped IPv6 address is IPv6 here: the caller unmaps */
	inet_pton(AF_INET6, "::ffff:192.0.2.70", a);
	ck_assert_str_eq(fg_config_find_peer(cfg, AF_INET6, a)->name, "everyone-v6");
	fg_config_free(cfg);
}
END_TEST

/* ---------------------------------------------------------------- files */

START_TEST(test_load_file)
{
	char path[] = "/tmp/fg-config-test-XXXXXX";
	int fd = mkstemp(path);
	static const char text[] = "[rules]\ncutoff 1x\n" PEER_AND_DS;
	struct fg_config *cfg;
	char want[128];

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, sizeof(text) - 1), (int)sizeof(text) - 1);
	close(fd);
	cfg = fg_config_load_file(path, &errs);
	ck_assert_ptr_null(cfg);
	snprintf(want, sizeof(want), "%s:2: cutoff: \"1x\" is not a duration (90, 10d, 1d12h, "
		 "250ms)", path);
	ck_assert_str_eq(errs.err[0].text, want);
	unlink(path);
	cfg = fg_config_load_file(path, &errs);
	ck_assert_ptr_null(cfg);
	snprintf(want, sizeof(want), "%s: cannot read: No such file or directory", path);
	ck_assert_str_eq(errs.err[0].text, want);
	ck_assert_uint_eq(errs.total, 1);
	cfg = fg_config_load_file("/tmp", &errs);
	ck_assert_ptr_null(cfg);
	ck_assert_str_eq(errs.err[0].text, "/tmp: cannot read: Invalid argument (not a "
			 "regular file)");
}
END_TEST

START_TEST(test_errors_log)
{
	struct fg_test_logcap cap;

	ck_assert_ptr_null(load("[rules]\ncutoff 1d\nbogus 1\n"));
	fg_test_logcap_start(&cap);
	fg_config_errors_log(&errs);
	fg_test_logcap_stop();
	ck_assert(fg_test_logcap_has(&cap, "err config: t.conf:3: bogus: unknown key in [rules]\n"));
	ck_assert(fg_test_logcap_has(&cap, "warn config: t.conf:2: cutoff: 1d is under 7 days"));
	ck_assert_uint_eq(cap.lines, 4);	/* 1 error, 3 warnings (cutoff, peers, downstream) */
}
END_TEST

START_TEST(test_format_truncation)
{
	struct fg_config *cfg = fg_config_load_default(&errs);
	char small[100];
	size_t n = fg_config_format(cfg, fmtbuf, sizeof(fmtbuf));

	ck_assert_uint_eq(fg_config_format(cfg, small, sizeof(small)), n);
	ck_assert_uint_eq(strlen(small), sizeof(small) - 1);
	ck_assert(strncmp(small, fmtbuf, sizeof(small) - 1) == 0);
	ck_assert_uint_eq(fg_config_format(cfg, NULL, 0), n);
	fg_config_free(cfg);
}
END_TEST

/* ---------------------------------------------------------------- docs */

static char *read_doc(void)
{
	const char *top = getenv("FG_TOP");
	char path[512];
	FILE *f;
	char *doc = malloc(1 << 20);
	size_t n;

	snprintf(path, sizeof(path), "%s/docs/configuration.md", top ? top : ".");
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s (run from the top directory or set FG_TOP)",
		      path);
	n = fread(doc, 1, (1 << 20) - 1, f);
	doc[n] = '\0';
	fclose(f);
	return doc;
}

/* The text of "### [section...]" up to the next "### " heading. */
static char *doc_section(const char *doc, const char *section, char *buf, size_t len)
{
	char head[64];
	const char *s, *e;

	snprintf(head, sizeof(head), "\n### [%s", section);
	s = strstr(doc, head);
	ck_assert_msg(s != NULL, "docs/configuration.md has no \"### [%s\" heading", section);
	e = strstr(s + 1, "\n### ");
	if (!e)
		e = s + strlen(s);
	snprintf(buf, len, "%.*s", (int)(e - s), s);
	return buf;
}

/* docs/configuration.md: a table row "| `key` |" for every key, under its
 * section's heading, no row for a key the parser does not know, and the
 * embedded default quoted in full. */
START_TEST(test_docs_match_parser)
{
	char *doc = read_doc(), *sec = malloc(1 << 16);
	const char *section, *key;
	char row[96];

	for (unsigned i = 0; fg_config_key_at(i, &section, &key); i++) {
		snprintf(row, sizeof(row), "\n| `%s` |", key);
		ck_assert_msg(strstr(doc_section(doc, section, sec, 1 << 16), row),
			      "docs/configuration.md: [%s] has no row for `%s`", section, key);
	}
	/* every documented row names a key of its section */
	for (const char *h = strstr(doc, "\n### ["); h; h = strstr(h + 1, "\n### [")) {
		char name[32];
		const char *r;

		sscanf(h, "\n### [%31[a-z]", name);
		doc_section(doc, name, sec, 1 << 16);
		for (r = strstr(sec, "\n| `"); r; r = strstr(r + 1, "\n| `")) {
			char k[64];
			bool found = false;

			sscanf(r, "\n| `%63[^`]`", k);
			for (unsigned i = 0; fg_config_key_at(i, &section, &key); i++)
				found |= strcmp(section, name) == 0 && strcmp(key, k) == 0;
			ck_assert_msg(found, "docs/configuration.md documents unknown key "
				      "[%s] %s", name, k);
		}
	}
	ck_assert_msg(strstr(doc, fg_config_default_text),
		      "docs/configuration.md does not quote fg_config_default_text exactly");
	/* every ```conf block is a whole configuration that loads cleanly */
	unsigned blocks = 0;

	for (const char *b = strstr(doc, "\n```conf\n"); b; b = strstr(b + 1, "\n```conf\n")) {
		const char *start = b + 9, *end = strstr(start, "\n```");
		struct fg_config *cfg;

		ck_assert_ptr_nonnull(end);
		cfg = fg_config_load_text("doc", start, (size_t)(end - start) + 1, &errs);
		ck_assert_msg(cfg && errs.n_warn == 0, "a conf block of docs/configuration.md "
			      "does not load cleanly:%s", all_errors());
		fg_config_free(cfg);
		blocks++;
	}
	ck_assert_uint_ge(blocks, 2);
	free(sec);
	free(doc);
}
END_TEST

/* Write `text` to a file of its own; the path in `path`. */
static void write_conf(char *path, size_t len, const char *text)
{
	FILE *f;

	snprintf(path, len, "/tmp/fg-config-reload-%d.conf", (int)getpid());
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* text written to path and loaded as a reload does, its report to f */
static struct fg_config *reload_text(char *path, size_t plen, const char *text, FILE *f)
{
	struct fg_config *c;

	write_conf(path, plen, text);
	c = fg_config_reload_load(path, f);
	ck_assert_ptr_nonnull(c);
	return c;
}

/* What a running dataplane does with a new file (config_reload.c): every
 * error listed and nothing loaded; a key that sizes what exists and
 * differs is named "needs a restart" and refuses the reload, unless the
 * dataplane applies it live; the others are listed as applied. */
START_TEST(test_reload_report)
{
	char path[64], *out = NULL;
	size_t len = 0;
	struct fg_config *old, *n;
	FILE *f;

	write_conf(path, sizeof(path), "[site]\nlisten 127.0.0.1:1119\n[rules]\ncutoff 10d\n"
		   "retention 11d\n[peer alpha]\naddress 192.0.2.1\n");
	f = open_memstream(&out, &len);
	old = fg_config_reload_load(path, f);
	fclose(f);
	ck_assert_ptr_nonnull(old);
	/* warnings are listed too: here, no downstream */
	ck_assert_msg(strncmp(out, "  warning        ", 17) == 0 && strstr(out, "[downstream]"),
		      "%s", out);
	free(out);
	f = open_memstream(&out, &len);
	n = reload_text(path, sizeof(path), "[site]\nlisten 127.0.0.1:2119\n[rules]\ncutoff 5d\n"
			"retention 6d\n[peer alpha]\naddress 192.0.2.1\n[peer beta]\n"
			"address 192.0.2.2\n", f);
	/* a dataplane that cannot listen anew refuses, naming the key */
	ck_assert_uint_eq(fg_config_restart_keys(n, old, 0, f), 1);
	fclose(f);
	ck_assert_msg(strstr(out, "  refused        [site] listen needs a restart\n"), "%s", out);
	ck_assert_msg(strstr(out, "refused: 1 key needs a restart; nothing applied"), "%s", out);
	ck_assert_ptr_null(strstr(out, "applied        "));
	free(out);
	/* one that listens live takes it; the rest is listed as applied */
	f = open_memstream(&out, &len);
	ck_assert_uint_eq(fg_config_restart_keys(n, old, FG_RELOAD_LIVE_LISTEN, f), 0);
	fg_config_changes(old, n, f);
	fclose(f);
	ck_assert_ptr_null(strstr(out, "refused"));
	ck_assert_msg(strstr(out, "  applied        [site] listen ") && strstr(out, "127.0.0.1:2119"),
		      "%s", out);
	ck_assert_msg(strstr(out, "  applied        [rules] cutoff"), "%s", out);
	ck_assert_msg(strstr(out, "  applied        [peer beta] address"), "%s", out);
	free(out);
	/* nothing changed: said so */
	f = open_memstream(&out, &len);
	fg_config_changes(n, n, f);
	fclose(f);
	ck_assert_str_eq(out, "  (no key changed)\n");
	free(out);
	fg_config_free(n);
	/* several restart keys: each named, the count said once (rx-queues
	 * follows workers when not set) */
	f = open_memstream(&out, &len);
	n = reload_text(path, sizeof(path), "[site]\nlisten 127.0.0.1:1119\n[rules]\ncutoff 10d\n"
			"retention 11d\n[peer alpha]\naddress 192.0.2.1\n[dataplane]\n"
			"workers 3\n[history]\ncapacity 300000\n[downstream d]\n"
			"address 127.0.0.1:119\n", f);
	ck_assert_uint_eq(fg_config_restart_keys(n, old, FG_RELOAD_LIVE_LISTEN, f), 4);
	fclose(f);
	ck_assert_msg(strstr(out, "  refused        [dataplane] workers needs a restart\n") &&
		      strstr(out, "  refused        [history] capacity needs a restart\n") &&
		      strstr(out, "  refused        [downstream] needs a restart\n") &&
		      strstr(out, "  refused        [dataplane] rx-queues needs a restart\n") &&
		      strstr(out, "refused: 4 keys need a restart"), "%s", out);
	free(out);
	/* the downstreams too are taken by a dataplane that applies them live */
	f = open_memstream(&out, &len);
	ck_assert_uint_eq(fg_config_restart_keys(n, old, FG_RELOAD_LIVE_LISTEN |
						 FG_RELOAD_LIVE_DOWNSTREAM, f), 3);
	fclose(f);
	ck_assert_ptr_null(strstr(out, "[downstream]"));
	free(out);
	fg_config_free(n);
	/* a file with errors: refused, each listed */
	write_conf(path, sizeof(path), "[rules]\ncutoff soon\n[nonsense]\n");
	f = open_memstream(&out, &len);
	ck_assert_ptr_null(fg_config_reload_load(path, f));
	fclose(f);
	ck_assert_msg(strstr(out, ": refused, 2 errors; the running configuration is kept\n"), "%s",
		      out);
	free(out);
	fg_config_free(old);
	unlink(path);
}
END_TEST

/* A credentials file of `mode` holding `text`, at a path of this process. */
static const char *cred_file(const char *tag, const char *text, mode_t mode)
{
	static char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/fg-cred-%s-%d", tag, (int)getpid());
	unlink(path);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	ck_assert_int_eq(chmod(path, mode), 0);
	return path;
}

/* The load of a config whose one peer names `path` fails with one error
 * that ends in `want` and holds no word of the file. */
static void expect_cred_error(const char *path, const char *want, const char *secret)
{
	char text[512], full[512];

	snprintf(text, sizeof(text), "[peer p]\naddress 192.0.2.1\ncredentials %s\n"
		 "[downstream d]\naddress 127.0.0.1\n", path);
	ck_assert_ptr_null(load(text));
	snprintf(full, sizeof(full), "t.conf:3: credentials: %s%s", path, want);
	ck_assert_msg(errs.total == 1 && strcmp(errs.err[0].text, full) == 0,
		      "want:\n  %s\ngot:%s", full, all_errors());
	ck_assert_msg(!secret || !strstr(errs.err[0].text, secret), "the error quotes the file");
}

/* [peer] credentials: the file read at load, its every refusal, the
 * round trip (the path formatted, never the words), the reload's report. */
START_TEST(test_credentials)
{
	char text[512], *out = NULL;
	struct fg_config *cfg, *cfg2;
	const char *path;
	size_t len;
	FILE *f;

	path = cred_file("ok", "# peer p\nusername  feeder-a\npassword  \"open sesame\"  # spaces\n",
			 0600);
	snprintf(text, sizeof(text), "[peer p]\naddress 192.0.2.1\ncredentials %s\n"
		 "[peer q]\naddress 192.0.2.2\n[downstream d]\naddress 127.0.0.1\n", path);
	cfg = load_clean(text);
	ck_assert_str_eq(cfg->peer[0].credentials, path);
	ck_assert_uint_eq(cfg->peer[0].cred.user_len, 8);
	ck_assert_mem_eq(cfg->peer[0].cred.user, "feeder-a", 8);
	ck_assert_uint_eq(cfg->peer[0].cred.pass_len, 11);
	ck_assert_mem_eq(cfg->peer[0].cred.pass, "open sesame", 11);
	ck_assert_uint_eq(cfg->peer[0].cred.pass[11], 0);	/* zero-padded */
	ck_assert_uint_eq(cfg->peer[1].cred.pass_len, 0);
	ck_assert_str_eq(cfg->peer[1].credentials, "");
	assert_round_trip(cfg);
	fg_config_format(cfg, fmtbuf, sizeof(fmtbuf));
	ck_assert_msg(strstr(fmtbuf, "credentials") && !strstr(fmtbuf, "sesame") &&
		      !strstr(fmtbuf, "feeder-a"), "%s", fmtbuf);
	/* the same file, new words: a reload lists it though the text is the same */
	cred_file("ok", "password \"open sesame!\"\n", 0400);
	cfg2 = load_clean(text);
	ck_assert_uint_eq(cfg2->peer[0].cred.user_len, 0);	/* any username */
	f = open_memstream(&out, &len);
	fg_config_changes(cfg, cfg2, f);
	fclose(f);
	ck_assert_str_eq(out, "  applied        [peer p] credentials (the file's content)\n");
	ck_assert_msg(!strstr(out, "sesame"), "%s", out);
	free(out);
	fg_config_free(cfg2);
	fg_config_free(cfg);

	/* every refusal names the file (and line), never its words */
	expect_cred_error(cred_file("mode", "password hunter2\n", 0640),
			  ": mode 0640 lets its group or others at it; it must be readable by "
			  "the service's user only (chmod 600)", "hunter2");
	expect_cred_error(cred_file("mode", "password hunter2\n", 0604),
			  ": mode 0604 lets its group or others at it; it must be readable by "
			  "the service's user only (chmod 600)", "hunter2");
	expect_cred_error(cred_file("nopass", "username a\n", 0600), ": no `password` line", NULL);
	expect_cred_error(cred_file("bare", "# a comment\nhunter2\n", 0600),
			  ":2: not a `username` or `password` line", "hunter2");
	expect_cred_error(cred_file("twice", "password a\npassword b\n", 0600),
			  ":2: password: given twice", NULL);
	expect_cred_error(cred_file("two", "password hunter 2\n", 0600),
			  ":1: password: one value (quote it if it holds blanks)", "hunter");
	expect_cred_error(cred_file("empty", "password \"\"\n", 0600),
			  ":1: password: 1 to 128 octets", NULL);
	expect_cred_error(cred_file("ctl", "password a\001b\n", 0600), ":1: control character",
			  NULL);
	expect_cred_error(cred_file("quote", "password \"hunter2\n", 0600),
			  ":1: unterminated quote", "hunter2");
	/* fuzz_credentials: a tab kept inside quotes was a control octet */
	expect_cred_error(cred_file("tab", "password \"hun\tter2\"\n", 0600),
			  ":1: password: a tab inside the quoted value", "hun");
	{
		char big[300];

		memset(big, 'x', 129);
		snprintf(big + 129, sizeof(big) - 129, "\n");
		char line[320];

		snprintf(line, sizeof(line), "password %s", big);
		expect_cred_error(cred_file("long", line, 0600), ":1: password: 1 to 128 octets",
				  NULL);
		big[128] = '\n';
		big[129] = '\0';
		snprintf(line, sizeof(line), "password %s", big);
		cfg = load_clean(text);	/* the "ok" file still */
		fg_config_free(cfg);
		path = cred_file("max", line, 0600);
		snprintf(text, sizeof(text), "[peer p]\naddress 192.0.2.1\ncredentials %s\n"
			 "[downstream d]\naddress 127.0.0.1\n", path);
		cfg = load_clean(text);
		ck_assert_uint_eq(cfg->peer[0].cred.pass_len, 128);
		fg_config_free(cfg);
	}
	expect_cred_error("/tmp", ": not a regular file", NULL);
	snprintf(text, sizeof(text), "/tmp/fg-cred-none-%d", (int)getpid());
	expect_cred_error(text, ": cannot read: No such file or directory", NULL);
	{
		static char huge[FG_CONFIG_CRED_FILE_MAX + 64];

		memset(huge, '#', sizeof(huge) - 1);
		expect_cred_error(cred_file("huge", huge, 0600), ": longer than 4096 octets", NULL);
	}
	expect_error("[peer p]\naddress 192.0.2.1\ncredentials etc/cred\n"
		     "[downstream d]\naddress 127.0.0.1\n",
		     "t.conf:3: credentials: \"etc/cred\" is not an absolute path");
	for (const char *const *t = (const char *const[]){ "ok", "mode", "nopass", "bare", "twice",
		"two", "empty", "ctl", "quote", "long", "max", "huge", NULL }; *t; t++) {
		snprintf(text, sizeof(text), "/tmp/fg-cred-%s-%d", *t, (int)getpid());
		unlink(text);
	}
}
END_TEST

static Suite *config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *values = tcase_create("values"), *keys = tcase_create("keys");
	TCase *errors = tcase_create("errors"), *rfc = tcase_create("rfc5537");
	TCase *misc = tcase_create("misc");

	tcase_add_test(values, test_durations);
	tcase_add_test(values, test_sizes_and_bools);
	tcase_add_test(values, test_prefixes);
	tcase_add_test(values, test_endpoints);
	tcase_add_test(values, test_endpoint_sockaddr);
	tcase_add_test(values, test_dual_stack);
	tcase_add_test(values, test_program_refusals);
	tcase_add_test(values, test_port_refusals);
	tcase_add_test(keys, test_embedded_default);
	tcase_add_test(keys, test_defaults);
	tcase_add_test(keys, test_every_key);
	tcase_add_test(keys, test_syntax_details);
	tcase_add_test(errors, test_structure_errors);
	tcase_add_test(errors, test_line_errors);
	tcase_add_test(errors, test_value_errors);
	tcase_add_test(errors, test_cluster_section);
	tcase_add_test(errors, test_section_checks);
	tcase_add_test(errors, test_no_cascade);
	tcase_add_test(errors, test_error_collection);
	tcase_add_test(rfc, test_future_margin_boundary);
	tcase_add_test(rfc, test_retention_boundary);
	tcase_add_test(rfc, test_cutoff_boundaries);
	tcase_add_test(misc, test_find_peer);
	tcase_add_test(misc, test_load_file);
	tcase_add_test(misc, test_errors_log);
	tcase_add_test(misc, test_format_truncation);
	tcase_add_test(misc, test_docs_match_parser);
	tcase_add_test(misc, test_reload_report);
	tcase_add_test(misc, test_credentials);
	suite_add_tcase(s, values);
	suite_add_tcase(s, keys);
	suite_add_tcase(s, errors);
	suite_add_tcase(s, rfc);
	suite_add_tcase(s, misc);
	return s;
}

FG_TEST_MAIN(config_suite)
