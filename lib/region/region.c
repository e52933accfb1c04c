/* SPDX-License-Identifier: MIT */
/*
 * region.c — creating, adopting and attaching the shared region; where it
 * lives (hugetlbfs or tmpfs); the header's validation; peer names.
 *
 * The layout is in region_int.h. A region is built in state BUILDING and
 * published READY only once its history slice holds a table, so a writer
 * that attaches while floodctld restores never sees a half-filled table;
 * a region left BUILDING (floodctld died while restoring) is rebuilt from
 * disk at the next start, never adopted.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/mempolicy.h>

#include "floodgate/datadir.h"
#include "floodgate/log.h"
#include "region_int.h"

#define COMP "region"
#define HUGETLBFS_MAGIC 0x958458f6
#define SEED_CHECK_TEXT "floodgate history seed check"

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* Hash of everything a slot's counters mean: the names in table order
 * (the counters, the reasons, the port's figures) and the block sizes. Two builds agree on it exactly when they read each
 * other's counters the same way. */
uint64_t fg_rschema(void)
{
	uint64_t h = 0xcbf29ce484222325ull;
	uint64_t sizes[] = { FG_REGION_LAYOUT, FG_CTR__COUNT, FG_REASON__COUNT,
			     FG_HIST_BUCKETS, sizeof(struct fg_stats),
			     sizeof(struct fg_region_wstats), FG_REGION_PEERS,
			     FG_REGION_JREC_SIZE, FG_REGION_VREC_SIZE,
			     sizeof(struct fg_nic_block), FG_NIC_MAX_PORTS, FG_NIC_MAX_QUEUES,
			     FG_NIC__COUNT, FG_NICQ__COUNT };

	h = fnv(h, sizes, sizeof(sizes));
	for (unsigned c = 0; c < FG_CTR__COUNT; c++)
		h = fnv(h, fg_counter_name(c), strlen(fg_counter_name(c)) + 1);
	for (unsigned r = 0; r < FG_REASON__COUNT; r++)
		h = fnv(h, fg_reason_name(r), strlen(fg_reason_name(r)) + 1);
	for (unsigned c = 0; c < FG_NIC__COUNT; c++)
		h = fnv(h, fg_nic_name(c), strlen(fg_nic_name(c)) + 1);
	for (unsigned c = 0; c < FG_NICQ__COUNT; c++)
		h = fnv(h, fg_nicq_name(c), strlen(fg_nicq_name(c)) + 1);
	return h;
}

uint64_t fg_rslot_jring_off(void)
{
	return align_up(FG_RNIC_OFF + sizeof(struct fg_nic_block), FG_RPAGE);
}

uint64_t fg_rslot_vring_off(uint32_t jring)
{
	return align_up(fg_rslot_jring_off() + (uint64_t)jring * FG_REGION_JREC_SIZE, FG_RPAGE);
}

uint64_t fg_rslot_size(uint32_t jring, uint32_t vring)
{
	return align_up(fg_rslot_vring_off(jring) + (uint64_t)vring * FG_REGION_VREC_SIZE,
			FG_RPAGE);
}

static bool pow2_in(uint32_t v, uint32_t lo, uint32_t hi)
{
	return v >= lo && v <= hi && (v & (v - 1)) == 0;
}

/* The offsets of every part for these parameters; false if out of range. */
static bool layout(const struct fg_region_params *p, struct fg_rhdr *h)
{
	uint64_t off = FG_RHEADER;

	if (!p->history_size || p->writers < 1 || p->writers > FG_REGION_MAX_WRITERS ||
	    !pow2_in(p->journal_ring, 64, 1u << 24) || !pow2_in(p->vlog_ring, 16, 1u << 20))
		return false;
	h->peers_off = off;
	off = align_up(off + (uint64_t)FG_RPEER_NAME * FG_REGION_PEERS, FG_RPAGE);
	h->retired_off = off;
	off = align_up(off + sizeof(struct fg_region_wstats), FG_RPAGE);
	h->ctld_off = off;
	off = align_up(off + sizeof(struct fg_stats), FG_RPAGE);
	h->history_off = off;
	h->history_size = p->history_size;
	off = align_up(off + p->history_size, FG_RPAGE);
	h->slots_off = off;
	h->n_slots = p->writers;
	h->jring = p->journal_ring;
	h->vring = p->vlog_ring;
	h->slot_size = fg_rslot_size(p->journal_ring, p->vlog_ring);
	h->region_size = off + h->slot_size * p->writers;
	return true;
}

