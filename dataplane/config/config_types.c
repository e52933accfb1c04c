/* SPDX-License-Identifier: MIT */
/*
 * config_types.c — the value types of floodgate.conf's key table
 * (config_keys.c): per type, how a key is set from the words of its line
 * (cfg_key_set) and written back as the text that sets it again
 * (cfg_key_format), and the quoting that makes a word read back unchanged.
 *
 * Setting checks the words against the row: one value unless the type
 * is a list, its syntax (config_values.c), its range in the stored unit,
 * an enum's names, a list's room; a refused value returns -errno with the
 * reason in the caller's buffer. "none" empties a list where the row
 * allows it (F_NONE; [rules] required-headers always), "off" turns a key
 * off where it allows that (F_OFF). Formatting writes one "key value"
 * line of canonical text (config_values.c's formatters: a duration in
 * the largest unit that divides it, a size with its suffix), so that
 * loading it sets the same value.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "floodgate/wildmat.h"
#include "config_int.h"

/* ---------------------------------------------------------------- text */

void cfg_text_printf(struct cfg_text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(t->len < t->size ? t->buf + t->len : NULL,
		      t->len < t->size ? t->size - t->len : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->len += (size_t)n;
}

static bool word_needs_quotes(const char *w)
{
	if (*w == '\0' || *w == '#')
		return true;
	for (; *w; w++)
		if (*w == ' ' || *w == '\t' || *w == '"')
			return true;
	return false;
}

void cfg_text_word(struct cfg_text *t, const char *w)
{
	if (!word_needs_quotes(w)) {
		cfg_text_printf(t, "%s", w);
		return;
	}
	cfg_text_printf(t, "\"");
	for (; *w; w++)
		cfg_text_printf(t, *w == '"' || *w == '\\' ? "\\%c" : "%c", *w);
	cfg_text_printf(t, "\"");
}

/* ---------------------------------------------------------------- set */

int cfg_fail(char *why, size_t len, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return rc;
}

static void store_int(void *field, size_t size, int64_t v)
{
	if (size == sizeof(int64_t)) {
		memcpy(field, &v, sizeof(v));
	} else {
		unsigned u = (unsigned)v;

		FG_ASSERT(size == sizeof(unsigned));
		memcpy(field, &u, sizeof(u));
	}
}

static int64_t load_int(const void *field, size_t size)
{
	int64_t v;
	unsigned u;

	if (size == sizeof(int64_t)) {
		memcpy(&v, field, sizeof(v));
		return v;
	}
	memcpy(&u, field, sizeof(u));
	return u;
}

/* Describe k's range in k's own syntax, for error messages. */
static void range_text(const struct cfg_key *k, char *buf, size_t len)
{
	char lo[32], hi[32];

	if (k->type == T_DURATION) {
		cfg_fmt_duration(lo, sizeof(lo), k->min, k->unit);
		cfg_fmt_duration(hi, sizeof(hi), k->max, k->unit);
	} else if (k->type == T_SIZE) {
		cfg_fmt_size(lo, sizeof(lo), (uint64_t)k->min);
		cfg_fmt_size(hi, sizeof(hi), (uint64_t)k->max);
	} else {
		snprintf(lo, sizeof(lo), "%lld", (long long)k->min);
		snprintf(hi, sizeof(hi), "%lld", (long long)k->max);
	}
	if (k->max == INT64_MAX)
		snprintf(buf, len, "at least %s", lo);
	else
		snprintf(buf, len, "between %s and %s", lo, hi);
}

static int set_number(const struct cfg_key *k, void *field, const char *w, char *why,
		      size_t whylen)
{
	static const char *const what[] = {
		[T_DURATION] = "a duration (90, 10d, 1d12h, 250ms)",
		[T_SIZE] = "a size (1000000, 512K, 16M, 8G)",
		[T_UINT] = "a whole number",
		[T_PERCENT] = "a percentage (90 or 90%)",
	};
	char range[80], num[32];
	int64_t v = 0;
	uint64_t u = 0;
	int rc;

	if (k->type == T_PERCENT) {
		size_t l = strlen(w);

		/* "90%" reads as "90" */
		if (l > 1 && l < sizeof(num) && w[l - 1] == '%') {
			memcpy(num, w, l - 1);
			num[l - 1] = '\0';
			w = num;
		}
	}
	if (k->type == T_DURATION)
		rc = cfg_parse_duration_unit(w, k->unit, &v);
	else if (k->type == T_SIZE)
		rc = fg_parse_size(w, &u);
	else
		rc = cfg_parse_uint(w, UINT32_MAX, &u);
	if (rc == 0 && k->type != T_DURATION) {
		if (u > INT64_MAX)
			rc = -ERANGE;
		v = (int64_t)u;
	}
	if (rc == -EINVAL)
		return cfg_fail(why, whylen, rc, "\"%s\" is not %s", w, what[k->type]);
	range_text(k, range, sizeof(range));
	if (rc < 0 || v < k->min || v > k->max)
		return cfg_fail(why, whylen, -ERANGE, "%s is out of range: must be %s", w, range);
	if (k->type == T_SIZE)
		memcpy(field, &u, sizeof(u));
	else
		store_int(field, k->size, v);
	return 0;
}

static int set_enum(const struct cfg_key *k, void *field, const char *w, char *why,
		    size_t whylen)
{
	char list[96] = "";

	for (int i = 0; k->names[i]; i++) {
		if (strcmp(w, k->names[i]) == 0) {
			memcpy(field, &i, sizeof(i));
			return 0;
		}
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
			 i ? ", " : "", k->names[i]);
	}
	return cfg_fail(why, whylen, -EINVAL, "\"%s\" is not one of: %s", w, list);
}

