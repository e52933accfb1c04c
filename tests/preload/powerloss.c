/* SPDX-License-Identifier: MIT */
/*
 * powerloss.c — an LD_PRELOAD shim that makes a power loss testable: the
 * page cache survives a SIGKILL, so a crash test that only kills processes
 * passes even with no fsync at all. Under this shim, everything that was
 * not made durable by the rules of POSIX is at the mercy of the "crash"
 * that follows, exactly as after a power cut.
 *
 * THE MODEL (strict POSIX, as datadir.h states it):
 *  1. a file's data is durable as of its last fsync() or fdatasync();
 *  2. a directory entry (creation, rename, unlink) is durable as of the
 *     last fsync() of its directory;
 *  3. sync() and syncfs() make everything durable.
 * Whatever is not durable at the crash may survive whole, in part or not
 * at all, as disks and file systems do:
 *  - a file's unsynced writes: lost (the file holds what its last fsync
 *    saw), kept whole, torn (each changed 512-byte sector is old or new,
 *    independently; the size is the old or the new one), or the file grew
 *    but its new tail reads as zeros (ext4's size-before-data window);
 *  - a directory's unsynced changes: each group of changes that hang
 *    together (a rename with the name it replaced, a file and its names)
 *    is undone or kept as a whole. A rename is never half done: file
 *    systems journal it as one operation.
 * Without a seed the crash is the worst case, deterministic: everything
 * not durable is lost (the only outcome the shim modelled before). With
 * FG_PL_SEED=<number> every choice above is drawn from a PRNG seeded with
 * it, in an order that depends only on names: the same seed on the same
 * files makes the same choices, so a failing case is replayed exactly
 * (FG_PL_SAVE below keeps the files for that).
 *
 * ENVIRONMENT
 *   FG_PL_DIR       the watched directories, ':'-separated, each with all
 *                   its subdirectories (data dir, journal, queue, ...)
 *   FG_PL_STATE     where the durable state is recorded (outside them)
 *   FG_PL_REVERT=1  the crash: rewrite the watched directories to one
 *                   outcome and clear the state (run it in a process of
 *                   its own once every watched process is dead:
 *                   FG_PL_REVERT=1 LD_PRELOAD=powerloss.so true)
 *   FG_PL_SEED      the outcome's seed (revert); unset: the worst case
 *   FG_PL_SAVE      (revert) first copy the crash image to this directory:
 *                   SAVE/root<i> (files hard-linked, so inode numbers stay)
 *                   and SAVE/state. Replay: FG_PL_DIR=SAVE/root0[:...]
 *                   FG_PL_STATE=SAVE/state FG_PL_SEED=<the same> revert
 *   FG_PL_SKIP_SYNC comma-separated rules; a matching fsync/fdatasync is a
 *                   no-op that makes nothing durable and returns 0, as if
 *                   that line of the program were gone:
 *                     GLOB        every sync of a regular file whose path
 *                                 matches (fnmatch, '*' crosses '/')
 *                     GLOB#first  only its first sync since it was created
 *                                 (the header write of a new segment)
 *                     GLOB#later  every sync but that first one
 *                     dir:GLOB    the first fsync of a directory after an
 *                                 entry whose path matches changed (the
 *                                 sync that follows a create, rename or
 *                                 unlink); the directory's next fsync, for
 *                                 whatever reason, makes it durable again
 *                     dir+:GLOB   the same, for a matching name that
 *                                 appeared (a create, a rename's target)
 *                     dir-:GLOB   ... that went away (an unlink)
 *                   The first skip of each rule is logged to stderr
 *                   ("powerloss: skipping ..."), so a test can tell that
 *                   its rule met the sync it aims at.
 *
 * STATE, recorded at the sync points (what fsync makes durable is what the
 * file holds when fsync is called — which also covers writes through a
 * shared mmap, as snapshots use):
 *   STATE/dir.<root>.<escaped relative path>  "ino f|d name" lines: the
 *                   directory's durable entries (keyed by path: no program
 *                   here renames a directory)
 *   STATE/ino.<ino> a file's content as of its last sync
 *   STATE/started   the state exists: everything present when the first
 *                   process under the shim started was recorded durable,
 *                   as after a reboot
 * Several processes may share the directories and the state (floodctld's
 * journal and the dataplane's queue live side by side): recording is
 * serialised across them with flock on STATE/.lock.
 *
 * Limits: O_SYNC/O_DSYNC writes, msync() and sync_file_range() are not
 * modelled (nothing under test uses them: 43_ctl_powerloss_knob greps
 * every directory of the Makefile's tiers, and include/, for them); only
 * regular files and directories are (sockets, links are left alone); a
 * file's identity is its inode number, so an inode number reused between
 * two syncs could lend content to the wrong name (a window no test here
 * opens).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_ROOTS 8
#define MAX_RULES 16
#define SECTOR 512u
#define SEEN_MAX 4096u

struct rule {
	char glob[PATH_MAX];
	enum { R_ALL, R_FIRST, R_LATER, R_DIR, R_DIR_NEW, R_DIR_GONE } kind;
	unsigned long skipped;
};

static char roots[MAX_ROOTS][PATH_MAX];
static unsigned n_roots;
static char state[PATH_MAX];
static bool active;
static struct rule rules[MAX_RULES];
static unsigned n_rules;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int lock_fd = -1;	/* STATE/.lock: the other processes on this state */
/* inodes this process has synced (or skipped a sync of): "#first" is over */
static unsigned long long seen[SEEN_MAX];
static unsigned n_seen;
/* directory entries whose "dir:" skip is spent: "<dir>/<name>:<ino>" */
static char **spent;
static unsigned n_spent;

