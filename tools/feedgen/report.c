/* SPDX-License-Identifier: MIT */
/*
 * report.c — feedgen's results as text for people and one JSON object for
 * the bench harness (tools/bench/run.sh reads the keys named in
 * docs/feedgen.md; add keys, never rename them), and the CPU the run cost.
 */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "feedgen.h"

static const char *const mode_names[] = { "check", "takethis", "ihave" };

static double per_s(uint64_t n, double s)
{
	return s > 0 ? (double)n / s : 0.0;
}

/* CPU seconds per million offers: the fair figure when client and server
 * share the same cores. */
static double per_m(double cpu, uint64_t offers)
{
	return offers && cpu >= 0 ? cpu * 1e6 / (double)offers : -1;
}

static void text_latency(const char *what, const struct fg_lathist *h)
{
	if (h->count == 0)
		return;
	printf("  %-22s n=%llu  p50 %.0f  p90 %.0f  p99 %.0f  max %.0f us\n", what,
	       (unsigned long long)h->count, fg_lathist_pct(h, 50) / 1e3,
	       fg_lathist_pct(h, 90) / 1e3, fg_lathist_pct(h, 99) / 1e3, (double)h->max / 1e3);
}

void feed_report_text(const struct feed_opts *o, const struct fg_wl *wl,
		      const struct fg_wlc *chk, const struct feed_result *r,
		      const struct feed_sink_stats *sink)
{
	const struct fg_wl_params *p = fg_wl_params(wl);
	uint64_t mm = fg_wlc_mismatches(chk);

	if (sink)
		printf("sink: %llu connections, %llu articles, %llu octets, %llu CHECKs%s\n",
		       (unsigned long long)sink->connections, (unsigned long long)sink->articles,
		       (unsigned long long)sink->octets, (unsigned long long)sink->checks,
		       sink->drained ? "" : " (short of the accepted articles)");

	printf("feedgen: %s mode, %u peers x %u conns, window %u, %s:%u, seed %llu\n",
	       mode_names[o->mode], p->peers, o->conns, o->window, o->host, o->port,
	       (unsigned long long)p->seed);
	printf("workload: %u articles (", p->articles);
	for (unsigned c = 0; c < FG_WL__CLASSES; c++)
		printf("%s%s %llu", c ? ", " : "", fg_wl_class_name(c),
		       (unsigned long long)fg_wl_class_count(wl, c));
	printf("), %llu offers\n", (unsigned long long)fg_wl_total_offers(wl));
	printf("elapsed %.3f s%s\n", r->elapsed, r->timed_out ? " (timed out)" : "");
	printf("  offers        %12llu  %12.0f /s   (retries %llu, re-offers %llu, reconnects %llu)\n",
	       (unsigned long long)r->offers, per_s(r->offers, r->elapsed),
	       (unsigned long long)r->retries, (unsigned long long)r->reoffers,
	       (unsigned long long)r->reconnects);
	printf("  articles sent %12llu  %12.0f /s\n", (unsigned long long)r->articles_sent,
	       per_s(r->articles_sent, r->elapsed));
	printf("  accepted      %12llu  %12.0f /s   (expected %llu; answer lost with a "
	       "connection: %llu)\n", (unsigned long long)r->accepted,
	       per_s(r->accepted, r->elapsed),
	       (unsigned long long)fg_wl_class_count(wl, FG_WL_WANTED),
	       (unsigned long long)fg_wlc_unknown(chk));
	printf("  article bytes %12llu  %12.0f B/s\n", (unsigned long long)r->article_bytes,
	       per_s(r->article_bytes, r->elapsed));
	printf("responses:");
	for (unsigned k = 100; k < FEED_CODES; k++)
		if (r->codes[k])
			printf(" %u=%llu", k, (unsigned long long)r->codes[k]);
	printf("\nlatency (command queued -> answer read):\n");
	text_latency(o->mode == FEED_IHAVE ? "IHAVE" : "CHECK", &r->lat_offer);
	text_latency(o->mode == FEED_IHAVE ? "IHAVE article" : "TAKETHIS", &r->lat_article);
	printf("cpu: feedgen %.2f s (%.0f%% of one core, %.2f s per M offers)", r->cpu_self,
	       r->elapsed > 0 ? 100 * r->cpu_self / r->elapsed : 0, per_m(r->cpu_self, r->offers));
	if (r->cpu_server >= 0)
		printf("; server %.2f s (%.0f%%, %.2f s per M offers)", r->cpu_server,
		       r->elapsed > 0 ? 100 * r->cpu_server / r->elapsed : 0,
		       per_m(r->cpu_server, r->offers));
	printf("\n");
	if (mm == 0) {
		printf("check: OK, every answer matched the model\n");
		return;
	}
	printf("check: %llu MISMATCHES; the first:\n", (unsigned long long)mm);
	for (unsigned i = 0; fg_wlc_mismatch_text(chk, i); i++)
		printf("  %s\n", fg_wlc_mismatch_text(chk, i));
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			printf("\\u%04x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void json_latency(const char *name, const struct fg_lathist *h)
{
	printf("\"%s\":{\"count\":%llu,\"p50_us\":%.1f,\"p90_us\":%.1f,\"p99_us\":%.1f,"
	       "\"p999_us\":%.1f,\"max_us\":%.1f,\"mean_us\":%.1f}", name,
	       (unsigned long long)h->count, fg_lathist_pct(h, 50) / 1e3,
	       fg_lathist_pct(h, 90) / 1e3, fg_lathist_pct(h, 99) / 1e3,
	       fg_lathist_pct(h, 99.9) / 1e3, (double)h->max / 1e3,
	       h->count ? (double)h->sum / (double)h->count / 1e3 : 0.0);
}

static void json_codes(const uint64_t *codes32, const uint32_t *codes, bool wide)
{
	bool first = true;

	putchar('{');
	for (unsigned k = 100; k < FEED_CODES; k++) {
		unsigned long long v = wide ? codes32[k] : codes[k];

		if (!v)
			continue;
		printf("%s\"%u\":%llu", first ? "" : ",", k, v);
		first = false;
	}
	putchar('}');
}

static void json_params(const struct feed_opts *o, const struct fg_wl_params *p)
{
	char dist[FG_WL_DUPS_MAX * 24];

	printf("\"params\":{\"mode\":\"%s\",\"peers\":%u,\"conns\":%u,\"window\":%u,"
	       "\"articles\":%u,\"dups\":%u,\"spread\":%u,\"seed\":%llu,\"size\":",
	       mode_names[o->mode], p->peers, o->conns, o->window, p->articles, p->dups,
	       p->spread, (unsigned long long)p->seed);
	if (p->size_mode == FG_WL_SIZE_MIX)
		printf("\"mix\"");
	else if (p->size_mode == FG_WL_SIZE_FEED)
		printf("\"feed\"");
	else
		printf("%u", p->size);
	fg_wl_dups_format(p, dist, sizeof(dist));
	printf(",\"dups_dist\":");
	json_str(dist);
	printf(",\"duration\":%.3f", o->duration);
	printf(",\"cutoff\":%lld,\"future_margin\":%lld,\"now\":%lld,\"host\":",
	       (long long)p->cutoff, (long long)p->future_margin, (long long)p->now);
	json_str(o->host);
	printf(",\"port\":%u}", o->port);
}

void feed_report_json(const struct feed_opts *o, const struct fg_wl *wl,
		      const struct fg_wlc *chk, const struct feed_result *r,
		      const struct feed_sink_stats *sink)
{
	const struct fg_wl_params *p = fg_wl_params(wl);

	printf("{\"tool\":\"feedgen\",");
	json_params(o, p);
	printf(",\"classes\":{");
	for (unsigned c = 0; c < FG_WL__CLASSES; c++)
		printf("%s\"%s\":%llu", c ? "," : "", fg_wl_class_name(c),
		       (unsigned long long)fg_wl_class_count(wl, c));
	printf("},\"elapsed_s\":%.6f,\"timed_out\":%s,\"offers\":%llu,\"retries\":%llu,"
	       "\"reoffers\":%llu,\"reconnects\":%llu,\"articles_sent\":%llu,\"accepted\":%llu,"
	       "\"expected_accepted\":%llu,\"article_bytes\":%llu,\"bytes_out\":%llu,"
	       "\"bytes_in\":%llu,", r->elapsed, r->timed_out ? "true" : "false",
	       (unsigned long long)r->offers, (unsigned long long)r->retries,
	       (unsigned long long)r->reoffers, (unsigned long long)r->reconnects,
	       (unsigned long long)r->articles_sent, (unsigned long long)r->accepted,
	       (unsigned long long)fg_wl_class_count(wl, FG_WL_WANTED),
	       (unsigned long long)r->article_bytes, (unsigned long long)r->bytes_out,
	       (unsigned long long)r->bytes_in);
	printf("\"accepted_bytes\":%llu,\"articles_offered\":%llu,",
	       (unsigned long long)r->accepted_bytes, (unsigned long long)r->articles_offered);
	if (sink)
		printf("\"sink\":{\"connections\":%llu,\"articles\":%llu,\"octets\":%llu,"
		       "\"checks\":%llu,\"drained\":%s,\"drain_s\":%.3f},",
		       (unsigned long long)sink->connections, (unsigned long long)sink->articles,
		       (unsigned long long)sink->octets, (unsigned long long)sink->checks,
		       sink->drained ? "true" : "false", sink->drain_s);
	printf("\"offers_per_s\":%.1f,\"articles_per_s\":%.1f,\"accepted_per_s\":%.1f,"
	       "\"bytes_per_s\":%.1f,", per_s(r->offers, r->elapsed),
	       per_s(r->articles_sent, r->elapsed), per_s(r->accepted, r->elapsed),
	       per_s(r->article_bytes, r->elapsed));
	printf("\"cpu_self_s\":%.3f,\"cpu_server_s\":%.3f,\"cpu_self_per_m_offers\":%.3f,"
	       "\"cpu_server_per_m_offers\":%.3f,\"cpu_self_share\":%.3f,", r->cpu_self,
	       r->cpu_server, per_m(r->cpu_self, r->offers), per_m(r->cpu_server, r->offers),
	       r->elapsed > 0 ? r->cpu_self / r->elapsed : 0);
	printf("\"latency\":{");
	json_latency("offer", &r->lat_offer);
	putchar(',');
	json_latency("article", &r->lat_article);
	printf("},\"codes\":");
	json_codes(r->codes, NULL, true);
	printf(",\"connections\":[");
	for (unsigned i = 0; i < r->n_conns; i++) {
		printf("%s{\"conn\":%u,\"peer\":%u,\"codes\":", i ? "," : "", i, r->conn_peer[i]);
		json_codes(NULL, r->conn_codes[i], false);
		putchar('}');
	}
	printf("],\"unknown_outcome\":%llu,\"mismatches\":%llu,\"first_mismatches\":[",
	       (unsigned long long)fg_wlc_unknown(chk), (unsigned long long)fg_wlc_mismatches(chk));
	for (unsigned i = 0; fg_wlc_mismatch_text(chk, i); i++) {
		if (i)
			putchar(',');
		json_str(fg_wlc_mismatch_text(chk, i));
	}
	printf("]}\n");
}

/* ---------------------------------------------------------------- CPU
 * what the run cost: this process, and the server (--server-pid) */

double feed_self_cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* proc(5): fields 14-17 are utime, stime, cutime, cstime in clock ticks;
 * field 2 (comm) may hold spaces, so count from its closing parenthesis. */
double feed_proc_cpu(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long v[4];
	FILE *fp;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fp = fopen(path, "r");
	if (!fp)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu",
			 &v[0], &v[1], &v[2], &v[3]) != 4)
		return -1;
	return (double)(v[0] + v[1] + v[2] + v[3]) / (double)sysconf(_SC_CLK_TCK);
}