static bool printable_word(const char *w)
{
	for (const unsigned char *u = (const unsigned char *)w; *u; u++)
		if (*u <= 0x20 || *u >= 0x7f)
			return false;
	return *w != '\0';
}

static int set_string(const struct cfg_key *k, char *field, const char *w, char *why,
		      size_t whylen)
{
	if ((k->flags & F_OFF) && strcmp(w, "off") == 0) {
		field[0] = '\0';
		return 0;
	}
	if (strlen(w) >= k->size)
		return cfg_fail(why, whylen, -ENOSPC, "too long (at most %zu octets)", k->size - 1);
	if (k->type == T_PATH) {
		if (w[0] != '/')
			return cfg_fail(why, whylen, -EINVAL, "\"%s\" is not an absolute path", w);
		for (const unsigned char *u = (const unsigned char *)w; *u; u++)
			if (*u < 0x20 || *u == 0x7f)
				return cfg_fail(why, whylen, -EINVAL, "control character in path");
	} else if (!printable_word(w)) {
		return cfg_fail(why, whylen, -EINVAL, "must be printable ASCII without blanks");
	}
	memset(field, 0, k->size);
	memcpy(field, w, strlen(w));
	return 0;
}

static int set_endpoint(const struct cfg_key *k, void *field, const char *w, char *why,
			size_t whylen)
{
	struct fg_endpoint ep;

	if ((k->flags & F_OFF) && strcmp(w, "off") == 0) {
		memset(field, 0, sizeof(ep));
		return 0;
	}
	if (fg_parse_endpoint(w, k->port, &ep) < 0)
		return cfg_fail(why, whylen, -EINVAL, "\"%s\" is not an address:port%s", w,
			    k->port ? " (IPv6 as [addr]:port; port 1-65535)" :
				      " (the port is required; IPv6 as [addr]:port)");
	memcpy(field, &ep, sizeof(ep));
	return 0;
}

static int set_prefix(void *field, const char *w, bool network, char *why, size_t whylen)
{
	struct fg_prefix p;
	char fixed[64];

	if (fg_parse_prefix(w, &p) < 0)
		return cfg_fail(why, whylen, -EINVAL,
			    "\"%s\" is not an IPv4 or IPv6 address or prefix", w);
	if (network && fg_prefix_host_bits(&p)) {
		/* "192.0.2.10/24" names a host, not a network: a typo, most likely */
		struct fg_prefix net = p;

		for (unsigned bit = p.len; bit < 128; bit++)
			net.addr[bit / 8] &= (uint8_t)~(0x80 >> (bit % 8));
		fg_prefix_format(&net, fixed, sizeof(fixed));
		return cfg_fail(why, whylen, -EINVAL, "%s has host bits set (did you mean %s?)",
			    w, fixed);
	}
	if (!network && !fg_prefix_host_bits(&p) && p.len < (p.family == AF_INET ? 31 : 127))
		return cfg_fail(why, whylen, -EINVAL, "%s is a network; give our address on it "
			    "(10.99.0.1/24, 2001:db8::1/64)", w);
	memcpy(field, &p, sizeof(p));
	return 0;
}