size_t fg_region_size(const struct fg_region_params *p)
{
	struct fg_rhdr h;

	memset(&h, 0, sizeof(h));
	return layout(p, &h) ? (size_t)h.region_size : 0;
}

/* ---- where the region lives ---- */

/*
 * Every hugetlbfs mount is a candidate: a box may mount one per page size
 * (2M on /dev/hugepages, 1G elsewhere), and a processor may offer only
 * 2M. A mount's room is the smaller of two bounds: the free pages of its
 * own size in the kernel's pool (/sys/kernel/mm/hugepages/hugepages-<kB>kB,
 * less those promised to mappings not yet touched) and, where the mount
 * has a size= limit, what is left of that limit (statfs; a mount without
 * one reports no blocks). /proc/meminfo's HugePages_Free is the default
 * size's pool alone and is read only where sysfs is missing.
 */
#define HUGE_MOUNTS_MAX 8

struct huge_mount {
	char dir[PATH_MAX];
	uint64_t page;	/* bytes */
	uint64_t room;	/* bytes a new file may take */
};

static unsigned long long sysfs_hugepages(uint64_t page, const char *field)
{
	char path[128];
	unsigned long long v;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-%llukB/%s",
		 (unsigned long long)(page >> 10), field);
	f = fopen(path, "re");
	if (!f)
		return ULLONG_MAX;
	if (fscanf(f, "%llu", &v) != 1)
		v = ULLONG_MAX;
	fclose(f);
	return v;
}

/* Free pages of `page`'s size in the kernel's pool, in bytes (0 if unknown). */
static uint64_t pool_free(uint64_t page)
{
	unsigned long long free_pages = sysfs_hugepages(page, "free_hugepages");
	unsigned long long resv = sysfs_hugepages(page, "resv_hugepages");
	unsigned long long kb = 0, v;
	char line[256];
	FILE *f;

	if (free_pages != ULLONG_MAX) {
		if (resv != ULLONG_MAX)
			free_pages = free_pages > resv ? free_pages - resv : 0;
		return free_pages * page;
	}
	f = fopen("/proc/meminfo", "re");
	if (!f)
		return 0;
	free_pages = 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "HugePages_Free: %llu", &v) == 1)
			free_pages = v;
		else if (sscanf(line, "Hugepagesize: %llu kB", &v) == 1)
			kb = v;
	}
	fclose(f);
	return kb * 1024 == page ? free_pages * page : 0;
}

/* The hugetlbfs mounts, in /proc/mounts order; how many (at most `max`). */
static unsigned huge_mounts(struct huge_mount *m, unsigned max)
{
	char line[1024], dev[256], mnt[512], type[64];
	FILE *f = fopen("/proc/mounts", "re");
	unsigned n = 0;
	struct statfs sf;

	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%255s %511s %63s", dev, mnt, type) != 3 ||
		    strcmp(type, "hugetlbfs") != 0)
			continue;
		if (statfs(mnt, &sf) != 0 || (uint64_t)sf.f_type != HUGETLBFS_MAGIC ||
		    (size_t)snprintf(m[n].dir, sizeof(m[n].dir), "%s", mnt) >= sizeof(m[n].dir))
			continue;
		m[n].page = (uint64_t)sf.f_bsize;
		m[n].room = pool_free(m[n].page);
		if (sf.f_blocks != 0 && sf.f_blocks != (__typeof__(sf.f_blocks))-1 &&
		    (uint64_t)sf.f_bavail * m[n].page < m[n].room)
			m[n].room = (uint64_t)sf.f_bavail * m[n].page;
		n++;
	}
	fclose(f);
	return n;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* shm_path's place on mount `m`; false if it does not fit in `out` or
 * shm_path already is on that mount (then it is its own place). */
