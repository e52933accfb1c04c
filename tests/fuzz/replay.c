/* SPDX-License-Identifier: MIT */
/*
 * replay.c — runs a libFuzzer target without libFuzzer (as Suricata's
 * onefile.c and SQLite's fuzzcheck.c do), so every corpus is replayed in
 * `make test` under ASan+UBSan.
 *
 *   fuzz_X [-m MUTATIONS] [-s SEED] PATH...
 *
 * Each PATH is a file or a directory of files. Every input is run as is,
 * then MUTATIONS deterministic variants of it (bit flips, byte overwrites
 * with boundary values, truncations, duplicated spans) from a fixed seed,
 * so a CI run explores a little beyond the stored corpus, repeatably.
 * Any crash or sanitizer report aborts the process (non-zero exit).
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

#define REPLAY_MAX_INPUT (16u << 20)

static unsigned long n_inputs, n_files;
static unsigned mutations = 32;
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	/* splitmix64: small, deterministic, good enough to pick mutations */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void run_one(const uint8_t *data, size_t size)
{
	/* A private copy of exactly `size` bytes, so ASan sees any overread. */
	uint8_t *copy = malloc(size ? size : 1);

	if (!copy) {
		perror("malloc");
		exit(2);
	}
	memcpy(copy, data, size);
	LLVMFuzzerTestOneInput(copy, size);
	free(copy);
	n_inputs++;
}

static void mutate_and_run(const uint8_t *data, size_t size)
{
	static const uint8_t specials[] = { 0x00, 0xff, '\r', '\n', '.', ' ',
					    '<', '>', '@', ':', '\t', 0x80 };
	uint8_t *buf = malloc(2 * size + 16);

	if (!buf) {
		perror("malloc");
		exit(2);
	}
	for (unsigned m = 0; m < mutations; m++) {
		size_t n = size;

		memcpy(buf, data, size);
		switch (rng() % 5) {
		case 0: /* flip one bit */
			if (n)
				buf[rng() % n] ^= (uint8_t)(1u << (rng() % 8));
			break;
		case 1: /* overwrite with a boundary byte */
			if (n)
				buf[rng() % n] = specials[rng() % sizeof(specials)];
			break;
		case 2: /* truncate */
			n = n ? rng() % n : 0;
			break;
		case 3: { /* duplicate a span */
			if (!n)
				break;
			size_t at = rng() % n, len = 1 + rng() % (n - at);

			if (len > 16 + n / 4)
				len = 16 + n / 4;
			if (at + len > n)
				len = n - at;
			memmove(buf + at + len, buf + at, n - at);
			n += len;
			break;
		}
		default: /* delete a span */
			if (n) {
				size_t at = rng() % n, len = 1 + rng() % (n - at);

				memmove(buf + at, buf + at + len, n - at - len);
				n -= len;
			}
			break;
		}
		run_one(buf, n);
	}
	free(buf);
}

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data;
	size_t size;

	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	data = malloc(REPLAY_MAX_INPUT);
	if (!data) {
		fclose(f);
		return -1;
	}
	size = fread(data, 1, REPLAY_MAX_INPUT, f);
	fclose(f);
	run_one(data, size);
	mutate_and_run(data, size);
	free(data);
	n_files++;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return run_file(path);
	d = opendir(path);
	if (!d)
		return -1;
	/* sorted, so a run is the same run everywhere */
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			names = realloc(names, cap * sizeof(*names));
			if (!names)
				exit(2);
		}
		if (asprintf(&names[n++], "%s/%s", path, de->d_name) < 0)
			exit(2);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		if (run_path(names[i]) < 0)
			rc = -1;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	int opt, rc = 0;

	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	while ((opt = getopt(argc, argv, "m:s:")) != -1) {
		switch (opt) {
		case 'm':
			mutations = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 's':
			rng_state = strtoull(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: %s [-m MUTATIONS] [-s SEED] PATH...\n", argv[0]);
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: %s [-m MUTATIONS] [-s SEED] PATH...\n", argv[0]);
		return 2;
	}
	for (int i = optind; i < argc; i++)
		if (run_path(argv[i]) < 0)
			rc = 1;
	if (n_files == 0) {
		fprintf(stderr, "replay: no corpus files found\n");
		rc = 1;
	}
	printf("replayed %lu inputs (%lu corpus files, %u mutations each)\n",
	       n_inputs, n_files, mutations);
	return rc;
}