static int set_mac(void *field, const char *w, char *why, size_t whylen)
{
	uint8_t mac[6];

	if (strcmp(w, "auto") == 0) {
		memset(field, 0, 6);
		return 0;
	}
	if (cfg_parse_mac(w, mac) < 0)
		return cfg_fail(why, whylen, -EINVAL, "\"%s\" is not a MAC address "
			    "(02:00:00:00:00:01) or auto", w);
	if ((mac[0] & 1) || !(mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]))
		return cfg_fail(why, whylen, -EINVAL, "%s is not a unicast address", w);
	memcpy(field, mac, 6);
	return 0;
}

/* A letter or digit, then letters, digits or octets of `more`. */
static bool alnum_word(const char *s, const char *more)
{
	if (!((*s | 0x20) >= 'a' && (*s | 0x20) <= 'z') && !(*s >= '0' && *s <= '9'))
		return false;
	for (s++; *s; s++)
		if (!((*s | 0x20) >= 'a' && (*s | 0x20) <= 'z') && !(*s >= '0' && *s <= '9') &&
		    !strchr(more, *s))
			return false;
	return true;
}

/* RFC 5536 3.1.5: path-identity = (ALPHA / DIGIT) *(ALPHA / DIGIT / "-" / "." / ":" / "_") */
static bool valid_path_identity(const char *s)
{
	return alnum_word(s, "-.:_");
}

/* RFC 5322 3.6.8: field-name = 1*ftext, printable US-ASCII except ":" */
static bool valid_field_name(const char *s)
{
	return printable_word(s) && !strchr(s, ':');
}

/* How many items a list key holds; each is k->size / list_max(k) octets. */
static unsigned list_max(const struct cfg_key *k)
{
	switch (k->type) {
	case T_PATH_IDS:
		return FG_CONFIG_MAX_PATH_IDS;
	case T_LISTEN:
		return FG_CONFIG_MAX_LISTEN;
	case T_PEER_ADDRS:
		return FG_CONFIG_MAX_PEER_ADDRS;
	case T_ADDRS:
		return FG_CONFIG_MAX_DP_ADDRS;
	case T_DISTS:
		return FG_CONFIG_MAX_DISTS;
	default:
		FG_ASSERT(k->type == T_HEADERS);
		return FG_CONFIG_MAX_REQUIRED_HEADERS;
	}
}

/* RFC 5536 3.2.4: dist-name = ALPHA / DIGIT *( ALPHA / DIGIT / "+" / "-" / "_" ),
 * here with an optional "!" before it (newsfeeds(5): not to be sent). */
static bool valid_distribution(const char *s)
{
	return alnum_word(s + (*s == '!'), "+-_");
}

/* One distribution word (of a line that may also separate them by ","). */
static int set_dist(const char *w, size_t len, char *item, size_t elem, char *why,
		    size_t whylen)
{
	char d[FG_CONFIG_DIST_MAX];

	if (len == 0)
		return cfg_fail(why, whylen, -EINVAL, "an empty distribution");
	if (len >= elem)
		return cfg_fail(why, whylen, -EINVAL, "\"%.*s\" is too long (at most %zu octets)",
			    (int)len, w, elem - 1);
	memcpy(d, w, len);
	d[len] = '\0';
	if (!valid_distribution(d))
		return cfg_fail(why, whylen, -EINVAL, "\"%s\" is not a distribution (RFC 5536 "
			    "3.2.4, \"!\" before it to exclude it)", d);
	memset(item, 0, elem);
	memcpy(item, d, len);
	return 0;
}