static bool huge_place(const struct huge_mount *m, const char *shm_path, char *out, size_t len)
{
	size_t dl = strlen(m->dir);

	if (strncmp(shm_path, m->dir, dl) == 0 && shm_path[dl] == '/')
		return false;
	return (size_t)snprintf(out, len, "%s/%s", m->dir, base_name(shm_path)) < len;
}

/* The existing region file for shm_path on some hugetlbfs mount; false if
 * there is none. */
static bool huge_existing(const char *shm_path, char *out, size_t len)
{
	struct huge_mount m[HUGE_MOUNTS_MAX];
	unsigned n = huge_mounts(m, HUGE_MOUNTS_MAX);

	for (unsigned i = 0; i < n; i++)
		if (huge_place(&m[i], shm_path, out, len) && access(out, F_OK) == 0)
			return true;
	return false;
}

int fg_region_unlink(const char *shm_path)
{
	char hp[PATH_MAX];
	int rc = 0;

	while (huge_existing(shm_path, hp, sizeof(hp)))
		if (unlink(hp) < 0) {
			rc = -errno;
			break;
		}
	if (unlink(shm_path) < 0 && errno != ENOENT)
		rc = -errno;
	return rc;
}

/* ---- mapping ---- */

static void region_free(struct fg_region *r)
{
	if (!r)
		return;
	if (r->h)
		fg_history_detach(r->h);
	if (r->base)
		munmap(r->base, r->len);
	if (r->fd >= 0)
		close(r->fd);
	pthread_mutex_destroy(&r->sum_lock);
	free(r);
}

static struct fg_region *region_alloc(void)
{
	struct fg_region *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->fd = -1;
	pthread_mutex_init(&r->sum_lock, NULL);
	return r;
}

static int map_file(struct fg_region *r, size_t len, bool populate)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | (populate ? MAP_POPULATE : 0),
		       r->fd, 0);

	if (p == MAP_FAILED)
		return -errno;
	r->base = p;
	r->len = len;
	r->hdr = p;
	return 0;
}

/* The NUMA nodes online (a bit each, nodes 0..63); 1 if unknown. */
static uint64_t numa_nodes(void)
{
	FILE *f = fopen("/sys/devices/system/node/online", "re");
	uint64_t mask = 0;
	unsigned a, b;
	int c = ',';

	if (!f)
		return 1;
	/* "0", "0-3", "0,2-3" */
	while (c == ',' && fscanf(f, "%u", &a) == 1) {
		b = a;
		c = fgetc(f);
		if (c == '-' && fscanf(f, "%u", &b) == 1)
			c = fgetc(f);
		for (unsigned n = a; n <= b && n < 64; n++)
			mask |= 1ull << n;
	}
	fclose(f);
	return mask ? mask : 1;
}

/*
 * Every worker touches every shard, so on a box of several NUMA nodes the
 * region's pages are spread over all of them (the memory policy at the
 * moment they are allocated, which is the fallocate below: set_mempolicy
 * as a raw system call, no libnuma). On one node there is nothing to do,
 * and the log says so once.
 */
static bool numa_interleave(bool on)
{
	static bool said;
	uint64_t nodes = numa_nodes();

	if (!(nodes & (nodes - 1))) {
		if (on && !said)
			FG_LOG_INFO(COMP, "one NUMA node: the region's pages are not interleaved");
		said = true;
		return false;
	}
	if (syscall(SYS_set_mempolicy, on ? MPOL_INTERLEAVE : MPOL_DEFAULT, on ? &nodes : NULL,
		    on ? 65ul : 0ul) < 0) {
		FG_LOG_WARN(COMP, "set_mempolicy(%s): %s", on ? "interleave" : "default",
			    strerror(errno));
		return false;
	}
	if (on && !said)
		FG_LOG_NOTICE(COMP, "%d NUMA nodes: the region's pages are interleaved across them",
			      __builtin_popcountll(nodes));
	said = true;
	return true;
}

