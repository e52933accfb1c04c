/* SPDX-License-Identifier: MIT */
/*
 * powerloss.c — an LD_PRELOAD shim that makes a power loss testable: the
 * page cache survives a SIGKILL, so a crash test that only kills processes
 * passes even with no fsync at all. Under this shim, everything that was
 * not made durable by the rules of POSIX can be thrown away afterwards,
 * exactly as a power cut would.
 *
 * The model (strict POSIX, as datadir.h states it):
 *  - a file's data is durable as of its last fsync() or fdatasync();
 *  - a directory entry (creation, rename, unlink) is durable as of the
 *    last fsync() of the directory;
 *  - sync() and syncfs() make everything durable.
 * The shim records, for one watched directory (FG_PL_DIR, flat: its
 * subdirectories are not watched), the durable state at each of those
 * calls, in a state directory (FG_PL_STATE, outside FG_PL_DIR):
 *
 *   STATE/manifest      "ino name" lines: the directory's durable entries
 *   STATE/ino.<ino>     a file's content as of its last fsync
 *
 * Recording at the sync points, rather than shadowing every write(),
 * pwrite() and rename(), gives the same answer and also covers data
 * written through a shared mmap (snapshots are): what fsync makes durable
 * is what the file holds when fsync is called.
 *
 * The "crash": after the processes are killed, run the revert
 *
 *   FG_PL_DIR=... FG_PL_STATE=... FG_PL_REVERT=1 LD_PRELOAD=powerloss.so true
 *
 * which rewrites FG_PL_DIR to its durable state — files whose entry was
 * never made durable disappear, a rename not followed by a directory
 * fsync is undone, each file holds what its last fsync saw (nothing, if
 * it never had one) — and clears STATE, so the next process under the
 * shim starts from that state (everything present at start is durable, as
 * after a reboot).
 *
 * Several processes may share one watched directory and one state (the
 * dataplane's queue and floodctld's journal live side by side): the
 * recording is serialised across them with flock on STATE/.lock, and each
 * process writes its temporary copies under names of its own.
 *
 * Limits: O_SYNC/O_DSYNC writes, msync() and sync_file_range() are not
 * modelled (floodctld uses none of them); a file's identity is its inode
 * number, so an inode number reused between two directory fsyncs could
 * lend its content to the wrong name (a window no test here opens).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static char watched[PATH_MAX];
static char state[PATH_MAX];
static struct stat watched_st;
static bool active;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int lock_fd = -1;	/* STATE/.lock: the other processes on this state */

static void lock_all(void)
{
	pthread_mutex_lock(&lock);
	while (lock_fd >= 0 && flock(lock_fd, LOCK_EX) < 0 && errno == EINTR)
		;
}

static void unlock_all(void)
{
	if (lock_fd >= 0)
		flock(lock_fd, LOCK_UN);
	pthread_mutex_unlock(&lock);
}

static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static void (*real_sync)(void);
static int (*real_syncfs)(int);

static void die(const char *what)
{
	fprintf(stderr, "powerloss: %s: %s\n", what, strerror(errno));
	abort();
}

/* Copy the whole of `src_fd` to `dst` (atomically, via a temp name). */
static void copy_fd(int src_fd, const char *dst)
{
	char tmp[PATH_MAX + 8], buf[1 << 16];
	off_t off = 0;
	ssize_t n;
	int out;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", dst, (int)getpid());
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0)
		die(tmp);
	while ((n = pread(src_fd, buf, sizeof(buf), off)) > 0) {
		if (write(out, buf, (size_t)n) != n)
			die(tmp);
		off += n;
	}
	if (n < 0)
		die("read");
	close(out);
	if (rename(tmp, dst) < 0)
		die(dst);
}

static void shadow_path(char *out, size_t len, unsigned long long ino)
{
	snprintf(out, len, "%s/ino.%llu", state, ino);
}

/* Call fn for every regular file directly in the watched directory. */
static void walk(void (*fn)(void *arg, const char *name, const char *path,
			    const struct stat *st), void *arg)
{
	DIR *d = opendir(watched);
	struct dirent *e;

	if (!d)
		die(watched);
	while ((e = readdir(d)) != NULL) {
		char p[PATH_MAX + 256];
		struct stat st;

		snprintf(p, sizeof(p), "%s/%s", watched, e->d_name);
		if (lstat(p, &st) == 0 && S_ISREG(st.st_mode))
			fn(arg, e->d_name, p, &st);
	}
	closedir(d);
}

static void list_one(void *arg, const char *name, const char *path, const struct stat *st)
{
	(void)path;
	fprintf(arg, "%llu %s\n", (unsigned long long)st->st_ino, name);
}

/* The directory's regular files and inode numbers become its durable entries. */
static void record_listing(void)
{
	char path[PATH_MAX + 16], tmp[PATH_MAX + 16];
	FILE *f;

	snprintf(path, sizeof(path), "%s/manifest", state);
	snprintf(tmp, sizeof(tmp), "%s/manifest.tmp.%d", state, (int)getpid());
	f = fopen(tmp, "we");
	if (!f)
		die(tmp);
	walk(list_one, f);
	fclose(f);
	if (rename(tmp, path) < 0)
		die(path);
}

/* The file's content, as of now, is durable. */
static void record_file(int fd, const struct stat *st)
{
	char shadow[PATH_MAX + 32];

	shadow_path(shadow, sizeof(shadow), (unsigned long long)st->st_ino);
	copy_fd(fd, shadow);
}