/* Append the words of a line to a list key, each checked for its type. */
static int set_list(const struct cfg_key *k, void *base, char *const *w, unsigned n,
		    char *why, size_t whylen)
{
	unsigned *cnt = (unsigned *)((char *)base + k->cnt);
	char *field = (char *)base + k->off;
	unsigned max = list_max(k);
	size_t elem = k->size / max;
	int rc;

	FG_ASSERT(elem * max == k->size);
	for (unsigned i = 0; i < n; i++) {
		char *item = field + (size_t)*cnt * elem;

		if (*cnt == max)
			return cfg_fail(why, whylen, -E2BIG, "too many values (at most %u)", max);
		if (k->type == T_DISTS) {
			const char *p = w[i], *comma;

			/* "local, nyc" is two words: a "," may end or begin one */
			for (bool first = true;; first = false) {
				size_t len;

				comma = strchr(p, ',');
				len = comma ? (size_t)(comma - p) : strlen(p);
				if (len == 0 && (first || !comma)) {
					if (!comma)
						break;
					p = comma + 1;
					continue;
				}
				if (*cnt == max)
					return cfg_fail(why, whylen, -E2BIG, "too many values "
						    "(at most %u)", max);
				rc = set_dist(p, len, field + (size_t)*cnt * elem, elem, why,
					      whylen);
				if (rc < 0)
					return rc;
				(*cnt)++;
				if (!comma)
					break;
				p = comma + 1;
			}
			continue;
		} else if (k->type == T_PATH_IDS) {
			if (strlen(w[i]) >= elem || !valid_path_identity(w[i]))
				return cfg_fail(why, whylen, -EINVAL, "\"%s\" is not a path "
					    "identity (RFC 5536 3.1.5; at most %zu octets)",
					    w[i], elem - 1);
			memset(item, 0, elem);
			memcpy(item, w[i], strlen(w[i]));
		} else if (k->type == T_HEADERS) {
			if (strlen(w[i]) >= elem || !valid_field_name(w[i]))
				return cfg_fail(why, whylen, -EINVAL, "\"%s\" is not a header "
					    "field name (at most %zu octets)", w[i], elem - 1);
			for (unsigned j = 0; j < *cnt; j++)
				if (strcasecmp(field + j * elem, w[i]) == 0)
					return cfg_fail(why, whylen, -EINVAL, "%s listed twice", w[i]);
			memset(item, 0, elem);
			memcpy(item, w[i], strlen(w[i]));
		} else {
			rc = k->type == T_LISTEN ? set_endpoint(k, item, w[i], why, whylen) :
			     set_prefix(item, w[i], k->type != T_ADDRS, why, whylen);
			if (rc < 0)
				return rc;
			for (unsigned j = 0; k->type == T_ADDRS && j < *cnt; j++)
				if (fg_prefix_same_addr((const struct fg_prefix *)field + j,
							(const struct fg_prefix *)item))
					return cfg_fail(why, whylen, -EINVAL, "%s listed twice", w[i]);
		}
		(*cnt)++;
	}
	return 0;
}

/* newsgroups: the words of a line joined by ",", appended to earlier lines */
static int set_wildmat(const struct cfg_key *k, char *field, char *const *w, unsigned n,
		       char *why, size_t whylen)
{
	char part[FG_CONFIG_WILDMAT_MAX];
	size_t len = 0, off;
	const char *what;

	for (unsigned i = 0; i < n; i++) {
		size_t l = strlen(w[i]);
		bool comma = i > 0 && part[len - 1] != ',' && w[i][0] != ',';

		if (len + comma + l >= sizeof(part))
			goto too_long;
		if (comma)
			part[len++] = ',';
		memcpy(part + len, w[i], l);
		len += l;
	}
	part[len] = '\0';
	if (fg_wildmat_check(part, &off, &what) < 0)
		return cfg_fail(why, whylen, -EINVAL, "\"%s\": %s (at offset %zu)", part, what, off);
	off = strlen(field);
	if (off + (off > 0) + len >= k->size)
		goto too_long;
	if (off > 0)
		field[off++] = ',';
	memcpy(field + off, part, len + 1);
	return 0;
too_long:
	return cfg_fail(why, whylen, -ENOSPC, "pattern too long (at most %zu octets in all)",
		    k->size - 1);
}

static int set_args(const struct cfg_key *k, char *field, char *const *w, unsigned n,
		    char *why, size_t whylen)
{
	struct cfg_text t = { .buf = field, .size = k->size };

	for (unsigned i = 0; i < n; i++) {
		if (i)
			cfg_text_printf(&t, " ");
		cfg_text_word(&t, w[i]);
	}
	if (t.len >= k->size) {
		field[0] = '\0';
		return cfg_fail(why, whylen, -ENOSPC, "too long (at most %zu octets)", k->size - 1);
	}
	return 0;
}

static bool is_list(enum cfg_type t)
{
	return t == T_PATH_IDS || t == T_LISTEN || t == T_PEER_ADDRS || t == T_ADDRS ||
	       t == T_HEADERS || t == T_WILDMAT || t == T_ARGS || t == T_DISTS || t == T_VLAN;
}