static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static void (*real_sync)(void);
static int (*real_syncfs)(int);

static void die(const char *what)
{
	fprintf(stderr, "powerloss: %s: %s\n", what, strerror(errno));
	abort();
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("realloc");
	return p;
}

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

/* ---------------------------------------------------------------- files */

struct buf {
	uint8_t *p;
	size_t len;
};

/* The whole file at path (an absent file reads as empty). */
static struct buf slurp(const char *path)
{
	struct buf b = { NULL, 0 };
	size_t cap = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return b;
	for (;;) {
		if (b.len == cap) {
			cap = cap ? 2 * cap : 1 << 16;
			b.p = xrealloc(b.p, cap);
		}
		n = read(fd, b.p + b.len, cap - b.len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die(path);
		if (n == 0)
			break;
		b.len += (size_t)n;
	}
	close(fd);
	return b;
}

/* Write buf to path atomically (temp name, rename): never into an
 * existing inode, so hard-linked copies (FG_PL_SAVE) keep their bytes. */
static void spill(const char *path, const void *p, size_t len)
{
	char tmp[PATH_MAX + 32];
	const uint8_t *c = p;
	int out;

	snprintf(tmp, sizeof(tmp), "%s.pltmp.%d", path, (int)getpid());
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0)
		die(tmp);
	while (len) {
		ssize_t w = write(out, c, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			die(tmp);
		c += w;
		len -= (size_t)w;
	}
	close(out);
	if (rename(tmp, path) < 0)
		die(path);
}

static void copy_file(const char *src, const char *dst)
{
	struct buf b = slurp(src);

	spill(dst, b.p, b.len);
	free(b.p);
}

static void shadow_path(char *out, size_t len, unsigned long long ino)
{
	snprintf(out, len, "%s/ino.%llu", state, ino);
}

static bool has_shadow(unsigned long long ino)
{
	char p[PATH_MAX + 32];

	shadow_path(p, sizeof(p), ino);
	return access(p, F_OK) == 0;
}

/* The file's content, as of now, is durable. */
static void record_file(const char *path, unsigned long long ino)
{
	char shadow[PATH_MAX + 32];

	shadow_path(shadow, sizeof(shadow), ino);
	copy_file(path, shadow);
}

/* ---------------------------------------------------------------- identity */

/* A file's identity: its inode number and its birth time, so that an
 * inode number the file system hands out again (a segment deleted, the
 * next one created) is a new file, not the old one's continuation. */
static bool ident(int dirfd, const char *path, int flags, unsigned long long *id, char *type)
{
	struct statx sx;
	uint64_t z;

	if (statx(dirfd, path, flags | AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_INO | STATX_BTIME,
		  &sx) != 0)
		return false;
	*type = S_ISREG(sx.stx_mode) ? 'f' : S_ISDIR(sx.stx_mode) ? 'd' : '?';
	z = sx.stx_ino;
	if (sx.stx_mask & STATX_BTIME) {
		z ^= ((uint64_t)sx.stx_btime.tv_sec * 1000000000ull + sx.stx_btime.tv_nsec) *
		     0x9e3779b97f4a7c15ull;
		z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ull;
		z ^= z >> 29;
	}
	*id = z ? z : 1;
	return true;
}

/* ---------------------------------------------------------------- paths */

/* Root index and path relative to it ("" for the root), or -1. */
static int locate(const char *path, const char **rel)
{
	for (unsigned i = 0; i < n_roots; i++) {
		size_t l = strlen(roots[i]);

		if (strncmp(path, roots[i], l) == 0 && (path[l] == '\0' || path[l] == '/')) {
			*rel = path[l] ? path + l + 1 : "";
			return (int)i;
		}
	}
	return -1;
}

static bool fd_path(int fd, char *out, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, out, len - 1);
	if (n <= 0)
		return false;
	out[n] = '\0';
	return strstr(out, " (deleted)") == NULL;
}