static int create_file(struct fg_region *r, const char *path, uint64_t size)
{
	bool interleaved;
	int rc = 0;

	r->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (r->fd < 0)
		return -errno;
	if (ftruncate(r->fd, (off_t)size) < 0)
		return -errno;
	/* Allocate every page now and map them all: the history table is
	 * written whole right after (create or restore), and one call costs
	 * far less than a page fault per page (tens of µs each in a VM). */
	interleaved = numa_interleave(true);
	if (fallocate(r->fd, 0, 0, (off_t)size) < 0 && errno != EOPNOTSUPP)
		rc = -errno;
	if (interleaved)
		numa_interleave(false);
	if (rc < 0)
		return rc;
	snprintf(r->path, sizeof(r->path), "%s", path);
	return map_file(r, size, true);
}

/* The huge= option of the tmpfs holding `path` ("" if none or not a
 * tmpfs): the mount whose directory is the longest prefix of path. */
static void tmpfs_huge_option(const char *path, char *out, size_t len)
{
	char line[2048], dev[256], mnt[512], type[64], opts[1024];
	FILE *f = fopen("/proc/mounts", "re");
	size_t best = 0;

	out[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		size_t ml;
		const char *h;

		if (sscanf(line, "%255s %511s %63s %1023s", dev, mnt, type, opts) != 4)
			continue;
		ml = strlen(mnt);
		if (strncmp(path, mnt, ml) != 0 || (path[ml] != '/' && ml != 1) || ml < best)
			continue;
		best = ml;
		out[0] = '\0';
		h = strcmp(type, "tmpfs") == 0 ? strstr(opts, "huge=") : NULL;
		if (h)
			snprintf(out, len, "%.*s", (int)strcspn(h + 5, ","), h + 5);
	}
	fclose(f);
}

/* The huge page size a tmpfs with huge= gives (the PMD size). */
static uint64_t thp_page_size(void)
{
	unsigned long long v = 0;
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "re");

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v ? v : 2u << 20;
}

/* The hugetlbfs mount for a region of `size`: of those with room for it
 * (rounded up to their page), the one with the largest pages, the first
 * in /proc/mounts among equals; -1 if none has room. */
static int huge_pick(const struct huge_mount *m, unsigned n, const char *shm_path, uint64_t size)
{
	char hp[PATH_MAX];
	int best = -1;

	for (unsigned i = 0; i < n; i++)
		if (huge_place(&m[i], shm_path, hp, sizeof(hp)) &&
		    m[i].room >= align_up(size, m[i].page) &&
		    (best < 0 || m[i].page > m[best].page))
			best = (int)i;
	return best;
}

/* "/dev/hugepages (2048 KB pages, 4 MB free), ..." for the log line of a
 * mode that asked for huge pages and gets none. */
static void huge_describe(const struct huge_mount *m, unsigned n, char *out, size_t len)
{
	size_t l = 0;

	out[0] = '\0';
	for (unsigned i = 0; i < n && l < len; i++)
		l += (size_t)snprintf(out + l, len - l, "%s%s (%llu KB pages, %llu MB free)",
				      i ? ", " : "", m[i].dir, (unsigned long long)(m[i].page >> 10),
				      (unsigned long long)(m[i].room >> 20));
}

/* Try hugetlbfs when the mode allows and a mount has room, else the tmpfs
 * path. A mode that asked for huge pages and does not get them says so in
 * one log line; auto falls back silently (the "created" line says what it
 * got, either way). */
