/* SPDX-License-Identifier: MIT */
/*
 * config_values.c — the value syntaxes of floodgate.conf, shared with the
 * CLI: durations, sizes, booleans, numbers, IPv4/IPv6 prefixes, host:port
 * endpoints and MAC addresses, each with its canonical formatter.
 *
 *   duration  "90" (seconds) or number+unit pairs in decreasing units:
 *             "10d", "1d12h", "250ms"; units w d h m s ms us
 *   size      "1000000", "16M": K M G T are powers of 1024 (case-blind)
 *   bool      on/off, yes/no, true/false (case-blind)
 *   prefix    "192.0.2.0/24", "2001:db8::/32"; a bare address is /32, /128
 *   endpoint  "192.0.2.1:119", "[2001:db8::1]:119"; the port may be left
 *             out where a default exists ("192.0.2.1", "[::1]", "::1")
 *   mac       "02:00:00:00:00:01"
 *
 * Every parser reads the whole string or fails: no trailing garbage, no
 * sign, no overflow (checked before it can happen), no locale.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "config_int.h"

#define NS_PER_S INT64_C(1000000000)

static const struct {
	const char *suffix;
	int64_t ns;
} duration_units[] = {
	{ "w", 7 * 86400 * NS_PER_S },
	{ "d", 86400 * NS_PER_S },
	{ "h", 3600 * NS_PER_S },
	{ "ms", 1000000 },	/* before "m", so "5ms" is not read as "5m" + "s" */
	{ "m", 60 * NS_PER_S },
	{ "s", NS_PER_S },
	{ "us", 1000 },
};

/* Rank of each unit from largest to smallest, to enforce decreasing order. */
static int duration_rank(int64_t ns)
{
	static const int64_t order[] = { 7 * 86400 * NS_PER_S, 86400 * NS_PER_S,
					 3600 * NS_PER_S, 60 * NS_PER_S, NS_PER_S,
					 1000000, 1000 };

	for (int i = 0; i < (int)FG_ARRAY_SIZE(order); i++)
		if (order[i] == ns)
			return i;
	return -1;
}