/* Is fd a regular file directly inside the watched directory? */
static bool in_watched(int fd, int *rfd)
{
	char link[64], path[PATH_MAX];
	ssize_t n;
	char *slash;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return false;
	path[n] = '\0';
	slash = strrchr(path, '/');
	if (!slash || strstr(path, " (deleted)"))
		return false;
	*slash = '\0';
	if (strcmp(path, watched) != 0)
		return false;
	/* the fd may be write-only: read through a fresh descriptor */
	*rfd = open(link, O_RDONLY | O_CLOEXEC);
	return *rfd >= 0;
}

static void on_sync(int fd)
{
	struct stat st;
	int rfd;

	if (!active || fstat(fd, &st) < 0)
		return;
	lock_all();
	if (S_ISDIR(st.st_mode) && st.st_dev == watched_st.st_dev && st.st_ino == watched_st.st_ino) {
		record_listing();
	} else if (S_ISREG(st.st_mode) && in_watched(fd, &rfd)) {
		record_file(rfd, &st);
		close(rfd);
	}
	unlock_all();
}

static void record_one(void *arg, const char *name, const char *path, const struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	(void)arg;
	(void)name;
	if (fd < 0)
		return;
	record_file(fd, st);
	close(fd);
}

/* Everything in the directory, now. */
static void record_all(void)
{
	walk(record_one, NULL);
	record_listing();
}

int fsync(int fd)
{
	int rc = real_fsync(fd);

	if (rc == 0)
		on_sync(fd);
	return rc;
}

int fdatasync(int fd)
{
	int rc = real_fdatasync(fd);

	if (rc == 0)
		on_sync(fd);
	return rc;
}

void sync(void)
{
	real_sync();
	if (active) {
		lock_all();
		record_all();
		unlock_all();
	}
}

int syncfs(int fd)
{
	int rc = real_syncfs(fd);

	if (rc == 0 && active) {
		lock_all();
		record_all();
		unlock_all();
	}
	return rc;
}

/* ---- the crash ---- */

struct entry {
	unsigned long long ino;
	char name[256];
};

static size_t read_manifest(struct entry **out)
{
	char path[PATH_MAX + 16], line[512];
	struct entry *v = NULL;
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/manifest", state);
	f = fopen(path, "re");
	if (!f)
		die(path);
	while (fgets(line, sizeof(line), f)) {
		struct entry e;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%llu %255s", &e.ino, e.name) != 2)
			continue;
		v = realloc(v, (n + 1) * sizeof(*v));
		if (!v)
			die("realloc");
		v[n++] = e;
	}
	fclose(f);
	*out = v;
	return n;
}

static bool listed(const struct entry *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0)
			return true;
	return false;
}

static void restore_entry(const struct entry *e)
{
	char dst[PATH_MAX + 256], shadow[PATH_MAX + 32];
	int in, out;

	snprintf(dst, sizeof(dst), "%s/%s", watched, e->name);
	shadow_path(shadow, sizeof(shadow), e->ino);
	unlink(dst);
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0)
		die(dst);
	in = open(shadow, O_RDONLY | O_CLOEXEC);
	if (in >= 0) {
		char buf[1 << 16];
		ssize_t r;

		while ((r = read(in, buf, sizeof(buf))) > 0)
			if (write(out, buf, (size_t)r) != r)
				die(dst);
		close(in);
	}
	close(out);
}

static void clear_state(void)
{
	DIR *d = opendir(state);
	struct dirent *e;

	while (d && (e = readdir(d)) != NULL) {
		char p[PATH_MAX + 256];

		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", state, e->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
}

struct unlisted {
	const struct entry *v;
	size_t n;
	unsigned dropped;
};

/* A name the last directory fsync did not see never became durable. */
static void drop_unlisted(void *arg, const char *name, const char *path, const struct stat *st)
{
	struct unlisted *u = arg;

	(void)st;
	if (!listed(u->v, u->n, name)) {
		unlink(path);
		u->dropped++;
	}
}

static void revert(void)
{
	struct entry *v;
	size_t n = read_manifest(&v);
	struct unlisted u = { v, n, 0 };

	walk(drop_unlisted, &u);
	for (size_t i = 0; i < n; i++)
		restore_entry(&v[i]);
	free(v);
	clear_state();
	fprintf(stderr, "powerloss: %s reverted to its durable state: %zu files kept, %u dropped\n",
		watched, n, u.dropped);
}

__attribute__((constructor)) static void powerloss_init(void)
{
	const char *dir = getenv("FG_PL_DIR"), *st = getenv("FG_PL_STATE");
	char manifest[PATH_MAX + 16];

	real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
	real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
	real_sync = (void (*)(void))dlsym(RTLD_NEXT, "sync");
	real_syncfs = (int (*)(int))dlsym(RTLD_NEXT, "syncfs");
	if (!dir || !st)
		return;
	if (!realpath(dir, watched) || stat(watched, &watched_st) < 0)
		die(dir);
	if (mkdir(st, 0700) < 0 && errno != EEXIST)
		die(st);
	if (!realpath(st, state))
		die(st);
	snprintf(manifest, sizeof(manifest), "%s/manifest", state);
	if (getenv("FG_PL_REVERT")) {
		if (access(manifest, F_OK) == 0)
			revert();
		return;
	}
	snprintf(manifest, sizeof(manifest), "%s/.lock", state);
	lock_fd = open(manifest, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock_fd < 0)
		die(manifest);
	snprintf(manifest, sizeof(manifest), "%s/manifest", state);
	lock_all();
	if (access(manifest, F_OK) != 0)
		record_all();	/* a fresh start: what is there is durable */
	unlock_all();
	active = true;
}