/* "vlan ID [ADDRESS/LEN]" (IEEE 802.1Q: IDs 1 to 4094; 0 and 4095 are
 * reserved): one VLAN a line, each ID once, at most one without an
 * address (the VLAN `address` is on). "none" empties the list. */
static int set_vlan(const struct cfg_key *k, void *base, char *const *w, unsigned n,
		    char *why, size_t whylen)
{
	unsigned *cnt = (unsigned *)((char *)base + k->cnt);
	struct fg_config_vlan *v = (struct fg_config_vlan *)((char *)base + k->off), nv;
	char *end;
	unsigned long id;
	int rc;

	if (n == 1 && strcmp(w[0], "none") == 0) {
		*cnt = 0;
		memset(v, 0, k->size);
		return 0;
	}
	if (n > 2)
		return cfg_fail(why, whylen, -EINVAL, "expects a VLAN ID and at most one address");
	id = strtoul(w[0], &end, 10);
	if (*end || end == w[0] || w[0][0] == '-' || id < 1 || id > FG_VLAN_ID_MAX)
		return cfg_fail(why, whylen, -EINVAL, "\"%s\" is not a VLAN ID (1 to %u)", w[0],
			    FG_VLAN_ID_MAX);
	memset(&nv, 0, sizeof(nv));
	nv.id = (unsigned)id;
	if (n == 2 && (rc = set_prefix(&nv.addr, w[1], false, why, whylen)) < 0)
		return rc;
	for (unsigned i = 0; i < *cnt; i++) {
		if (v[i].id == nv.id)
			return cfg_fail(why, whylen, -EINVAL, "VLAN %u is listed twice", nv.id);
		if (n == 1 && v[i].addr.family == 0)
			return cfg_fail(why, whylen, -EINVAL, "`address` is on VLAN %u already",
				    v[i].id);
	}
	if (*cnt == FG_CONFIG_MAX_VLANS)
		return cfg_fail(why, whylen, -E2BIG, "too many VLANs (at most %u)",
			    FG_CONFIG_MAX_VLANS);
	v[(*cnt)++] = nv;
	return 0;
}

static void format_vlan(struct cfg_text *t, const struct cfg_key *k, const void *base)
{
	const struct fg_config_vlan *v = (const void *)((const char *)base + k->off);
	unsigned cnt;
	char buf[64];

	memcpy(&cnt, (const char *)base + k->cnt, sizeof(cnt));
	if (cnt == 0)
		cfg_text_printf(t, " none");
	for (unsigned i = 0; i < cnt; i++) {
		if (i)
			cfg_text_printf(t, "\n%-20s", k->name);
		cfg_text_printf(t, " %u", v[i].id);
		if (v[i].addr.family) {
			fg_prefix_format(&v[i].addr, buf, sizeof(buf));
			cfg_text_printf(t, " %s", buf);
		}
	}
}

int cfg_key_set(const struct cfg_key *k, void *base, char *const *w, unsigned n,
		char *why, size_t whylen)
{
	char *field = (char *)base + k->off;

	if (n == 0)
		return cfg_fail(why, whylen, -EINVAL, "missing value");
	if (n > 1 && !is_list(k->type))
		return cfg_fail(why, whylen, -EINVAL, "expects one value, got %u "
			    "(quote a value that holds blanks)", n);
	switch ((enum cfg_type)k->type) {
	case T_NAME:
	case T_PATH:
	case T_DEVICE:
		return set_string(k, field, w[0], why, whylen);
	case T_DURATION:
	case T_SIZE:
	case T_UINT:
	case T_PERCENT:
		return set_number(k, field, w[0], why, whylen);
	case T_BOOL:
		if (fg_parse_bool(w[0], (bool *)field) < 0)
			return cfg_fail(why, whylen, -EINVAL, "\"%s\" is not on/off, yes/no "
				    "or true/false", w[0]);
		return 0;
	case T_ENUM:
		return set_enum(k, field, w[0], why, whylen);
	case T_ENDPOINT:
		return set_endpoint(k, field, w[0], why, whylen);
	case T_MAC:
		return set_mac(field, w[0], why, whylen);
	case T_HEADERS:
		*(unsigned *)((char *)base + k->cnt) = 0;
		memset(field, 0, k->size);
		if (n == 1 && strcmp(w[0], "none") == 0)
			return 0;
		return set_list(k, base, w, n, why, whylen);
	case T_PATH_IDS:
	case T_LISTEN:
	case T_PEER_ADDRS:
	case T_ADDRS:
	case T_DISTS:
		if ((k->flags & F_NONE) && n == 1 && strcmp(w[0], "none") == 0) {
			*(unsigned *)((char *)base + k->cnt) = 0;
			memset(field, 0, k->size);
			return 0;
		}
		return set_list(k, base, w, n, why, whylen);
	case T_VLAN:
		return set_vlan(k, base, w, n, why, whylen);
	case T_WILDMAT:
		return set_wildmat(k, field, w, n, why, whylen);
	case T_ARGS:
		return set_args(k, field, w, n, why, whylen);
	}
	return cfg_fail(why, whylen, -EINVAL, "internal: unknown key type");
}