static void manifest_path(char *out, size_t len, int root, const char *rel)
{
	size_t o = (size_t)snprintf(out, len, "%s/dir.%d.", state, root);

	for (; *rel && o + 4 < len; rel++) {
		if (*rel == '/' || *rel == '%')
			o += (size_t)snprintf(out + o, len - o, "%%%02x", (unsigned)*rel);
		else
			out[o++] = *rel;
	}
	out[o] = '\0';
}

/* ---------------------------------------------------------------- listings */

struct ent {
	char name[256];
	unsigned long long ino;
	char type;		/* 'f' regular file, 'd' directory */
};

struct listing {
	struct ent *v;
	size_t n;
	bool found;		/* a manifest existed / the directory exists */
};

static int ent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ent *)a)->name, ((const struct ent *)b)->name);
}

static void listing_add(struct listing *l, const char *name, unsigned long long ino, char type)
{
	struct ent *e;

	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	e = &l->v[l->n++];
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->ino = ino;
	e->type = type;
}

/* The regular files and directories in dir now, sorted by name. Our own
 * temp files (".pltmp.") are never part of it. */
static struct listing list_dir(const char *dir)
{
	struct listing l = { NULL, 0, false };
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return l;
	l.found = true;
	while ((e = readdir(d)) != NULL) {
		unsigned long long id;
		char type;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    strstr(e->d_name, ".pltmp."))
			continue;
		/* a directory is known by its path (see STATE above) */
		if (ident(dirfd(d), e->d_name, 0, &id, &type) && type != '?')
			listing_add(&l, e->d_name, type == 'd' ? 0 : id, type);
	}
	closedir(d);
	if (l.n)
		qsort(l.v, l.n, sizeof(*l.v), ent_cmp);
	return l;
}

static struct listing read_manifest(int root, const char *rel)
{
	struct listing l = { NULL, 0, false };
	char path[PATH_MAX + 600], line[600];
	FILE *f;

	manifest_path(path, sizeof(path), root, rel);
	f = fopen(path, "re");
	if (!f)
		return l;
	l.found = true;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long ino;
		char type;
		int off = 0;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%llu %c %n", &ino, &type, &off) < 2 || !off)
			continue;
		listing_add(&l, line + off, ino, type);
	}
	fclose(f);
	if (l.n)
		qsort(l.v, l.n, sizeof(*l.v), ent_cmp);
	return l;
}

static void write_manifest(int root, const char *rel, const struct listing *l)
{
	char path[PATH_MAX + 600], tmp[PATH_MAX + 640];
	FILE *f;

	manifest_path(path, sizeof(path), root, rel);
	snprintf(tmp, sizeof(tmp), "%s.pltmp.%d", path, (int)getpid());
	f = fopen(tmp, "we");
	if (!f)
		die(tmp);
	for (size_t i = 0; i < l->n; i++)
		fprintf(f, "%llu %c %s\n", l->v[i].ino, l->v[i].type, l->v[i].name);
	fclose(f);
	if (rename(tmp, path) < 0)
		die(path);
}

static const struct ent *find(const struct listing *l, const char *name)
{
	struct ent key;

	snprintf(key.name, sizeof(key.name), "%s", name);
	return l->n ? bsearch(&key, l->v, l->n, sizeof(*l->v), ent_cmp) : NULL;
}