static int place_new(struct fg_region *r, const char *shm_path, enum fg_region_huge mode,
		     uint64_t size, char *why, size_t whylen)
{
	struct huge_mount m[HUGE_MOUNTS_MAX];
	char hp[PATH_MAX], opt[32], seen[512];
	unsigned n = 0;
	int rc, pick = -1;

	r->page = 4096;
	if (mode == FG_REGION_HUGE_AUTO || mode == FG_REGION_HUGE_HUGETLBFS) {
		n = huge_mounts(m, HUGE_MOUNTS_MAX);
		pick = huge_pick(m, n, shm_path, size);
	}
	if (pick >= 0 && huge_place(&m[pick], shm_path, hp, sizeof(hp))) {
		rc = create_file(r, hp, align_up(size, m[pick].page));
		if (rc == 0) {
			r->huge = true;
			r->page = m[pick].page;
			return 0;
		}
		FG_LOG_WARN(COMP, "%s: %s; using %s instead", hp, strerror(-rc), shm_path);
		if (r->fd >= 0) {
			close(r->fd);
			r->fd = -1;
			unlink(hp);
		}
	} else if (mode == FG_REGION_HUGE_HUGETLBFS && n == 0) {
		FG_LOG_WARN(COMP, "huge-pages hugetlbfs: no hugetlbfs is mounted: using %s with 4K pages",
			    shm_path);
	} else if (mode == FG_REGION_HUGE_HUGETLBFS) {
		huge_describe(m, n, seen, sizeof(seen));
		FG_LOG_WARN(COMP, "huge-pages hugetlbfs: no hugetlbfs mount has room for the region's %llu MB (%s): using %s with 4K pages",
			    (unsigned long long)(size >> 20), seen, shm_path);
	}
	if (mode == FG_REGION_HUGE_TMPFS) {
		tmpfs_huge_option(shm_path, opt, sizeof(opt));
		if (strcmp(opt, "always") == 0 || strcmp(opt, "within_size") == 0) {
			size = align_up(size, thp_page_size());
			r->page = thp_page_size();
		} else {
			FG_LOG_WARN(COMP, "huge-pages tmpfs: %s is not on a tmpfs mounted with huge=always or huge=within_size (%s%s): 4K pages",
				    shm_path, opt[0] ? "huge=" : "no huge= option", opt);
		}
	}
	rc = create_file(r, shm_path, size);
	if (rc < 0)
		snprintf(why, whylen, "cannot create %s: %s", shm_path, strerror(-rc));
	return rc;
}

_Static_assert(FG_REGION_HEADER == FG_RHEADER, "header page");
_Static_assert((int)FG_REGION_HUGE_OFF == (int)FG_HUGE_OFF &&
	       (int)FG_REGION_HUGE_HUGETLBFS == (int)FG_HUGE_HUGETLBFS &&
	       (int)FG_REGION_HUGE_TMPFS == (int)FG_HUGE_TMPFS, "[history] huge-pages order");

int fg_region_header_encode(const struct fg_region_params *p, fg_time_t created, void *out,
			    size_t len)
{
	struct fg_rhdr h;

	memset(&h, 0, sizeof(h));
	if (len < sizeof(h) || !layout(p, &h))
		return -EINVAL;
	memcpy(h.magic, FG_RMAGIC, 8);
	h.layout = FG_REGION_LAYOUT;
	h.header_size = FG_RHEADER;
	h.schema = fg_rschema();
	h.created = created;
	memcpy(h.seed, p->seed, sizeof(h.seed));
	atomic_init(&h.state, FG_RSTATE_BUILDING);
	memcpy(out, &h, sizeof(h));
	return 0;
}

struct fg_region *fg_region_create(const char *shm_path, const struct fg_region_params *p,
				   char *why, size_t whylen)
{
	struct fg_region *r = region_alloc();
	struct fg_rhdr h;

	if (!r) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	if (fg_region_header_encode(p, time(NULL), &h, sizeof(h)) != 0) {
		snprintf(why, whylen, "region parameters out of range");
		goto out_free;
	}
	fg_region_unlink(shm_path);
	if (place_new(r, shm_path, p->huge, h.region_size, why, whylen) < 0)
		goto out_free;
	h.region_size = r->len;
	h.flags = r->huge ? FG_RFLAG_HUGE : r->page > 4096 ? FG_RFLAG_THP : 0;
	atomic_init(&h.owner_pid, (int32_t)getpid());
	atomic_init(&h.owner_start, fg_region_proc_start(getpid()));
	atomic_init(&h.owner_heartbeat, fg_mono_ns());
	memcpy(r->hdr, &h, sizeof(h));
	r->owner = true;
	FG_LOG_INFO(COMP, "created %s (%zu bytes, %llu KB pages%s, %u writer slots)", r->path,
		    r->len, (unsigned long long)(r->page >> 10),
		    r->huge ? " on hugetlbfs" : r->page > 4096 ? " on tmpfs huge=" : "", p->writers);
	return r;

out_free:
	region_free(r);
	return NULL;
}