/* ---------------------------------------------------------------- format */

static void format_list(struct cfg_text *t, const struct cfg_key *k, const void *base)
{
	unsigned cnt;
	const char *field = (const char *)base + k->off;
	size_t elem = k->size / list_max(k);
	char buf[64];

	memcpy(&cnt, (const char *)base + k->cnt, sizeof(cnt));
	if (cnt == 0 && (k->type == T_HEADERS || (k->flags & F_NONE)))
		cfg_text_printf(t, " none");
	for (unsigned i = 0; i < cnt; i++) {
		if (k->type == T_LISTEN)
			fg_endpoint_format((const struct fg_endpoint *)field + i, buf, sizeof(buf));
		else if (k->type == T_PEER_ADDRS || k->type == T_ADDRS)
			fg_prefix_format((const struct fg_prefix *)field + i, buf, sizeof(buf));
		else
			snprintf(buf, sizeof(buf), "%s", field + i * elem);
		cfg_text_printf(t, " %s", buf);
	}
}

void cfg_key_format(struct cfg_text *t, const struct cfg_key *k, const void *base)
{
	const char *field = (const char *)base + k->off;
	char buf[80];
	int e;

	cfg_text_printf(t, "%-20s", k->name);
	switch ((enum cfg_type)k->type) {
	case T_NAME:
	case T_DEVICE:
	case T_PATH:
	case T_WILDMAT:
		cfg_text_printf(t, " ");
		if ((k->flags & F_OFF) && field[0] == '\0')
			cfg_text_printf(t, "off");
		else
			cfg_text_word(t, field);
		break;
	case T_ARGS:
		cfg_text_printf(t, " %s", field);	/* stored already quoted */
		break;
	case T_DURATION:
		cfg_fmt_duration(buf, sizeof(buf), load_int(field, k->size), k->unit);
		cfg_text_printf(t, " %s", buf);
		break;
	case T_SIZE: {
		uint64_t v;

		memcpy(&v, field, sizeof(v));
		cfg_fmt_size(buf, sizeof(buf), v);
		cfg_text_printf(t, " %s", buf);
		break;
	}
	case T_UINT:
	case T_PERCENT:
		cfg_text_printf(t, " %lld%s", (long long)load_int(field, k->size),
				k->type == T_PERCENT ? "%" : "");
		break;
	case T_BOOL:
		cfg_text_printf(t, " %s", *(const bool *)field ? "on" : "off");
		break;
	case T_ENUM:
		memcpy(&e, field, sizeof(e));
		cfg_text_printf(t, " %s", k->names[e]);
		break;
	case T_ENDPOINT:
		if (((const struct fg_endpoint *)field)->port == 0)
			snprintf(buf, sizeof(buf), "off");
		else
			fg_endpoint_format((const struct fg_endpoint *)field, buf, sizeof(buf));
		cfg_text_printf(t, " %s", buf);
		break;
	case T_MAC: {
		const uint8_t *m = (const uint8_t *)field;

		if (!(m[0] | m[1] | m[2] | m[3] | m[4] | m[5]))
			cfg_text_printf(t, " auto");
		else
			cfg_text_printf(t, " %02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1],
					m[2], m[3], m[4], m[5]);
		break;
	}
	case T_PATH_IDS:
	case T_LISTEN:
	case T_PEER_ADDRS:
	case T_ADDRS:
	case T_HEADERS:
	case T_DISTS:
		format_list(t, k, base);
		break;
	case T_VLAN:
		format_vlan(t, k, base);
		break;
	}
	cfg_text_printf(t, "\n");
}