static void join(char *out, size_t len, const char *a, const char *b)
{
	snprintf(out, len, "%s%s%s", a, *a && *b ? "/" : "", b);
}

/* Everything under root/rel, now, is durable. */
static void record_tree(int root, const char *rel)
{
	char abs[PATH_MAX];
	struct listing l;

	join(abs, sizeof(abs), roots[root], rel);
	l = list_dir(abs);
	write_manifest(root, rel, &l);
	for (size_t i = 0; i < l.n; i++) {
		char p[PATH_MAX + 256], r[PATH_MAX + 256];

		join(p, sizeof(p), abs, l.v[i].name);
		join(r, sizeof(r), rel, l.v[i].name);
		if (l.v[i].type == 'f')
			record_file(p, l.v[i].ino);
		else
			record_tree(root, r);
	}
	free(l.v);
}

static void record_all(void)
{
	for (unsigned i = 0; i < n_roots; i++)
		record_tree((int)i, "");
}

/* ---------------------------------------------------------------- skipping */

static bool seen_before(unsigned long long ino)
{
	for (unsigned i = 0; i < n_seen; i++)
		if (seen[i] == ino)
			return true;
	if (n_seen < SEEN_MAX)
		seen[n_seen++] = ino;
	return false;
}

static void note_skip(struct rule *r, const char *path)
{
	static const char *const pre[] = { "", "", "", "dir:", "dir+:", "dir-:" };
	static const char *const post[] = { "", "#first", "#later", "", "", "" };

	if (r->skipped++ == 0)
		fprintf(stderr, "powerloss: skipping the sync of %s (FG_PL_SKIP_SYNC rule %s%s%s)\n",
			path, pre[r->kind], r->glob, post[r->kind]);
}

/* A regular file's sync: skipped by a rule? */
static bool skip_file(const char *path, unsigned long long ino)
{
	bool first = !has_shadow(ino) && !seen_before(ino);

	for (unsigned i = 0; i < n_rules; i++) {
		struct rule *r = &rules[i];

		if (r->kind >= R_DIR || fnmatch(r->glob, path, 0) != 0)
			continue;
		if (r->kind == R_ALL || (r->kind == R_FIRST && first) ||
		    (r->kind == R_LATER && !first)) {
			note_skip(r, path);
			return true;
		}
	}
	return false;
}

static bool spent_has(const char *key)
{
	for (unsigned i = 0; i < n_spent; i++)
		if (!strcmp(spent[i], key))
			return true;
	return false;
}

/* A directory's fsync: skipped when it is the first one after a change of
 * an entry a "dir:" rule names (a change: the name is new, gone, or now
 * names another inode than the durable listing says). */
static bool skip_dir(int root, const char *rel, const char *abs)
{
	struct listing cur, dur;
	bool skip = false;

	if (!n_rules)
		return false;
	cur = list_dir(abs);
	dur = read_manifest(root, rel);
	for (unsigned side = 0; side < 2; side++) {
		const struct listing *a = side ? &dur : &cur, *b = side ? &cur : &dur;

		for (size_t i = 0; i < a->n; i++) {
			const struct ent *o = find(b, a->v[i].name);
			char path[PATH_MAX + 256], key[PATH_MAX + 300];

			if (o && o->ino == a->v[i].ino)
				continue;
			join(path, sizeof(path), abs, a->v[i].name);
			snprintf(key, sizeof(key), "%s:%llu", path, a->v[i].ino);
			for (unsigned k = 0; k < n_rules; k++) {
				/* side 0: a name now that the durable listing lacks */
				unsigned want = side ? R_DIR_GONE : R_DIR_NEW;

				if ((rules[k].kind != R_DIR && rules[k].kind != want) ||
				    fnmatch(rules[k].glob, path, 0) != 0 || spent_has(key))
					continue;
				spent = xrealloc(spent, (n_spent + 1) * sizeof(*spent));
				spent[n_spent] = strdup(key);
				if (!spent[n_spent])
					die("strdup");
				n_spent++;
				note_skip(&rules[k], abs);
				skip = true;
			}
		}
	}
	free(cur.v);
	free(dur.v);
	return skip;
}

