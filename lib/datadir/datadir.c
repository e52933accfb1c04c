/* SPDX-License-Identifier: MIT */
/*
 * datadir.c — numbered files, durable writes and set-aside in floodctld's
 * data directory (datadir.h has the directory's contents and rules).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "floodgate/datadir.h"
#include "floodgate/log.h"

#define COMP "datadir"

int fg_datadir_path(const char *dir, const char *prefix, uint64_t num, const char *suffix,
		    char *out, size_t len)
{
	int n = snprintf(out, len, "%s/%s%016" PRIx64 "%s", dir, prefix, num, suffix);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The number in `name` if it is prefix + 16 lowercase hex + suffix. */
static bool parse_numbered(const char *name, const char *prefix, const char *suffix,
			   uint64_t *num)
{
	size_t pl = strlen(prefix), sl = strlen(suffix), nl = strlen(name);
	uint64_t v = 0;

	if (nl != pl + 16 + sl || strncmp(name, prefix, pl) != 0 ||
	    strcmp(name + pl + 16, suffix) != 0)
		return false;
	for (size_t i = pl; i < pl + 16; i++) {
		char c = name[i];

		if (c >= '0' && c <= '9')
			v = v << 4 | (uint64_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (uint64_t)(c - 'a' + 10);
		else
			return false;
	}
	*num = v;
	return true;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int fg_datadir_list(const char *dir, const char *prefix, const char *suffix,
		    uint64_t **nums, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	uint64_t *v = NULL, num;
	size_t cnt = 0, cap = 0;
	int rc = 0;

	*nums = NULL;
	*n = 0;
	if (!d)
		return -errno;
	while ((e = readdir(d)) != NULL) {
		if (!parse_numbered(e->d_name, prefix, suffix, &num))
			continue;
		if (cnt == cap) {
			uint64_t *nv = realloc(v, (cap ? cap * 2 : 16) * sizeof(*v));

			if (!nv) {
				rc = -ENOMEM;
				goto out_close;
			}
			v = nv;
			cap = cap ? cap * 2 : 16;
		}
		v[cnt++] = num;
	}
	if (cnt)
		qsort(v, cnt, sizeof(*v), cmp_u64);
	*nums = v;
	*n = cnt;
	v = NULL;
out_close:
	free(v);
	closedir(d);
	return rc;
}

int fg_datadir_fsync(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

int fg_datadir_write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int fg_datadir_replace(const char *path, mode_t mode, const struct iovec *iov, unsigned n)
{
	char tmp[PATH_MAX], dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd, rc = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	for (unsigned i = 0; i < n && rc == 0; i++)
		rc = fg_datadir_write_all(fd, iov[i].iov_base, iov[i].iov_len);
	if (rc == 0 && fsync(fd) != 0)
		rc = -errno;
	close(fd);
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc == 0)
		rc = fg_datadir_fsync(dir);
	if (rc != 0)
		unlink(tmp);
	return rc;
}

int fg_foreign_write(const char *path, uint8_t (*hashes)[FG_MD5_LEN], size_t n,
		     fg_time_t imported, fg_time_t until, size_t *n_out)
{
	uint8_t hdr[FG_FOREIGN_HEADER];
	uint32_t *index;
	size_t nidx, m;
	int rc = fg_foreign_build(hashes, n, imported, until, hdr, &index, &nidx, &m);

	if (rc != 0)
		return rc;
	rc = fg_datadir_replace(path, 0644, (const struct iovec[]){
		{ hdr, sizeof(hdr) },
		{ hashes, m * FG_MD5_LEN },
		{ index, nidx * sizeof(*index) } }, 3);
	free(index);
	if (rc == 0 && n_out)
		*n_out = m;
	return rc;
}

int fg_datadir_put_info(const char *dir, const char *name, const char *text, size_t len)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	int fd, rc;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path) ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	rc = fg_datadir_write_all(fd, text, len);
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc != 0)
		unlink(tmp);
	return rc;
}

long fg_datadir_get_info(const char *dir, const char *name, char *buf, size_t cap)
{
	char path[PATH_MAX];
	ssize_t got;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	got = read(fd, buf, cap);
	if (got < 0)
		got = -errno;
	close(fd);
	return (long)got;
}

int fg_datadir_pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t r = pread(fd, p, len, (off_t)off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO;
		p += r;
		len -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

int fg_datadir_set_aside(const char *path, char *as, size_t aslen)
{
	char dst[PATH_MAX], dir[PATH_MAX];
	struct stat st;
	char *slash;
	int rc;

	for (unsigned i = 1;; i++) {
		int n = i == 1 ? snprintf(dst, sizeof(dst), "%s.bad", path)
			       : snprintf(dst, sizeof(dst), "%s.bad.%u", path, i);

		if (n < 0 || (size_t)n >= sizeof(dst))
			return -ENAMETOOLONG;
		if (lstat(dst, &st) < 0 && errno == ENOENT)
			break;
		if (i > 1000)
			return -EEXIST;
	}
	if (rename(path, dst) < 0)
		return -errno;
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	rc = fg_datadir_fsync(slash ? dir : ".");
	if (as)
		snprintf(as, aslen, "%s", dst);
	return rc;
}

const char *fg_datadir_version_why(const char *format, uint32_t found, uint32_t oldest,
				   uint32_t newest)
{
	static _Thread_local char msg[160];

	if (oldest == newest)
		snprintf(msg, sizeof(msg), "%s version %u; this build reads version %u", format,
			 found, newest);
	else
		snprintf(msg, sizeof(msg), "%s version %u; this build reads versions %u..%u", format,
			 found, oldest, newest);
	return msg;
}

int fg_datadir_make(const char *dir)
{
	char tmp[PATH_MAX];
	size_t len = strlen(dir);

	if (len == 0 || len >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, dir, len + 1);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}
