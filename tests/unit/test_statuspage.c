/* SPDX-License-Identifier: MIT */
/*
 * test_statuspage.c — the status page (statuspage.h): escaping of hostile
 * text (markup, quotes, ampersands, invalid UTF-8, controls, very long
 * names, and random bytes whose output must be clean), the sparkline,
 * the lookup form's query string, the trend ring, and the page rendered
 * from a fixed stats snapshot
 * (metrics_fixture.h) plus a peer, a pause, a throttle reason, a host
 * name and a Message-ID looked up that are all hostile: every figure where the snapshot says, and
 * no hostile byte unescaped.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/statuspage.h"
#include "ctl_fixture.h"
#include "fgtest.h"
#include "metrics_fixture.h"

static char *esc(const char *s, size_t n, size_t max)
{
	static struct fg_sbuf b;

	fg_sbuf_free(&b);
	fg_sbuf_init(&b);
	fg_html_escape(&b, s, n, max);
	fg_sbuf_put(&b, "", 1);
	return b.p;
}

static bool valid_utf8(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned c = s[i], len = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2
			 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		uint32_t cp;

		if (!len || i + len > n)
			return false;
		cp = len == 1 ? c : c & (0xffu >> (len + 1));
		for (unsigned k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3fu);
		}
		if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += len;
	}
	return true;
}

/* Safe in content and in a quoted attribute: no markup character but in
 * one of the references the escaper writes, valid UTF-8, no control.
 * (Plain ifs: every ck_assert is a write to the runner's pipe.) */