static void parse_rules(const char *env)
{
	while (env && *env && n_rules < MAX_RULES) {
		size_t wl = strcspn(env, ",");
		struct rule *r = &rules[n_rules];
		char item[PATH_MAX];
		char *hash;

		snprintf(item, sizeof(item), "%.*s", (int)wl, env);
		env += wl + (env[wl] == ',');
		if (!*item)
			continue;
		r->kind = R_ALL;
		if (!strncmp(item, "dir:", 4)) {
			r->kind = R_DIR;
			memmove(item, item + 4, strlen(item + 4) + 1);
		} else if (!strncmp(item, "dir+:", 5) || !strncmp(item, "dir-:", 5)) {
			r->kind = item[3] == '+' ? R_DIR_NEW : R_DIR_GONE;
			memmove(item, item + 5, strlen(item + 5) + 1);
		} else if ((hash = strrchr(item, '#')) != NULL) {
			if (!strcmp(hash, "#first"))
				r->kind = R_FIRST;
			else if (!strcmp(hash, "#later"))
				r->kind = R_LATER;
			else {
				fprintf(stderr, "powerloss: FG_PL_SKIP_SYNC: unknown suffix %s\n", hash);
				abort();
			}
			*hash = '\0';
		}
		snprintf(r->glob, sizeof(r->glob), "%s", item);
		n_rules++;
	}
}

/* ---------------------------------------------------------------- sync points */

/*
 * fsync or fdatasync of fd: a rule may skip it (a no-op, nothing durable);
 * otherwise the real sync runs, and once it succeeded what it made durable
 * is recorded: the file's content, or the directory's entries.
 */
static int synced(int fd, int (*real)(int))
{
	char path[PATH_MAX];
	unsigned long long id;
	const char *rel;
	char type;
	bool skip;
	int root, rc;

	if (!active || !fd_path(fd, path, sizeof(path)) || (root = locate(path, &rel)) < 0 ||
	    !ident(fd, "", AT_EMPTY_PATH, &id, &type) || type == '?')
		return real(fd);
	lock_all();
	skip = type == 'd' ? skip_dir(root, rel, path) : skip_file(path, id);
	unlock_all();
	if (skip)
		return 0;
	rc = real(fd);
	if (rc != 0)
		return rc;
	lock_all();
	if (type == 'd') {
		struct listing l = list_dir(path);

		write_manifest(root, rel, &l);
		free(l.v);
	} else {
		record_file(path, id);
	}
	unlock_all();
	return 0;
}

int fsync(int fd)
{
	return synced(fd, real_fsync);
}

