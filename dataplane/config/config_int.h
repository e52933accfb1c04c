/* SPDX-License-Identifier: MIT */
/*
 * config_int.h — what the parts of the config parser share: the key table
 * (one row per key: section, type, where it lives, its range and default),
 * the line tokenizer, the value parsers and formatters per type, and the
 * loader's state the cross-key checks read.
 *
 * The table is the single definition of the file format: the loader sets
 * fields through it, the formatter writes them back through it, defaults
 * are rows' `def` text parsed like any file line, and the documentation
 * test walks it to check that docs/configuration.md names every key.
 */
#ifndef FLOODGATE_CONFIG_INT_H
#define FLOODGATE_CONFIG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "floodgate/config.h"

enum cfg_section {
	SEC_SITE,
	SEC_RULES,
	SEC_SESSION,
	SEC_HISTORY,
	SEC_PERSISTENCE,
	SEC_STATS,
	SEC_DATAPLANE,
	SEC_LOG,
	SEC_CLUSTER,
	SEC_PEER,		/* [peer NAME], fields of struct fg_config_peer */
	SEC_DOWNSTREAM,		/* [downstream NAME], struct fg_config_downstream */
	SEC__COUNT,
};

enum cfg_type {
	T_NAME,		/* one word of printable ASCII, char[size] */
	T_PATH,		/* an absolute path, char[size]; F_OFF: "off" = "" */
	T_DEVICE,	/* one word (a DPDK device string), char[size] */
	T_DURATION,	/* int64_t or unsigned in `unit` nanoseconds */
	T_SIZE,		/* uint64_t octets (or a count), K/M/G/T suffixes */
	T_UINT,		/* unsigned */
	T_PERCENT,	/* unsigned, "90" or "90%" */
	T_BOOL,		/* bool */
	T_ENUM,		/* an int-sized enum named by `names` */
	T_ENDPOINT,	/* struct fg_endpoint; F_OFF: "off" = port 0 */
	T_ADDRS,	/* [dataplane] address: our addresses with prefix lengths, a list */
	T_MAC,		/* uint8_t[6]; "auto" = all zero */
	T_PATH_IDS,	/* [site] path-identity: list, repeatable */
	T_LISTEN,	/* [site] listen: endpoints, repeatable */
	T_PEER_ADDRS,	/* [peer] address: prefixes, repeatable */
	T_HEADERS,	/* [rules] required-headers: field names, or "none" */
	T_WILDMAT,	/* [peer] newsgroups: words joined by ",", repeatable */
	T_ARGS,		/* [dataplane] eal-args: words, stored re-quoted */
	T_DISTS,	/* [downstream] distributions: words ("," too), "!" negates */
	T_VLAN,		/* [dataplane] vlan: "ID [ADDRESS/LEN]" a line, repeatable */
};

#define F_REPEAT 0x1	/* may appear more than once (lists append) */
#define F_OFF 0x2	/* accepts "off" */
#define F_NONE 0x4	/* lists: "none" is the empty list (and how it is written) */

struct cfg_key {
	uint8_t section;	/* enum cfg_section */
	uint8_t type;		/* enum cfg_type */
	uint8_t flags;
	const char *name;
	size_t off, size;	/* field in its struct */
	size_t cnt;		/* lists: offset of the `unsigned` element count */
	uint16_t port;		/* endpoints: default port (0: required) */
	int64_t min, max;	/* numeric range, in the stored unit */
	int64_t unit;		/* T_DURATION: nanoseconds per stored unit */
	const char *const *names;	/* T_ENUM, in enum order, NULL-ended */
	const char *def;	/* default as file text; NULL: derived (see config.c) */
};

extern const struct cfg_key cfg_keys[];
extern const unsigned cfg_n_keys;
extern const char *const cfg_section_names[SEC__COUNT];

/* Index of `name` in `sec`, or -1. */
int cfg_key_find(enum cfg_section sec, const char *name);

/* The struct a key of `sec` lives in, inside `cfg` (`idx`: peer or downstream). */
void *cfg_key_base(struct fg_config *cfg, enum cfg_section sec, unsigned idx);

/* Write the message into why (vsnprintf) and return rc. */
int cfg_fail(char *why, size_t len, int rc, const char *fmt, ...) FG_PRINTF(4, 5);

