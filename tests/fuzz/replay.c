// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The replay program: runs a fuzz target over every file named on the
 * command line and every file of every directory named there (not
 * recursively; names starting with '.' are skipped), in name order.  Each
 * input is read into a buffer of exactly its size, so a sanitizer build
 * catches reads past the end as libFuzzer would.  Exits 0 when every input
 * ran; a crash is a crash (abort, sanitizer report).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"
#include "util.h"

#define REPLAY_MAX_BYTES (16 * 1024 * 1024)

static int run_file(const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	int r = read_file(path, REPLAY_MAX_BYTES, &buf, &len);
	if (r < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(-r));
		return r;
	}
	/* exactly len bytes, without read_file's NUL, so overreads are caught */
	uint8_t *data = malloc(len ? len : 1);
	if (!data) {
		free(buf);
		return -ENOMEM;
	}
	memcpy(data, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(data, len);
	free(data);
	return 0;
}

static int run_dir(const char *dir, size_t *count)
{
	struct dirent **names = NULL;
	int n = scandir(dir, &names, NULL, alphasort);
	if (n < 0) {
		fprintf(stderr, "%s: %s\n", dir, strerror(errno));
		return -errno;
	}
	int r = 0;
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.' && r == 0) {
			char *path = NULL;
			struct stat st;
			if (asprintf(&path, "%s/%s", dir, names[i]->d_name) < 0) {
				r = -ENOMEM;
			} else if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
				r = run_file(path);
				(*count)++;
			}
			free(path);
		}
		free(names[i]);
	}
	free(names);
	return r;
}

int main(int argc, char **argv)
{
	size_t count = 0;
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;
		int r;
		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		if (S_ISDIR(st.st_mode)) {
			r = run_dir(argv[i], &count);
		} else {
			r = run_file(argv[i]);
			count++;
		}
		if (r < 0)
			return 1;
	}
	printf("%s: %zu inputs ran\n", argv[0], count);
	return 0;
}