/* ---- validation ---- */

int fg_region_header_check(const void *hdr, size_t len, const char **why)
{
	const struct fg_rhdr *h = hdr;

	if (len < FG_RHEADER || memcmp(h->magic, FG_RMAGIC, 8) != 0) {
		*why = "not a floodgate region (bad magic)";
		return -EINVAL;
	}
	if (h->layout != FG_REGION_LAYOUT) {
		*why = fg_datadir_version_why("region layout", h->layout, FG_REGION_LAYOUT,
					      FG_REGION_LAYOUT);
		return -EPROTONOSUPPORT;
	}
	if (h->header_size != FG_RHEADER) {
		*why = "header size does not match its layout";
		return -EINVAL;
	}
	if (h->schema != fg_rschema()) {
		*why = "its counter tables differ from this build's (built from other sources)";
		return -EPROTONOSUPPORT;
	}
	return 0;
}

/* Why a mapped header is not one this build reads; NULL if it is. */
static const char *check_header(const struct fg_rhdr *h, size_t len)
{
	struct fg_region_params p;
	struct fg_rhdr want;
	const char *why;

	if (fg_region_header_check(h, len, &why) != 0)
		return why;
	memset(&p, 0, sizeof(p));
	memset(&want, 0, sizeof(want));
	p.history_size = h->history_size;
	p.writers = h->n_slots;
	p.journal_ring = h->jring;
	p.vlog_ring = h->vring;
	if (!layout(&p, &want) ||
	    want.slots_off != h->slots_off || want.slot_size != h->slot_size ||
	    want.peers_off != h->peers_off || want.retired_off != h->retired_off ||
	    want.ctld_off != h->ctld_off || want.history_off != h->history_off ||
	    h->region_size != len || want.region_size > len)
		return "sizes and offsets do not add up";
	if (atomic_load(&h->n_peers) > FG_REGION_PEERS)
		return "peer table count out of range";
	return NULL;
}

/* Open and map an existing region at one of its two places. */
static int open_existing(struct fg_region *r, const char *shm_path)
{
	char hp[PATH_MAX];
	struct stat st;
	const char *path = shm_path;

	if (huge_existing(shm_path, hp, sizeof(hp)))
		path = hp;
	r->fd = open(path, O_RDWR | O_CLOEXEC);
	if (r->fd < 0)
		return -errno;
	if (fstat(r->fd, &st) < 0)
		return -errno;
	if (st.st_size < (off_t)FG_RHEADER)
		return -EINVAL;
	snprintf(r->path, sizeof(r->path), "%s", path);
	return map_file(r, (size_t)st.st_size, false);
}

static void set_offsets(struct fg_region *r)
{
	r->huge = r->hdr->flags & FG_RFLAG_HUGE;
	r->page = r->hdr->flags & FG_RFLAG_THP ? thp_page_size() : 4096;
	if (r->huge) {
		struct statfs sf;

		r->page = fstatfs(r->fd, &sf) == 0 ? (uint64_t)sf.f_bsize : 2u << 20;
	}
	r->jring_off = fg_rslot_jring_off();
	r->vring_off = fg_rslot_vring_off(r->hdr->jring);
}

/* Header, history and seed check; fills r->h. */
static const char *validate(struct fg_region *r)
{
	enum fg_history_error herr;
	struct fg_history_key chk;
	const char *bad = check_header(r->hdr, r->len);

	if (bad)
		return bad;
	set_offsets(r);
	r->h = fg_history_attach(r->base + r->hdr->history_off, r->hdr->history_size, &herr);
	if (!r->h)
		return fg_history_error_str(herr);
	fg_region_seed_check(r->h, &chk);
	if (chk.lo != r->hdr->seed_check[0] || chk.hi != r->hdr->seed_check[1])
		return "the history table's seed does not match the region's";
	return NULL;
}

struct fg_region *fg_region_adopt(const char *shm_path, int *err, char *why, size_t whylen)
{
	struct fg_region *r = region_alloc();
	const char *bad;
	int rc;

