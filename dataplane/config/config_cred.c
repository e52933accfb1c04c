/* SPDX-License-Identifier: MIT */
/*
 * config_cred.c — a peer's AUTHINFO credentials file ([peer] credentials).
 *
 * The password never sits in floodgate.conf: the configuration names a
 * file, which only the service's user may read, and the loader reads it
 * into the peer's entry (struct fg_config_cred). `floodctl config`, the
 * reload's list of changes and every error show the file's name, never
 * its words. The file, one key a line, words as in floodgate.conf:
 *
 *     # peer news.example.org (innfeed.conf: username/password)
 *     username  feeder-a
 *     password  "correct horse battery staple"
 *
 * `username` is optional: without it any username is taken, as innd's
 * incoming.conf takes any (it checks the password alone). Rules:
 *
 *   1. The file is a regular file of at most FG_CONFIG_CRED_FILE_MAX
 *      octets, with no permission bit for its group or for others (mode
 *      600 or 400): a file the whole box can read protects nothing, so it
 *      is refused, not warned about.
 *   2. Lines are "key value"; blank lines and "#" comments are skipped;
 *      a control character (other than a tab) anywhere refuses the file.
 *   3. Each key once, one value of 1..FG_CONFIG_SECRET_MAX octets;
 *      `password` is required. A value may hold spaces (not tabs) when quoted (innd
 *      and innfeed pass them through: the argument of AUTHINFO PASS is
 *      the rest of its line).
 *   4. No message quotes a word of the file: an unknown key is named by
 *      its line alone, for it may be a password written without its key.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config_int.h"

#define CRED_WORDS 4

/* One "key value" line (rules 2 and 3). */
static int cred_line(const char *s, size_t len, struct fg_config_cred *out, bool *seen_user,
		     bool *seen_pass, char *why, size_t whylen)
{
	char buf[FG_CONFIG_CRED_FILE_MAX + 1], *w[CRED_WORDS];
	const char *e = NULL;
	bool user;
	size_t n;
	int rc = 0, nw;

	for (size_t i = 0; i < len; i++)
		if (((unsigned char)s[i] < 0x20 && s[i] != '\t') || s[i] == 0x7f)
			return cfg_fail(why, whylen, -EINVAL, "control character");
	nw = cfg_split_words(s, len, buf, sizeof(buf), w, CRED_WORDS, &e);
	if (nw < 0) {
		rc = cfg_fail(why, whylen, -EINVAL, "%s", e);
		goto out_wipe;
	}
	if (nw == 0)
		goto out_wipe;
	user = strcmp(w[0], "username") == 0;
	if (!user && strcmp(w[0], "password") != 0) {
		rc = cfg_fail(why, whylen, -EINVAL, "not a `username` or `password` line");
		goto out_wipe;
	}
	if (nw != 2) {
		rc = cfg_fail(why, whylen, -EINVAL, "%s: one value (quote it if it holds blanks)", w[0]);
		goto out_wipe;
	}
	if (user ? *seen_user : *seen_pass) {
		rc = cfg_fail(why, whylen, -EINVAL, "%s: given twice", w[0]);
		goto out_wipe;
	}
	n = strlen(w[1]);
	if (n == 0 || n > FG_CONFIG_SECRET_MAX) {
		rc = cfg_fail(why, whylen, -EINVAL, "%s: 1 to %d octets", w[0], FG_CONFIG_SECRET_MAX);
		goto out_wipe;
	}
	/* a tab separates words; inside quotes it would be a control octet
	 * sent in AUTHINFO, which no peer's configuration means */
	if (memchr(w[1], '\t', n)) {
		rc = cfg_fail(why, whylen, -EINVAL, "%s: a tab inside the quoted value", w[0]);
		goto out_wipe;
	}
	if (user) {
		memcpy(out->user, w[1], n);
		out->user_len = (uint16_t)n;
		*seen_user = true;
	} else {
		memcpy(out->pass, w[1], n);
		out->pass_len = (uint16_t)n;
		*seen_pass = true;
	}
out_wipe:
	explicit_bzero(buf, sizeof(buf));
	return rc;
}

int fg_config_cred_parse(const char *text, size_t len, struct fg_config_cred *out,
			 unsigned *line, char *why, size_t whylen)
{
	const char *s = text, *end = text + len, *nl;
	bool seen_user = false, seen_pass = false;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	*line = 0;
	if (len > FG_CONFIG_CRED_FILE_MAX)
		return cfg_fail(why, whylen, -EINVAL, "longer than %d octets", FG_CONFIG_CRED_FILE_MAX);
	while (s < end) {
		size_t n;

		nl = memchr(s, '\n', (size_t)(end - s));
		n = nl ? (size_t)(nl - s) : (size_t)(end - s);
		++*line;
		if (n && s[n - 1] == '\r')
			n--;
		rc = cred_line(s, n, out, &seen_user, &seen_pass, why, whylen);
		if (rc < 0)
			goto out_wipe;
		s = nl ? nl + 1 : end;
	}
	*line = 0;
	if (!seen_pass)
		rc = cfg_fail(why, whylen, -EINVAL, "no `password` line");
out_wipe:
	if (rc < 0)
		explicit_bzero(out, sizeof(*out));
	return rc;
}

int fg_config_cred_read(const char *path, struct fg_config_cred *out, unsigned *line,
			char *why, size_t whylen)
{
	char text[FG_CONFIG_CRED_FILE_MAX + 1];
	struct stat st;
	size_t len = 0;
	ssize_t got;
	int fd, rc;

	*line = 0;
	memset(out, 0, sizeof(*out));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 || fstat(fd, &st) < 0) {
		rc = cfg_fail(why, whylen, -errno, "cannot read: %s", strerror(errno));
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = cfg_fail(why, whylen, -EINVAL, "not a regular file");
		goto out_close;
	}
	/* rule 1: the owner alone (with root) */
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		rc = cfg_fail(why, whylen, -EPERM, "mode %04o lets its group or others at it; it must "
			  "be readable by the service's user only (chmod 600)",
			  (unsigned)(st.st_mode & 07777));
		goto out_close;
	}
	if (st.st_size > FG_CONFIG_CRED_FILE_MAX) {
		rc = cfg_fail(why, whylen, -EFBIG, "longer than %d octets", FG_CONFIG_CRED_FILE_MAX);
		goto out_close;
	}
	while (len < sizeof(text) && (got = read(fd, text + len, sizeof(text) - len)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			rc = cfg_fail(why, whylen, -errno, "cannot read: %s", strerror(errno));
			goto out_wipe;
		}
		len += (size_t)got;
	}
	rc = fg_config_cred_parse(text, len, out, line, why, whylen);
out_wipe:
	explicit_bzero(text, sizeof(text));
out_close:
	if (fd >= 0)
		close(fd);
	return rc;
}

void cfg_read_credentials(struct parse *ps)
{
	struct fg_config *cfg = ps->cfg;
	char why[200];

	for (unsigned p = 0; p < cfg->n_peer; p++) {
		struct fg_config_peer *peer = &cfg->peer[p];
		unsigned at;

		if (!peer->credentials[0])
			continue;
		if (fg_config_cred_read(peer->credentials, &peer->cred, &at, why, sizeof(why)) == 0)
			continue;
		if (at)
			cfg_error_at(ps, cfg_line_of(ps, SEC_PEER, p, "credentials"), "credentials",
				     "%s:%u: %s", peer->credentials, at, why);
		else
			cfg_error_at(ps, cfg_line_of(ps, SEC_PEER, p, "credentials"), "credentials",
				     "%s: %s", peer->credentials, why);
	}
}