/* Leading decimal digits of *sp into *out (<= max); advance *sp. */
static int parse_digits(const char **sp, uint64_t max, uint64_t *out)
{
	const char *s = *sp;
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (v > (max - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*sp = s;
	*out = v;
	return 0;
}

int cfg_parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v;
	int rc = parse_digits(&s, max, &v);

	if (rc < 0)
		return rc;
	if (*s)
		return -EINVAL;
	*out = v;
	return 0;
}

/*
 * A duration in units of unit_ns nanoseconds. A bare number is seconds.
 * The result must be a whole number of units ("1500ms" is not seconds).
 */
int cfg_parse_duration_unit(const char *s, int64_t unit_ns, int64_t *out)
{
	int64_t total = 0, unit = 0;
	int last_rank = -1, rank;
	uint64_t n;
	int rc;

	rc = parse_digits(&s, INT64_MAX, &n);
	if (rc < 0)
		return rc;
	if (*s == '\0') {
		unit = NS_PER_S;
		goto add;
	}
	for (;;) {
		size_t i;

		for (i = 0; i < FG_ARRAY_SIZE(duration_units); i++) {
			size_t l = strlen(duration_units[i].suffix);

			if (strncmp(s, duration_units[i].suffix, l) == 0 &&
			    (s[l] == '\0' || (s[l] >= '0' && s[l] <= '9'))) {
				s += l;
				break;
			}
		}
		if (i == FG_ARRAY_SIZE(duration_units))
			return -EINVAL;
		unit = duration_units[i].ns;
		rank = duration_rank(unit);
		if (rank <= last_rank)
			return -EINVAL;	/* "5m1h", "1s1s": units must decrease */
		last_rank = rank;
add:
		if (n > (uint64_t)(INT64_MAX / unit) || total > INT64_MAX - (int64_t)n * unit)
			return -ERANGE;
		total += (int64_t)n * unit;
		if (*s == '\0')
			break;
		rc = parse_digits(&s, INT64_MAX, &n);
		if (rc < 0)
			return rc;
		if (*s == '\0')
			return -EINVAL;	/* "1d12": a unit-less tail is ambiguous */
	}
	if (total % unit_ns)
		return -EINVAL;
	*out = total / unit_ns;
	return 0;
}

int fg_parse_duration(const char *s, int64_t *seconds)
{
	return cfg_parse_duration_unit(s, NS_PER_S, seconds);
}

int fg_parse_duration_ms(const char *s, int64_t *ms)
{
	return cfg_parse_duration_unit(s, 1000000, ms);
}

void cfg_fmt_duration(char *buf, size_t len, int64_t v, int64_t unit_ns)
{
	/* the largest unit that divides the value exactly */
	static const size_t order[] = { 0, 1, 2, 4, 5, 3, 6 };	/* w d h m s ms us */

	if (v == 0) {
		snprintf(buf, len, "0");
		return;
	}
	/* the stored unit itself is in the table, so the loop always ends here */
	for (size_t i = 0; i < FG_ARRAY_SIZE(order); i++) {
		int64_t u = duration_units[order[i]].ns;

		if (u % unit_ns == 0 && v % (u / unit_ns) == 0) {
			snprintf(buf, len, "%lld%s", (long long)(v / (u / unit_ns)),
				 duration_units[order[i]].suffix);
			return;
		}
	}
	FG_ASSERT(!"duration unit missing from duration_units");
}

int fg_parse_size(const char *s, uint64_t *bytes)
{
	static const char units[] = "KMGT";
	const char *u;
	uint64_t v;
	unsigned shift = 0;
	int rc = parse_digits(&s, UINT64_MAX, &v);

	if (rc < 0)
		return rc;
	if (*s) {
		if (s[1] || !(u = strchr(units, *s & ~0x20)) || !*u)
			return -EINVAL;
		shift = 10 * (unsigned)(u - units + 1);
		if (v > (UINT64_MAX >> shift))
			return -ERANGE;
	}
	*bytes = v << shift;
	return 0;
}

void cfg_fmt_size(char *buf, size_t len, uint64_t v)
{
	static const char units[] = "TGMK";

	for (unsigned i = 0; v && i < 4; i++) {
		unsigned shift = 10 * (4 - i);

		if ((v & ((UINT64_C(1) << shift) - 1)) == 0) {
			snprintf(buf, len, "%llu%c", (unsigned long long)(v >> shift), units[i]);
			return;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)v);
}

int fg_parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "on", "yes", "true" };
	static const char *const no[] = { "off", "no", "false" };

	for (size_t i = 0; i < FG_ARRAY_SIZE(yes); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

/* An address literal of either family into addr[16]; the family or -EINVAL. */
static int parse_addr(const char *s, uint8_t addr[16])
{
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, s, addr) == 1)
		return AF_INET;
	if (inet_pton(AF_INET6, s, addr) == 1)
		return AF_INET6;
	return -EINVAL;
}