	if (!r) {
		*err = -ENOMEM;
		return NULL;
	}
	rc = open_existing(r, shm_path);
	if (rc < 0) {
		*err = rc == -ENOENT ? -ENOENT : -EINVAL;
		snprintf(why, whylen, "%s: %s", shm_path, strerror(-rc));
		goto out_free;
	}
	if (r->len >= FG_RHEADER && memcmp(r->hdr->magic, FG_RMAGIC, 8) == 0 &&
	    fg_region_proc_alive(atomic_load(&r->hdr->owner_pid),
				 atomic_load(&r->hdr->owner_start)) &&
	    atomic_load(&r->hdr->owner_pid) != (int32_t)getpid()) {
		*err = -EBUSY;
		snprintf(why, whylen, "%s is owned by a running floodctld (pid %d)", r->path,
			 (int)atomic_load(&r->hdr->owner_pid));
		goto out_free;
	}
	bad = validate(r);
	if (!bad && atomic_load(&r->hdr->state) != FG_RSTATE_READY)
		bad = "left half-built (its floodctld died while building it)";
	if (bad) {
		*err = -EINVAL;
		snprintf(why, whylen, "%s: %s", r->path, bad);
		goto out_free;
	}
	atomic_store(&r->hdr->owner_pid, (int32_t)getpid());
	atomic_store(&r->hdr->owner_start, fg_region_proc_start(getpid()));
	fg_region_owner_heartbeat(r);
	r->owner = true;
	*err = 0;
	return r;

out_free:
	region_free(r);
	return NULL;
}

struct fg_region *fg_region_attach(const char *shm_path, char *why, size_t whylen)
{
	struct fg_region *r = region_alloc();
	const char *bad;
	int rc;

	if (!r) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	rc = open_existing(r, shm_path);
	if (rc < 0) {
		snprintf(why, whylen, "%s: %s (is floodctld running?)", shm_path,
			 rc == -EINVAL ? "too short to be a region" : strerror(-rc));
		goto out_free;
	}
	bad = validate(r);
	if (!bad && atomic_load(&r->hdr->state) != FG_RSTATE_READY)
		bad = "not ready: floodctld is still building it";
	if (!bad && !fg_region_proc_alive(atomic_load(&r->hdr->owner_pid),
					  atomic_load(&r->hdr->owner_start)))
		bad = "its owner, floodctld, is not running: start floodctld first";
	if (bad) {
		snprintf(why, whylen, "%s: %s", r->path, bad);
		goto out_free;
	}
	return r;

out_free:
	region_free(r);
	return NULL;
}

bool fg_region_restoring(const char *shm_path)
{
	struct fg_region *r = region_alloc();
	bool yes;

	if (!r)
		return false;
	yes = open_existing(r, shm_path) == 0 && !validate(r) &&
	      atomic_load(&r->hdr->state) == FG_RSTATE_BUILDING &&
	      fg_region_proc_alive(atomic_load(&r->hdr->owner_pid),
				   atomic_load(&r->hdr->owner_start));
	region_free(r);
	return yes;
}

void fg_region_close(struct fg_region *r)
{
	region_free(r);
}

/* ---- owner side ---- */

void *fg_region_history_mem(struct fg_region *r, size_t *len)
{
	*len = r->hdr->history_size;
	return r->base + r->hdr->history_off;
}

void fg_region_seed_check(const struct fg_history *h, struct fg_history_key *out)
{
	fg_history_hash(h, SEED_CHECK_TEXT, sizeof(SEED_CHECK_TEXT) - 1, out);
}

int fg_region_set_history(struct fg_region *r, struct fg_history *h)
{
	struct fg_history_key chk;

	fg_region_seed_check(h, &chk);
	r->hdr->seed_check[0] = chk.lo;
	r->hdr->seed_check[1] = chk.hi;
	if (r->h && r->h != h)
		fg_history_detach(r->h);
	r->h = h;
	set_offsets(r);
	return 0;
}

void fg_region_publish(struct fg_region *r)
{
	FG_ASSERT(r->h);
	atomic_store(&r->hdr->state, FG_RSTATE_READY);
}

void fg_region_owner_heartbeat(struct fg_region *r)
{
	atomic_store_explicit(&r->hdr->owner_heartbeat, fg_mono_ns(), memory_order_relaxed);
}

