/* SPDX-License-Identifier: MIT */
/*
 * datadir.h — the file handling floodctld's data directory shares:
 * numbered files, durable writes, setting damaged files aside.
 *
 * The data directory (config [persistence] data-dir) is flat:
 *
 *   journal-<16 hex>.fgj     journal segments (journal.h)
 *   snapshot-<16 hex>.fgs    snapshots (snapshot.h)
 *   snapshot-<16 hex>.fgs.tmp  a snapshot being written (removed at start)
 *   *.bad                    files that failed a check: kept as evidence,
 *                            never read again, never deleted by floodctld
 *   floodctld.lock           held (flock) while a floodctld uses the directory
 *
 * Durability follows POSIX to the letter: data is durable after fsync or
 * fdatasync of its file; a new name, a rename or an unlink only after
 * fsync of the directory. The tests' power-loss simulation
 * (tests/preload/powerloss.c) enforces exactly that, and removes single
 * syncs by path (FG_PL_SKIP_SYNC) to show what each one protects: the
 * binaries under test are the ones shipped, with no test-only knob.
 */
#ifndef FLOODGATE_DATADIR_H
#define FLOODGATE_DATADIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "floodgate/innhist.h"

/* "<dir>/<prefix><16 hex digits><suffix>": 0 or -ENAMETOOLONG. */
int fg_datadir_path(const char *dir, const char *prefix, uint64_t num, const char *suffix,
		    char *out, size_t len);

/* Numbers of the files named prefix + 16 hex digits + suffix (exactly),
 * ascending, in a malloc'd array. 0 or -errno. */
int fg_datadir_list(const char *dir, const char *prefix, const char *suffix,
		    uint64_t **nums, size_t *n);

/* fsync the directory: new names, renames and unlinks in it are durable. */
int fg_datadir_fsync(const char *dir);

/* write() all of buf (restarting after EINTR and short writes); 0 or -errno. */
int fg_datadir_write_all(int fd, const void *buf, size_t len);
/* pread() exactly len octets at off; 0, -EIO on a short file, or -errno. */
int fg_datadir_pread_all(int fd, void *buf, size_t len, uint64_t off);

/* Replace path durably with the n buffers' octets, in order: written to
 * path.tmp (created with mode), synced, renamed over path, the directory
 * synced; path.tmp removed on failure. 0 or -errno. */
int fg_datadir_replace(const char *path, mode_t mode, const struct iovec *iov, unsigned n);

/* The table of INN's hashes (innhist.h) to path: fg_foreign_build, then
 * fg_datadir_replace. *n_out: the distinct hashes written. 0 or -errno. */
int fg_foreign_write(const char *path, uint8_t (*hashes)[FG_MD5_LEN], size_t n,
		     fg_time_t imported, fg_time_t until, size_t *n_out);

/* A small information file (status for floodctld: not state, never
 * synced): `text` to dir/name.tmp, renamed over dir/name. 0 or -errno. */
int fg_datadir_put_info(const char *dir, const char *name, const char *text, size_t len);
/* Read dir/name, at most cap octets, into buf: the length, or -errno
 * (-ENOENT: none). */
long fg_datadir_get_info(const char *dir, const char *name, char *buf, size_t cap);

/* Rename path to path.bad (path.bad.2, ... if taken) and fsync the
 * directory. Writes the new name into `as` if not NULL. 0 or -errno. */
int fg_datadir_set_aside(const char *path, char *as, size_t aslen);

/*
 * Formats and versions (docs/compat.md): every file format carries a
 * version after its magic, checked after its checksum (so a newer version
 * is told from damage). A reader that meets a version it does not read
 * returns -EPROTONOSUPPORT with this message: "<format> version <found>;
 * this build reads version <oldest>[..<newest>]". The text lives in a
 * thread-local buffer until the thread's next call.
 */
const char *fg_datadir_version_why(const char *format, uint32_t found, uint32_t oldest,
				   uint32_t newest);

/* mkdir -p with mode 0700 for the last component. 0 or -errno. */
int fg_datadir_make(const char *dir);

#endif /* FLOODGATE_DATADIR_H */