int fdatasync(int fd)
{
	return synced(fd, real_fdatasync);
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

/* ---------------------------------------------------------------- the crash */

static uint64_t rng;
static bool seeded;

static uint64_t draw(void)
{
	/* splitmix64: every seed, even 0, gives a good stream */
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static bool coin(void)
{
	return seeded && (draw() & 1);
}

struct counts {
	unsigned files, kept, lost, whole, torn, zeros, undone, done;
};

/* Where each inode's current content is (one current name), over every
 * watched directory: a renamed file's bytes follow it. */
struct where {
	unsigned long long ino;
	char path[PATH_MAX + 256];
};
static struct where *cur_at;
static size_t n_cur_at;

static void index_tree(const char *abs)
{
	struct listing l = list_dir(abs);

	for (size_t i = 0; i < l.n; i++) {
		char p[PATH_MAX + 256];

		join(p, sizeof(p), abs, l.v[i].name);
		if (l.v[i].type == 'd') {
			index_tree(p);
			continue;
		}
		cur_at = xrealloc(cur_at, (n_cur_at + 1) * sizeof(*cur_at));
		cur_at[n_cur_at].ino = l.v[i].ino;
		snprintf(cur_at[n_cur_at].path, sizeof(cur_at[n_cur_at].path), "%s", p);
		n_cur_at++;
	}
	free(l.v);
}

static const char *current_path(unsigned long long ino)
{
	for (size_t i = 0; i < n_cur_at; i++)
		if (cur_at[i].ino == ino)
			return cur_at[i].path;
	return NULL;
}

static uint8_t byte_at(const struct buf *b, size_t i)
{
	return i < b->len ? b->p[i] : 0;
}

/* The content this inode has after the crash, staged at STATE/stage.<ino>
 * (once per inode). `shown` names it in the log. */
static void stage_file(unsigned long long ino, const char *shown, struct counts *c)
{
	char stage[PATH_MAX + 32], shadow[PATH_MAX + 32];
	const char *cp = current_path(ino);
	struct buf d, n, out = { NULL, 0 };
	const char *what = "kept";

	snprintf(stage, sizeof(stage), "%s/stage.%llu", state, ino);
	if (access(stage, F_OK) == 0)
		return;
	shadow_path(shadow, sizeof(shadow), ino);
	d = slurp(shadow);
	n = cp ? slurp(cp) : (struct buf){ NULL, 0 };
	if (!cp) {
		n.p = d.len ? malloc(d.len) : NULL;
		if (d.len && !n.p)
			die("malloc");
		if (d.len)
			memcpy(n.p, d.p, d.len);
		n.len = d.len;
	}
	c->files++;
	if (d.len == n.len && (d.len == 0 || !memcmp(d.p, n.p, d.len))) {
		out = d;
		c->kept++;
	} else {
		unsigned k = seeded ? (unsigned)(draw() % 4) : 0;

		if (k == 1 || (k == 3 && n.len <= d.len)) {
			out = n;
			what = "unsynced writes kept whole";
			c->whole++;
		} else if (k == 2) {
			size_t size = coin() ? n.len : d.len;
			unsigned changed = 0, new = 0;

			out.p = calloc(1, size ? size : 1);
			if (!out.p)
				die("calloc");
			out.len = size;
			for (size_t s = 0; s < size; s += SECTOR) {
				size_t e = s + SECTOR < size ? s + SECTOR : size;
				bool differ = false, take;

				for (size_t i = s; i < e && !differ; i++)
					differ = byte_at(&d, i) != byte_at(&n, i);
				take = differ && coin();
				changed += differ;
				new += take;
				for (size_t i = s; i < e; i++)
					out.p[i] = take ? byte_at(&n, i) : byte_at(&d, i);
			}
			fprintf(stderr, "powerloss: %s: torn: %u of %u changed sectors new, %zu octets "
				"(synced %zu, written %zu)\n", shown, new, changed, size, d.len, n.len);
			what = NULL;
			c->torn++;
		} else if (k == 3) {
			out.p = calloc(1, n.len);
			if (!out.p)
				die("calloc");
			out.len = n.len;
			if (d.len)
				memcpy(out.p, d.p, d.len);
			what = "grew, its unsynced tail reads as zeros";
			c->zeros++;
		} else {
			out = d;
			what = "unsynced writes lost";
			c->lost++;
		}
		if (what)
			fprintf(stderr, "powerloss: %s: %s (synced %zu octets, written %zu)\n", shown,
				what, d.len, n.len);
	}
	spill(stage, out.p, out.len);
	if (out.p != d.p && out.p != n.p)
		free(out.p);
	free(d.p);
	free(n.p);
}

/* The final entries of one directory. Changed entries are grouped: names
 * that share an inode on either side, or an inode that shares a name,
 * belong together (a rename and the file it replaced); each group is all
 * undone (the durable listing) or all kept (the current one). */
static struct listing decide_dir(const struct listing *dur, const struct listing *cur,
				 const char *abs, struct counts *c)
{
	struct listing out = { NULL, 0, true }, names = { NULL, 0, false };
	size_t *grp;

	/* every changed name once, sorted (both lists are) */
	for (unsigned side = 0; side < 2; side++) {
		const struct listing *a = side ? cur : dur, *b = side ? dur : cur;

		for (size_t i = 0; i < a->n; i++) {
			const struct ent *o = find(b, a->v[i].name);

			if (o && o->ino == a->v[i].ino && o->type == a->v[i].type) {
				if (!side)
					listing_add(&out, a->v[i].name, a->v[i].ino, a->v[i].type);
				continue;
			}
			if (!find(&names, a->v[i].name)) {
				listing_add(&names, a->v[i].name, 0, 0);
				qsort(names.v, names.n, sizeof(*names.v), ent_cmp);
			}
		}
	}
	grp = calloc(names.n ? names.n : 1, sizeof(*grp));
	if (!grp)
		die("calloc");
	for (size_t i = 0; i < names.n; i++)
		grp[i] = i;
	/* union by shared inode: a few names at most, quadratic is fine */
	for (size_t i = 0; i < names.n; i++) {
		for (size_t j = i + 1; j < names.n; j++) {
			unsigned long long ii[2], jj[2];
			const struct ent *e;
			bool link = false;

			e = find(dur, names.v[i].name);
			ii[0] = e ? e->ino : 0;
			e = find(cur, names.v[i].name);
			ii[1] = e ? e->ino : 0;
			e = find(dur, names.v[j].name);
			jj[0] = e ? e->ino : 0;
			e = find(cur, names.v[j].name);
			jj[1] = e ? e->ino : 0;
			for (int a = 0; a < 2; a++)
				for (int b = 0; b < 2; b++)
					link |= ii[a] && ii[a] == jj[b];
			if (link) {
				size_t gi = grp[i], gj = grp[j];

				for (size_t k = 0; k < names.n; k++)
					if (grp[k] == gj)
						grp[k] = gi;
			}
		}
	}
	/* groups in order of their first name: one draw each */
	for (size_t i = 0; i < names.n; i++) {
		bool keep;

		if (grp[i] != i)
			continue;
		keep = coin();
		keep ? c->done++ : c->undone++;
		for (size_t k = 0; k < names.n; k++) {
			const struct ent *e;

			if (grp[k] != i)
				continue;
			e = find(keep ? cur : dur, names.v[k].name);
			if (seeded || !keep)
				fprintf(stderr, "powerloss: %s/%s: unsynced entry change %s (%s)\n", abs,
					names.v[k].name, keep ? "kept" : "undone",
					e ? "present" : "absent");
			if (e)
				listing_add(&out, e->name, e->ino, e->type);
		}
	}
	free(grp);
	free(names.v);
	if (out.n)
		qsort(out.v, out.n, sizeof(*out.v), ent_cmp);
	return out;
}

/* The final tree under root/rel as "plan" lines: "d rel" or "f ino rel". */
static void plan_dir(int root, const char *rel, FILE *plan, struct counts *c)
{
	char abs[PATH_MAX];
	struct listing dur, cur, fin;

	join(abs, sizeof(abs), roots[root], rel);
	dur = read_manifest(root, rel);
	cur = list_dir(abs);
	fin = decide_dir(&dur, &cur, abs, c);
	for (size_t i = 0; i < fin.n; i++) {
		char r[PATH_MAX + 256], shown[PATH_MAX + 256];

		join(r, sizeof(r), rel, fin.v[i].name);
		join(shown, sizeof(shown), abs, fin.v[i].name);
		if (fin.v[i].type == 'd') {
			fprintf(plan, "d %s\n", r);
			plan_dir(root, r, plan, c);
		} else {
			stage_file(fin.v[i].ino, shown, c);
			fprintf(plan, "f %llu %s\n", fin.v[i].ino, r);
		}
	}
	free(dur.v);
	free(cur.v);
	free(fin.v);
}

/* Remove the regular files and directories under abs (not abs itself). */
static void wipe(const char *abs)
{
	struct listing l = list_dir(abs);

	for (size_t i = 0; i < l.n; i++) {
		char p[PATH_MAX + 256];

		join(p, sizeof(p), abs, l.v[i].name);
		if (l.v[i].type == 'd') {
			wipe(p);
			rmdir(p);
		} else {
			unlink(p);
		}
	}
	free(l.v);
}

static void build(int root, FILE *plan)
{
	char line[PATH_MAX + 64];

	rewind(plan);
	while (fgets(line, sizeof(line), plan)) {
		char p[PATH_MAX * 2], stage[PATH_MAX + 32];
		unsigned long long ino;
		int off = 0;

		line[strcspn(line, "\n")] = '\0';
		if (line[0] == 'd') {
			join(p, sizeof(p), roots[root], line + 2);
			if (mkdir(p, 0755) < 0 && errno != EEXIST)
				die(p);
		} else if (sscanf(line, "f %llu %n", &ino, &off) == 1 && off) {
			join(p, sizeof(p), roots[root], line + off);
			snprintf(stage, sizeof(stage), "%s/stage.%llu", state, ino);
			copy_file(stage, p);
		}
	}
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

/* SAVE/root<i>: directories made, files hard-linked (same inodes). */
static void save_tree(const char *src, const char *dst)
{
	struct listing l = list_dir(src);

	if (mkdir(dst, 0755) < 0 && errno != EEXIST)
		die(dst);
	for (size_t i = 0; i < l.n; i++) {
		char s[PATH_MAX + 256], t[PATH_MAX + 256];

		join(s, sizeof(s), src, l.v[i].name);
		join(t, sizeof(t), dst, l.v[i].name);
		if (l.v[i].type == 'd')
			save_tree(s, t);
		else if (link(s, t) < 0)
			die(t);
	}
	free(l.v);
}

static void save(const char *dir)
{
	char p[PATH_MAX + 32];
	DIR *d;
	struct dirent *e;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		die(dir);
	for (unsigned i = 0; i < n_roots; i++) {
		snprintf(p, sizeof(p), "%s/root%u", dir, i);
		save_tree(roots[i], p);
	}
	snprintf(p, sizeof(p), "%s/state", dir);
	if (mkdir(p, 0700) < 0 && errno != EEXIST)
		die(p);
	d = opendir(state);
	while (d && (e = readdir(d)) != NULL) {
		char s[PATH_MAX + 256], t[PATH_MAX * 2];

		if (e->d_name[0] == '.')
			continue;
		snprintf(s, sizeof(s), "%s/%s", state, e->d_name);
		snprintf(t, sizeof(t), "%s/%s", p, e->d_name);
		copy_file(s, t);
	}
	if (d)
		closedir(d);
	fprintf(stderr, "powerloss: crash image saved in %s\n", dir);
}

static void revert(const char *seed_env)
{
	struct counts c = { 0 };
	const char *save_dir = getenv("FG_PL_SAVE");

	if (save_dir && *save_dir)
		save(save_dir);
	seeded = seed_env && *seed_env;
	rng = seeded ? strtoull(seed_env, NULL, 0) : 0;
	for (unsigned i = 0; i < n_roots; i++)
		index_tree(roots[i]);
	for (unsigned i = 0; i < n_roots; i++) {
		FILE *plan = tmpfile();

		if (!plan)
			die("tmpfile");
		plan_dir((int)i, "", plan, &c);
		wipe(roots[i]);
		build((int)i, plan);
		fclose(plan);
	}
	free(cur_at);
	clear_state();
	for (unsigned i = 0; i < n_roots; i++)
		fprintf(stderr, "powerloss: %s reverted to its durable state (%s%s): %u files, "
			"%u unchanged, %u lost their unsynced writes, %u kept them whole, %u torn, "
			"%u with a zero tail; %u entry changes undone, %u kept\n",
			roots[i], seeded ? "seed " : "worst case", seeded ? seed_env : "", c.files,
			c.kept, c.lost, c.whole, c.torn, c.zeros, c.undone, c.done);
}

__attribute__((constructor)) static void powerloss_init(void)
{
	const char *dirs = getenv("FG_PL_DIR"), *st = getenv("FG_PL_STATE");
	char path[PATH_MAX + 16];

	real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
	real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
	real_sync = (void (*)(void))dlsym(RTLD_NEXT, "sync");
	real_syncfs = (int (*)(int))dlsym(RTLD_NEXT, "syncfs");
	if (!dirs || !st)
		return;
	while (*dirs && n_roots < MAX_ROOTS) {
		size_t wl = strcspn(dirs, ":");
		char one[PATH_MAX];

		snprintf(one, sizeof(one), "%.*s", (int)wl, dirs);
		dirs += wl + (dirs[wl] == ':');
		if (!*one)
			continue;
		if (mkdir(one, 0755) < 0 && errno != EEXIST)
			die(one);
		if (!realpath(one, roots[n_roots]))
			die(one);
		n_roots++;
	}
	if (mkdir(st, 0700) < 0 && errno != EEXIST)
		die(st);
	if (!realpath(st, state))
		die(st);
	snprintf(path, sizeof(path), "%s/started", state);
	if (getenv("FG_PL_REVERT")) {
		if (access(path, F_OK) == 0)
			revert(getenv("FG_PL_SEED"));
		return;
	}
	parse_rules(getenv("FG_PL_SKIP_SYNC"));
	snprintf(path, sizeof(path), "%s/.lock", state);
	lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock_fd < 0)
		die(path);
	snprintf(path, sizeof(path), "%s/started", state);
	lock_all();
	if (access(path, F_OK) != 0) {
		record_all();	/* a fresh start: what is there is durable */
		spill(path, "", 0);
	}
	unlock_all();
	active = true;
}