/* ---- processes ---- */

uint64_t fg_region_proc_start(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long start = 0;
	const char *p;
	ssize_t n;
	int fd;

	if (pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* comm may hold spaces and parentheses: fields restart after the last ')' */
	p = strrchr(buf, ')');
	/* a zombie has exited: its writes are over */
	if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
		return 0;
	/* the space before field k is found at k's turn; starttime is field 22 */
	for (int field = 3; field <= 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &start) != 1)
		return 0;
	return start;
}

bool fg_region_proc_alive(pid_t pid, uint64_t start)
{
	return start != 0 && fg_region_proc_start(pid) == start;
}

/* ---- accessors ---- */

struct fg_history *fg_region_history(const struct fg_region *r)
{
	return r->h;
}

const char *fg_region_path(const struct fg_region *r)
{
	return r->path;
}

size_t fg_region_mapped_size(const struct fg_region *r)
{
	return r->len;
}

bool fg_region_hugepages(const struct fg_region *r)
{
	return r->huge;
}

uint64_t fg_region_page_size(const struct fg_region *r)
{
	return r->page ? r->page : 4096;
}

unsigned fg_region_nslots(const struct fg_region *r)
{
	return r->hdr->n_slots;
}

uint32_t fg_region_ring_capacity(const struct fg_region *r, enum fg_region_ring which)
{
	return which == FG_RING_JOURNAL ? r->hdr->jring : r->hdr->vring;
}

void fg_region_seed(const struct fg_region *r, uint8_t seed[FG_HISTORY_SEED_LEN])
{
	memcpy(seed, r->hdr->seed, FG_HISTORY_SEED_LEN);
}

fg_time_t fg_region_created(const struct fg_region *r)
{
	return r->hdr->created;
}

pid_t fg_region_owner(const struct fg_region *r)
{
	return atomic_load(&r->hdr->owner_pid);
}

void fg_region_set_vlog(struct fg_region *r, bool on)
{
	atomic_store(&r->hdr->vlog_on, on ? 1u : 0u);
}

bool fg_region_vlog_on(const struct fg_region *r)
{
	return atomic_load_explicit(&r->hdr->vlog_on, memory_order_relaxed) != 0;
}

struct fg_stats *fg_region_ctld_stats(struct fg_region *r)
{
	return (struct fg_stats *)(r->base + r->hdr->ctld_off);
}

/* ---- peers ---- */

static char *peer_slot(const struct fg_region *r, unsigned i)
{
	return (char *)r->base + r->hdr->peers_off + (uint64_t)i * FG_RPEER_NAME;
}

unsigned fg_region_npeers(const struct fg_region *r)
{
	return atomic_load_explicit(&r->hdr->n_peers, memory_order_acquire);
}

int fg_region_peer_index(const struct fg_region *r, const char *name)
{
	unsigned n = fg_region_npeers(r);

	for (unsigned i = 0; i < n; i++)
		if (strncmp(peer_slot(r, i), name, FG_RPEER_NAME) == 0)
			return (int)i;
	return -ENOENT;
}

const char *fg_region_peer_name(const struct fg_region *r, unsigned idx)
{
	return idx < fg_region_npeers(r) ? peer_slot(r, idx) : NULL;
}

/* Names are appended and never moved: a writer's cached index stays right
 * for the region's life. The count is published after the name. */
int fg_region_add_peers(struct fg_region *r, const char *const *names, unsigned n)
{
	unsigned have = fg_region_npeers(r);
	int added = 0;

	for (unsigned i = 0; i < n; i++) {
		if (fg_region_peer_index(r, names[i]) >= 0)
			continue;
		if (have >= FG_REGION_PEERS) {
			FG_LOG_WARN(COMP, "peer table full (%u names): '%s' is not counted per peer",
				    FG_REGION_PEERS, names[i]);
			return -ENOSPC;
		}
		snprintf(peer_slot(r, have), FG_RPEER_NAME, "%s", names[i]);
		have++;
		atomic_store_explicit(&r->hdr->n_peers, have, memory_order_release);
		added++;
	}
	return added;
}