static void assert_clean(const char *out)
{
	static const char *const refs[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&#39;" };

	if (!valid_utf8((const unsigned char *)out, strlen(out)))
		ck_abort_msg("not UTF-8: %s", out);
	for (const char *p = out; *p; p++) {
		bool ok = false;

		if (*p == '<' || *p == '>' || *p == '"' || *p == '\'')
			ck_abort_msg("raw %c in %s", *p, out);
		if (((unsigned char)*p < 0x20 && *p != '\t' && *p != '\n') || *p == 0x7f)
			ck_abort_msg("a control in %s", out);
		if (*p != '&')
			continue;
		for (unsigned i = 0; i < FG_ARRAY_SIZE(refs); i++)
			ok |= strncmp(p, refs[i], strlen(refs[i])) == 0;
		if (!ok)
			ck_abort_msg("a bare & in %s", out);
	}
}

START_TEST(test_escape_markup)
{
	const char *s = "<script>alert(\"x\")</script>";

	ck_assert_str_eq(esc("alpha-1.example_x", 17, 0), "alpha-1.example_x");
	ck_assert_str_eq(esc(s, strlen(s), 0),
			 "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
	ck_assert_str_eq(esc("a'b&c", 5, 0), "a&#39;b&amp;c");
	/* an attribute breaker and an entity that must stay literal */
	s = "\" onmouseover=\"x&amp;";
	ck_assert_str_eq(esc(s, strlen(s), 0), "&quot; onmouseover=&quot;x&amp;amp;");
	/* a Message-ID as hostile as RFC 5536 lets one be */
	s = "<\"'&<script>@x.example>";
	ck_assert_str_eq(esc(s, strlen(s), 0),
			 "&lt;&quot;&#39;&amp;&lt;script&gt;@x.example&gt;");
	assert_clean(esc(s, strlen(s), 0));
}
END_TEST

START_TEST(test_escape_utf8)
{
	const char *good = "Z\xc3\xbcrich \xe2\x80\x94 \xe6\x97\xa5 \xf0\x9f\x8e\x89";

	ck_assert_str_eq(esc(good, strlen(good), 0), good);
	/* a stray continuation, an invalid byte, an overlong '/', a surrogate,
	 * past U+10FFFF, a sequence cut short: each bad byte one U+FFFD */
	ck_assert_str_eq(esc("a\x80z", 3, 0), "a\xef\xbf\xbdz");
	ck_assert_str_eq(esc("\xff", 1, 0), "\xef\xbf\xbd");
	ck_assert_str_eq(esc("\xc0\xaf", 2, 0), "\xef\xbf\xbd\xef\xbf\xbd");
	ck_assert_str_eq(esc("\xed\xa0\x80", 3, 0), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	ck_assert_str_eq(esc("\xf4\x90\x80\x80", 4, 0),
			 "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	ck_assert_str_eq(esc("\xe2\x82", 2, 0), "\xef\xbf\xbd\xef\xbf\xbd");
	/* an overlong '<' is no '<' */
	ck_assert_str_eq(esc("\xc0\xbc", 2, 0), "\xef\xbf\xbd\xef\xbf\xbd");
	/* controls (an escape sequence, a NUL inside the length), DEL; tab
	 * and newline kept */
	ck_assert_str_eq(esc("\x1b[31mred\x7f", 9, 0), "\xef\xbf\xbd[31mred\xef\xbf\xbd");
	ck_assert_str_eq(esc("a\0b\tc\n", 6, 0), "a\xef\xbf\xbd" "b\tc\n");
}
END_TEST

START_TEST(test_escape_long)
{
	size_t n = 200000;
	char *s = malloc(n + 1), *out;

	ck_assert_ptr_nonnull(s);
	for (size_t i = 0; i < n; i++)
		s[i] = i % 2 ? '<' : 'A';
	s[n] = '\0';
	out = esc(s, n, 0);
	ck_assert_uint_eq(strlen(out), n / 2 * 5);
	assert_clean(out);
	/* cut at 8 characters, a multi-octet one counted once */
	ck_assert_str_eq(esc(s, n, 8), "A&lt;A&lt;A&lt;A&lt;\xe2\x80\xa6");
	ck_assert_str_eq(esc("\xc3\xa9\xc3\xa9\xc3\xa9", 6, 2), "\xc3\xa9\xc3\xa9\xe2\x80\xa6");
	ck_assert_str_eq(esc("abc", 3, 3), "abc");		/* exactly max: no ellipsis */
	free(s);
}
END_TEST

/* Random bytes, biased to the interesting ones: the output is always clean. */
START_TEST(test_escape_random)
{
	static const unsigned char pick[] = { '<', '>', '&', '"', '\'', 0, 0x1b, 0x7f, 0x80, 0xbf,
					      0xc0, 0xc2, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff,
					      'a', ';', '#' };
	unsigned char buf[64];
	uint64_t x = 0x9e3779b97f4a7c15ull;

	for (unsigned round = 0; round < 20000; round++) {
		size_t n = round % sizeof(buf);

		for (size_t i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[i] = x & 1 ? pick[(x >> 8) % sizeof(pick)] : (unsigned char)(x >> 16);
		}
		assert_clean(esc((const char *)buf, n, round % 3 ? 0 : 7));
	}
}
END_TEST

static int form(const char *q, const char *key, char *out, size_t cap)
{
	return fg_html_form_value(q, strlen(q), key, out, cap);
}

START_TEST(test_form_value)
{
	char v[16];

	ck_assert_int_eq(form("id=%3Cx%40y%3E", "id", v, sizeof(v)), 5);
	ck_assert_str_eq(v, "<x@y>");
	ck_assert_int_eq(form("a=1&id=two+words&id=second", "id", v, sizeof(v)), 9);
	ck_assert_str_eq(v, "two words");			/* the first counts */
	ck_assert_int_eq(form("ids=1&xid=2&id", "id", v, sizeof(v)), 0);	/* bare name */
	ck_assert_str_eq(v, "");
	ck_assert_int_eq(form("id=%zz%4%", "id", v, sizeof(v)), 6);	/* bad escapes kept */
	ck_assert_str_eq(v, "%zz%4%");
	ck_assert_int_eq(form("id=%2b%2B+%26%3d", "id", v, sizeof(v)), 5);
	ck_assert_str_eq(v, "++ &=");
	ck_assert_int_eq(form("x=1&&=2", "id", v, sizeof(v)), -ENOENT);
	ck_assert_int_eq(form("", "id", v, sizeof(v)), -ENOENT);
	ck_assert_int_eq(form("id=a%00b", "id", v, sizeof(v)), -EINVAL);
	ck_assert_int_eq(form("id=0123456789abcdef", "id", v, sizeof(v)), -ENOSPC);
	ck_assert_int_eq(form("id=0123456789abcde", "id", v, sizeof(v)), 15);	/* fits exactly */
	/* the length bounds the query: nothing past it is read */
	ck_assert_int_eq(fg_html_form_value("id=ab&id=c", 4, "id", v, sizeof(v)), 1);
	ck_assert_str_eq(v, "a");
}
END_TEST

static unsigned count(const char *hay, const char *needle)
{
	unsigned n = 0;

	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

START_TEST(test_spark)
{
	double v[] = { 0, 5, 10, NAN, 2, 4 };
	struct fg_sbuf b;

	fg_sbuf_init(&b);
	fg_html_spark(&b, v, 0, 100, 20, "none <yet>");
	ck_assert_str_eq(b.p, "<svg class=\"spark\" width=\"100\" height=\"20\" viewBox=\"0 0 100 20\" "
			 "role=\"img\" aria-label=\"none &lt;yet&gt;\"><title>none &lt;yet&gt;"
			 "</title></svg>");
	fg_sbuf_reset(&b);
	fg_html_spark(&b, v, 3, 100, 20, "x");
	/* 0 at the bottom, 10 (the top) at the top, 98 px wide */
	ck_assert(strstr(b.p, "<polyline points=\"1.0,19.0 50.0,10.0 99.0,1.0\"/>"));
	ck_assert(strstr(b.p, "<circle cx=\"99.0\" cy=\"1.0\""));
	fg_sbuf_reset(&b);
	fg_html_spark(&b, v, 6, 100, 20, "x");
	ck_assert_uint_eq(count(b.p, "<polyline"), 2);		/* the NaN breaks it */
	fg_sbuf_reset(&b);
	fg_html_spark(&b, (double[]){ 0, 0 }, 2, 100, 20, "flat");
	ck_assert(strstr(b.p, "points=\"1.0,19.0 99.0,19.0\""));
	fg_sbuf_reset(&b);
	fg_html_spark(&b, v, 3, 2, 20, "too narrow");
	ck_assert_ptr_null(strstr(b.p, "<polyline"));
	fg_sbuf_free(&b);
}
END_TEST

START_TEST(test_trend_ring)
{
	struct fg_trend *t = fg_trend_create(4, 1000);
	struct fg_trend_row row;

	ck_assert_ptr_null(fg_trend_create(1, 1000));
	ck_assert_ptr_null(fg_trend_create(4, 0));
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(fg_trend_count(t), 0);
	ck_assert(fg_trend_due(t, 0));
	ck_assert_ptr_null(fg_trend_row(t, 0));
	memset(&row, 0, sizeof(row));
	for (unsigned i = 1; i <= 6; i++) {
		row.offers = i;
		fg_trend_push(t, &row);
	}
	/* bounded: the four newest, oldest first */
	ck_assert_uint_eq(fg_trend_count(t), 4);
	for (unsigned i = 0; i < 4; i++)
		ck_assert_uint_eq(fg_trend_row(t, i)->offers, i + 3);
	ck_assert_ptr_null(fg_trend_row(t, 4));
	fg_trend_free(t);
}
END_TEST

/* A trend row at `sec` seconds with these cumulative offers. */
static void trend_at(struct fg_trend *t, unsigned sec, uint64_t offers, uint64_t alpha)
{
	struct fg_trend_row row;

	memset(&row, 0, sizeof(row));
	row.mono_ns = (uint64_t)sec * 1000000000ull;
	row.offers = offers;
	row.npeers = 2;
	row.peer_offers[0] = alpha;
	row.history_entries = 10 * sec;
	fg_trend_push(t, &row);
}

static char *render_opts(struct fg_region *r, const struct fg_metrics_state *m,
			 const struct fg_trend *t, const struct fg_page_opts *o)
{
	static struct fg_sbuf b;

	fg_sbuf_free(&b);
	fg_sbuf_init(&b);
	fg_statuspage_render(r, m, t, o, &b);
	ck_assert(!b.failed);
	fg_sbuf_put(&b, "", 1);
	return b.p;
}

static char *render(struct fg_region *r, const struct fg_metrics_state *m,
		    const struct fg_trend *t, const char *host)
{
	struct fg_page_opts o = { .refresh = 5, .host = host };

	return render_opts(r, m, t, &o);
}

static char *render_lookup(struct fg_region *r, const struct fg_metrics_state *m,
			   const char *host, const char *id, const char *said)
{
	struct fg_page_opts o = { .refresh = 5, .host = host, .lookup_id = id,
				  .lookup_text = said };

	return render_opts(r, m, NULL, &o);
}

/* Every element opened is closed, as often. */
static void assert_balanced(const char *page)
{
	static const char *const tags[] = { "section", "table", "tr", "td", "th", "dl", "dd",
					    "dt", "svg", "p", "ul", "li", "div", "span", "b" };

	for (unsigned i = 0; i < FG_ARRAY_SIZE(tags); i++) {
		char open1[16], open2[16], close[16];

		snprintf(open1, sizeof(open1), "<%s>", tags[i]);
		snprintf(open2, sizeof(open2), "<%s ", tags[i]);
		snprintf(close, sizeof(close), "</%s>", tags[i]);
		ck_assert_msg(count(page, open1) + count(page, open2) == count(page, close),
			      "<%s> opened %u, closed %u", tags[i],
			      count(page, open1) + count(page, open2), count(page, close));
	}
}

START_TEST(test_page_figures)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region_writer *w[2];
	struct fg_region *r = workload(&fx, w);
	struct fg_trend *t = fg_trend_create(8, 5000);
	struct fg_metrics_state m;
	char *page;

	state(&m);
	trend_at(t, 100, 1000, 0);
	trend_at(t, 105, 1050, 20);	/* 10 offers/s, alpha 4/s */
	page = render(r, &m, t, "news.example");
	ck_assert(strncmp(page, "<!DOCTYPE html>\n<html lang=\"en\">", 31) == 0);
	ck_assert(strstr(page, "<meta http-equiv=\"refresh\" content=\"5\">"));
	ck_assert(strstr(page, "<title>floodgate on news.example</title>"));
	ck_assert_ptr_null(strstr(page, "<script"));
	assert_balanced(page);
	/* totals: the region's sums; rates from the trend */
	ck_assert(strstr(page, "data-k=\"offers_rate\" data-v=\"10.000\">10/s<"));
	ck_assert(strstr(page, "data-k=\"offers\" data-v=\"4\">4<"));
	ck_assert(strstr(page, "data-k=\"refused\" data-v=\"6\">6<"));
	ck_assert(strstr(page, "data-k=\"history_load\""));
	/* alpha's row: counters, reason, share, delays, last seen 5 s ago */
	ck_assert(strstr(page, "<tr data-peer=\"alpha\"><td class=\"l\" data-k=\"name\">alpha</td>"
			 "<td data-k=\"sessions\" data-v=\"0\">0</td><td data-k=\"offers_rate\" "
			 "data-v=\"4.000\">4.0/s</td>"));
	ck_assert(strstr(page, "<li data-k=\"rejected.too-old\" data-v=\"3\">too-old 3</li>"));
	ck_assert(strstr(page, "<td data-k=\"first_share\" data-v=\"0.250000\">25.0 %</td>"));
	ck_assert(strstr(page, "<td data-k=\"propagation_delay\" data-count=\"1\" data-sum=\"3600\" "
			 "data-negative=\"0\">60 min</td>"));
	ck_assert(strstr(page, "<td data-k=\"last_seen\" data-v=\"999995\" "
			 "title=\"1970-01-12T13:46:35Z\">5 s ago</td>"));
	/* the other peer: its name escaped in the attribute and the cell, never seen */
	ck_assert(strstr(page, "<tr data-peer=\"we&quot;ird\\name\"><td class=\"l\" "
			 "data-k=\"name\">we&quot;ird\\name</td>"));
	ck_assert(strstr(page, "<td data-k=\"last_seen\" data-v=\"0\">never</td>"));
	ck_assert(strstr(page, "data-k=\"first_share\" data-v=\"nan\">-<"));
	/* downstreams: te"xt parked with a 1 MiB backlog and 350 behind */
	ck_assert(strstr(page, "<tr data-downstream=\"te&quot;xt\"><td class=\"l\">te&quot;xt</td>"
			 "<td class=\"l st-parked\" data-k=\"state\">parked</td>"
			 "<td data-k=\"lag_records\" data-v=\"350\">350</td>"));
	ck_assert(strstr(page, "<td data-k=\"backlog_bytes\" data-v=\"1048576\">1.0 MiB</td>"));
	ck_assert(strstr(page, "data-k=\"state\">feeding</td>"));
	/* levers and alarms: throttled, alpha paused 90 s, te"xt parked */
	ck_assert(strstr(page, "<dd data-k=\"throttled\">disk &quot;full&quot;</dd>"));
	ck_assert(strstr(page, "<span data-pause=\"alpha\" data-k=\"remaining_seconds\" "
			 "data-v=\"90\">alpha (90 s more)</span>"));
	ck_assert(strstr(page, "data-v=\"throttled\"><b>Throttled</b> by the operator: "
			 "&ldquo;disk &quot;full&quot;&rdquo;"));
	ck_assert(strstr(page, "Downstream <b>te&quot;xt</b> parked"));
	ck_assert_ptr_null(strstr(page, "data-v=\"none\">Nothing needs"));
	/* the port: its name escaped, its drops counted, the rate alarm off
	 * (the trend has no drops) */
	ck_assert(strstr(page, "<tr data-port=\"net_&quot;bond0\">"));
	ck_assert(strstr(page, "<td data-k=\"rx_missed\" data-v=\"7\">7</td>"));
	ck_assert(strstr(page, "data-k=\"nic_drops\" data-v=\"10\">10<"));
	ck_assert(strstr(page, "data-v=\"link-down\">Port <b>net_tap1</b>: link down."));
	/* history and clock */
	ck_assert(strstr(page, "<dd data-k=\"entries\" data-v=\"0\">0</dd>"));
	ck_assert(strstr(page, "<dd data-k=\"clock_suspect\" data-v=\"0\">sane"));
	/* graphs: one per tile and per peer; two points drawn for the rate of
	 * two rows is one step, so a frame only */
	ck_assert_uint_eq(count(page, "<svg class=\"spark\""), 6 + 2);
	fg_trend_free(t);
	fg_region_release(w[0]);
	fg_region_release(w[1]);
	fx_cleanup(&fx);
}
END_TEST

/* Names as hostile as a region can hold them (floodctld's config allows
 * none of these, but the region is shared memory, and a page must not
 * trust it): markup, quotes, invalid UTF-8, a name cut to its slot. */
START_TEST(test_page_hostile)
{
	static const char *const peers[] = {
		"<script>alert('p')</script>",
		"\"><img src=x onerror=alert(1)>",
		"bad\xff\xc0utf8&amp;",
		"LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLL<",
	};
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 1000, 2, 64);
	struct fg_metrics_state m;
	char *page, *body;
	int err;
	struct fg_region_writer *w;

	ck_assert_int_eq(fg_region_add_peers(r, peers, 4), 4);
	w = fg_region_claim(r, "<w>", &err);
	ck_assert_ptr_nonnull(w);
	for (unsigned p = 0; p < 4; p++)
		fg_region_writer_stats(w)->peer[p].rejected[FG_REASON_TOO_OLD] = p + 1;
	state(&m);
	memset(&m.levers, 0, sizeof(m.levers));
	ck_assert_int_eq(fg_levers_throttle(&m.levers, "<b>\"disk\" & 'full'</b>"), 0);
	ck_assert_int_eq(fg_levers_pause(&m.levers, "<i>p</i>", m.now + 60), 0);
	page = render_lookup(r, &m, "<script>host</script>", "<\"'&<script@x.example>",
			     "<\"'&<script@x.example>\n  state          absent\n");
	assert_balanced(page);
	ck_assert_ptr_null(strstr(page, "<script"));
	ck_assert_ptr_null(strstr(page, "<img"));
	ck_assert_ptr_null(strstr(page, "<i>p"));
	ck_assert_ptr_null(strstr(page, "\"disk\""));
	ck_assert_ptr_null(strstr(page, "'full'"));
	ck_assert(strstr(page, "<title>floodgate on &lt;script&gt;host&lt;/script&gt;</title>"));
	ck_assert(strstr(page, "<tr data-peer=\"&lt;script&gt;alert(&#39;p&#39;)&lt;/script&gt;\">"));
	ck_assert(strstr(page, "<tr data-peer=\"&quot;&gt;&lt;img src=x onerror=alert(1)&gt;\">"));
	ck_assert(strstr(page, "data-peer=\"bad\xef\xbf\xbd\xef\xbf\xbdutf8&amp;amp;\""));
	ck_assert(strstr(page, "<dd data-k=\"throttled\">&lt;b&gt;&quot;disk&quot; &amp; "
			 "&#39;full&#39;&lt;/b&gt;</dd>"));
	ck_assert(strstr(page, "data-pause=\"&lt;i&gt;p&lt;/i&gt;\""));
	/* the Message-ID looked up, in the form's value and in the answer */
	ck_assert(strstr(page, "value=\"&lt;&quot;&#39;&amp;&lt;script@x.example&gt;\">"));
	ck_assert(strstr(page, "<pre data-k=\"lookup\">&lt;&quot;&#39;&amp;&lt;script@x.example&gt;\n"
			 "  state          absent\n</pre>"));
	/* the whole page is UTF-8, and in its body no text between tags
	 * holds a quote (every one was escaped; attributes hold them) */
	ck_assert(valid_utf8((const unsigned char *)page, strlen(page)));
	body = strstr(page, "<body>");
	ck_assert_ptr_nonnull(body);
	for (const char *p = body; *p; p++) {
		if (*p != '>')
			continue;
		for (p++; *p && *p != '<'; p++)
			if (*p == '"' || *p == '\'')
				ck_abort_msg("a raw quote in text near: %.60s",
					     p - 20 > body ? p - 20 : body);
		if (!*p)
			break;
	}
	fg_region_release(w);
	fx_cleanup(&fx);
}
END_TEST

static Suite *statuspage_suite(void)
{
	Suite *s = suite_create("statuspage");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_escape_markup);
	tcase_add_test(t, test_escape_utf8);
	tcase_add_test(t, test_escape_long);
	tcase_add_test(t, test_escape_random);
	tcase_add_test(t, test_form_value);
	tcase_add_test(t, test_spark);
	tcase_add_test(t, test_trend_ring);
	tcase_add_test(t, test_page_figures);
	tcase_add_test(t, test_page_hostile);
	suite_add_tcase(s, t);
	return s;
}

FG_TEST_MAIN(statuspage_suite)