/*
 * Set a key from the words of one line (words[0] is the first value).
 * 0, or -EINVAL/-ERANGE/-ENOSPC with a message in `why`.
 */
int cfg_key_set(const struct cfg_key *k, void *base, char *const *words, unsigned n,
		char *why, size_t whylen);

/* Append "key value\n" for k to the text buffer. */
struct cfg_text {
	char *buf;
	size_t len, size;	/* len may pass size: counts what was needed */
};
void cfg_text_printf(struct cfg_text *t, const char *fmt, ...) FG_PRINTF(2, 3);
void cfg_key_format(struct cfg_text *t, const struct cfg_key *k, const void *base);

/*
 * Split one line (no newline) into words: blanks separate, "#" at the start
 * of a word starts a comment, "..." quotes a word (inside, \" and \\ are
 * escapes; any other "\" is literal). Words are copied NUL-terminated into
 * buf. Returns the number of words, or -EINVAL/-E2BIG/-ENOSPC with *why.
 */
int cfg_split_words(const char *s, size_t len, char *buf, size_t bufsz,
		    char **words, unsigned max, const char **why);

/* Write one word so that cfg_split_words reads it back unchanged. */
void cfg_text_word(struct cfg_text *t, const char *w);

/* Value formatters (canonical text). */
void cfg_fmt_duration(char *buf, size_t len, int64_t v, int64_t unit_ns);
void cfg_fmt_size(char *buf, size_t len, uint64_t v);
int cfg_parse_duration_unit(const char *s, int64_t unit_ns, int64_t *out);
int cfg_parse_uint(const char *s, uint64_t max, uint64_t *out);
int cfg_parse_mac(const char *s, uint8_t mac[6]);

/*
 * The loader's state (config.c), which the cross-key checks
 * (config_check.c) read: every key's line, per section instance.
 */
#define CFG_MAX_KEYS 112
#define CFG_DAY INT64_C(86400)
/* key state slots: 0 global, then one per peer, then one per downstream */
#define SLOT_PEER(i) (1 + (i))
#define SLOT_DS(i) (1 + FG_CONFIG_MAX_PEERS + (i))
#define N_SLOTS (1 + FG_CONFIG_MAX_PEERS + FG_CONFIG_MAX_DOWNSTREAMS)

struct key_state {
	unsigned line;		/* line that set it; 0: not set */
	bool bad;		/* its line was refused */
};

struct parse {
	const char *name;
	struct fg_config *cfg;
	struct fg_config_errors *errs;
	int sec;			/* enum cfg_section, SEC_NONE or SEC_SKIP */
	unsigned idx;			/* peer or downstream being read */
	unsigned line;
	unsigned hdr_line[N_SLOTS];	/* line of each [peer]/[downstream] header */
	unsigned addr_line[FG_CONFIG_MAX_PEERS][FG_CONFIG_MAX_PEER_ADDRS];
	struct key_state ks[N_SLOTS][CFG_MAX_KEYS];
};

/* A problem at `line` (0: none) of the file, about `key`: an error
 * refuses the load, a warning does not. Neither stops it. */
void cfg_error_at(struct parse *ps, unsigned line, const char *key, const char *fmt, ...)
	FG_PRINTF(4, 5);
void cfg_warn_at(struct parse *ps, unsigned line, const char *key, const char *fmt, ...)
	FG_PRINTF(4, 5);
/* Key `name` of section instance (sec, idx): its line was refused; the
 * line that set it (0: a default). */
bool cfg_refused(struct parse *ps, enum cfg_section sec, unsigned idx, const char *name);
unsigned cfg_line_of(struct parse *ps, enum cfg_section sec, unsigned idx,
		     const char *name);

/* A section's or a downstream id's name: one or more letters, digits,
 * "-", "_" or "." (the length is the caller's to check). */
bool cfg_valid_name(const char *s);

/* config_cred.c: every peer's credentials file, read (pass 3b: after the
 * defaults, before the checks). */
void cfg_read_credentials(struct parse *ps);

/* config_check.c: the checks across keys and sections (pass 4). */
void cfg_check(struct parse *ps);

#endif /* FLOODGATE_CONFIG_INT_H */