int fg_parse_prefix(const char *s, struct fg_prefix *out)
{
	char tmp[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(s, '/');
	size_t alen = slash ? (size_t)(slash - s) : strlen(s);
	uint64_t len;
	int family;

	if (alen >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, s, alen);
	tmp[alen] = '\0';
	memset(out, 0, sizeof(*out));
	family = parse_addr(tmp, out->addr);
	if (family < 0)
		return family;
	len = family == AF_INET ? 32 : 128;
	if (slash) {
		if (slash[1] == '0' && slash[2])
			return -EINVAL;	/* "/024": one spelling per prefix */
		if (cfg_parse_uint(slash + 1, len, &len) < 0)
			return -EINVAL;
	}
	out->family = family;
	out->len = (uint8_t)len;
	return 0;
}

bool fg_prefix_contains(const struct fg_prefix *p, int family, const void *addr)
{
	const uint8_t *a = addr;
	unsigned full = p->len / 8, rest = p->len % 8;

	if (p->family != family)
		return false;
	if (memcmp(p->addr, a, full) != 0)
		return false;
	if (rest == 0)
		return true;
	return ((p->addr[full] ^ a[full]) & (uint8_t)(0xff00 >> rest)) == 0;
}

bool fg_prefix_same_addr(const struct fg_prefix *a, const struct fg_prefix *b)
{
	return a->family == b->family &&
	       !memcmp(a->addr, b->addr, a->family == AF_INET ? 4 : 16);
}

bool fg_prefix_host_bits(const struct fg_prefix *p)
{
	unsigned bytes = p->family == AF_INET ? 4 : 16;

	for (unsigned bit = p->len; bit < bytes * 8; bit++)
		if (p->addr[bit / 8] & (0x80 >> (bit % 8)))
			return true;
	return false;
}

int fg_prefix_format(const struct fg_prefix *p, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	unsigned full = p->family == AF_INET ? 32 : 128;
	int n;

	if (!inet_ntop(p->family, p->addr, a, sizeof(a)))
		return -EINVAL;
	/* a single address is written bare, as it is usually given */
	if (p->len == full)
		n = snprintf(buf, len, "%s", a);
	else
		n = snprintf(buf, len, "%s/%u", a, p->len);
	return (size_t)n >= len ? -ENOSPC : 0;
}

int fg_parse_endpoint(const char *s, uint16_t default_port, struct fg_endpoint *out)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *port = NULL, *colon = strrchr(s, ':');
	bool bracketed = s[0] == '[';
	size_t hlen;
	uint64_t p = default_port;

	if (bracketed) {
		/* "[v6]" or "[v6]:port" */
		const char *close = strchr(s, ']');

		if (!close || (close[1] && close[1] != ':'))
			return -EINVAL;
		s++;
		hlen = (size_t)(close - s);
		if (close[1] == ':')
			port = close + 2;
	} else if (colon && strchr(s, ':') == colon) {
		/* exactly one ":": IPv4 (or a name, refused below) and a port */
		hlen = (size_t)(colon - s);
		port = colon + 1;
	} else {
		hlen = strlen(s);	/* no port, or a bare IPv6 address */
	}
	if (hlen == 0 || hlen >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, hlen);
	host[hlen] = '\0';
	memset(out, 0, sizeof(*out));
	out->family = parse_addr(host, out->addr);
	if (out->family < 0)
		return -EINVAL;
	if (out->family == AF_INET && bracketed)
		return -EINVAL;	/* "[192.0.2.1]" */
	if (port && cfg_parse_uint(port, 65535, &p) < 0)
		return -EINVAL;
	if (p == 0)
		return -EINVAL;	/* no port given and no default, or port 0 */
	out->port = (uint16_t)p;
	return 0;
}

int fg_endpoint_format(const struct fg_endpoint *ep, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	int n;

	if (!inet_ntop(ep->family, ep->addr, a, sizeof(a)))
		return -EINVAL;
	if (ep->family == AF_INET6)
		n = snprintf(buf, len, "[%s]:%u", a, ep->port);
	else
		n = snprintf(buf, len, "%s:%u", a, ep->port);
	return (size_t)n >= len ? -ENOSPC : 0;
}

socklen_t fg_endpoint_sockaddr(const struct fg_endpoint *ep, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (ep->family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons(ep->port);
		memcpy(&a->sin6_addr, ep->addr, 16);
		return sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		a->sin_family = AF_INET;
		a->sin_port = htons(ep->port);
		memcpy(&a->sin_addr, ep->addr, 4);
		return sizeof(*a);
	}
}

int cfg_parse_mac(const char *s, uint8_t mac[6])
{
	for (int i = 0; i < 6; i++) {
		unsigned v = 0;

		for (int j = 0; j < 2; j++, s++) {
			char c = *s;

			if (c >= '0' && c <= '9')
				v = v * 16 + (unsigned)(c - '0');
			else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
				v = v * 16 + (unsigned)((c | 0x20) - 'a' + 10);
			else
				return -EINVAL;
		}
		mac[i] = (uint8_t)v;
		if (*s != (i < 5 ? ':' : '\0'))
			return -EINVAL;
		s++;
	}
	return 0;
}
