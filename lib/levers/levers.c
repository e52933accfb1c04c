/* SPDX-License-Identifier: MIT */
/*
 * levers.c — the operator levers' state and journal (levers.h has the
 * format). The levers' owner calls these (levers.h, "Serving the
 * levers"), never an engine's thread: a change is rare, and its fsync may
 * take milliseconds.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "floodgate/datadir.h"
#include "floodgate/levers.h"
#include "floodgate/log.h"

static bool printable(const char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			return false;
	return true;
}

int fg_levers_throttle(struct fg_levers *l, const char *reason)
{
	if (!reason || !reason[0]) {
		l->throttle[0] = '\0';
		return 0;
	}
	if (strlen(reason) > FG_NNTP_ENGINE_REASON_MAX || !printable(reason))
		return -EINVAL;
	snprintf(l->throttle, sizeof(l->throttle), "%s", reason);
	return 0;
}

int fg_levers_pause(struct fg_levers *l, const char *peer, fg_time_t until)
{
	if (!peer || !peer[0] || !printable(peer) || strchr(peer, ' '))
		return -EINVAL;
	return fg_nntp_pause_set(l->pause, &l->n_pauses, peer, until);
}

unsigned fg_levers_expire(struct fg_levers *l, fg_time_t now)
{
	unsigned n = 0;

	for (unsigned i = 0; i < l->n_pauses;) {
		if (l->pause[i].until <= now) {
			l->pause[i] = l->pause[--l->n_pauses];
			n++;
		} else {
			i++;
		}
	}
	return n;
}

static int path_of(const char *dir, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s", dir, FG_LEVERS_FILE);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The file does not end with a line's end (a write cut short). */
static bool torn_tail(int fd)
{
	off_t end = lseek(fd, 0, SEEK_END);
	char c;

	return end > 0 && pread(fd, &c, 1, end - 1) == 1 && c != '\n';
}

int fg_levers_journal(const char *dir, fg_time_t now, const char *change)
{
	char path[PATH_MAX], line[FG_NNTP_ENGINE_REASON_MAX + FG_CONFIG_NAME_MAX + 64];
	bool created;
	int fd, n, rc = 0;

	rc = path_of(dir, path, sizeof(path));
	if (rc < 0)
		return rc;
	created = access(path, F_OK) != 0;
	n = snprintf(line, sizeof(line), "%s%lld %s\n", created ? FG_LEVERS_MAGIC " "
		     FG_STRINGIFY(FG_LEVERS_VERSION) "\n" : "", (long long)now, change);
	if (n < 0 || (size_t)n >= sizeof(line))
		return -EINVAL;
	fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	/* after a crash's torn line, start a line of our own */
	if (!torn_tail(fd) || write(fd, "\n", 1) == 1) {
		if (write(fd, line, (size_t)n) != n || fsync(fd) < 0)
			rc = errno ? -errno : -EIO;
	} else {
		rc = errno ? -errno : -EIO;
	}
	close(fd);
	if (rc == 0 && created)
		rc = fg_datadir_fsync(dir);
	return rc;
}

/* One journal line into l; false when it does not parse. */
static bool replay_line(struct fg_levers *l, char *s)
{
	char *verb, *arg, *end;

	strtoll(s, &end, 10);
	if (end == s || *end != ' ')
		return false;
	verb = end + 1;
	arg = strchr(verb, ' ');
	if (arg)
		*arg++ = '\0';
	if (strcmp(verb, "go") == 0 && !arg)
		return fg_levers_throttle(l, NULL) == 0;
	if (strcmp(verb, "throttle") == 0 && arg)
		return fg_levers_throttle(l, arg) == 0;
	if (strcmp(verb, "resume") == 0 && arg) {
		int rc = fg_levers_pause(l, arg, 0);

		return rc == 0 || rc == -ENOENT;	/* over already */
	}
	if (strcmp(verb, "pause") == 0 && arg) {
		char *t = strchr(arg, ' ');
		long long until;

		if (!t)
			return false;
		*t++ = '\0';
		until = strtoll(t, &end, 10);
		return end != t && *end == '\0' && until > 0 && fg_levers_pause(l, arg, until) == 0;
	}
	return false;
}

int fg_levers_load(const char *dir, fg_time_t now, struct fg_levers *l, unsigned *bad)
{
	char path[PATH_MAX], buf[FG_NNTP_ENGINE_REASON_MAX + FG_CONFIG_NAME_MAX + 128];
	unsigned nbad = 0;
	FILE *f;
	int rc;

	memset(l, 0, sizeof(*l));
	if (bad)
		*bad = 0;
	rc = path_of(dir, path, sizeof(path));
	if (rc < 0)
		return rc;
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	for (bool first = true; fgets(buf, sizeof(buf), f); first = false) {
		size_t n = strlen(buf);
		unsigned version;

		if (first && sscanf(buf, FG_LEVERS_MAGIC " %u", &version) == 1) {
			if (version >= 1 && version <= FG_LEVERS_VERSION)
				continue;
			FG_LOG_ERR("levers", "%s: %s", path,
				   fg_datadir_version_why("levers journal format", version, 1,
							  FG_LEVERS_VERSION));
			fclose(f);
			return -EPROTONOSUPPORT;
		}

		if (n == 0 || buf[n - 1] != '\n') {
			nbad++;		/* torn, or longer than any line we write */
			continue;
		}
		buf[n - 1] = '\0';
		nbad += !replay_line(l, buf);
	}
	fclose(f);
	fg_levers_expire(l, now);
	if (bad)
		*bad = nbad;
	return 0;
}

void fg_levers_apply(const struct fg_levers *l, struct fg_nntp_engine *e)
{
	const char *was = fg_nntp_engine_throttled(e);

	/* the same throttle again closes nothing again */
	if (!l->throttle[0] || !was || strcmp(was, l->throttle) != 0)
		fg_nntp_engine_throttle(e, l->throttle[0] ? l->throttle : NULL);
	fg_nntp_engine_pauses_clear(e);
	for (unsigned i = 0; i < l->n_pauses; i++)
		fg_nntp_engine_pause(e, l->pause[i].peer, l->pause[i].until);
}
