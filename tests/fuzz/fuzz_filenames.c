// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: file names as the kernel sends them (struct
 * file_name, kernel_layout.h) into common/filenames.c, whatever their
 * bytes: components without a NUL, a depth or a cut mask past the
 * record's room, any magic and inode. The input is a buffer size, then
 * records. Each label is a NUL-ended string within its buffer, the whole
 * label fits FILENAME_LABEL_MAX, and the table gives back for each file
 * the label of the last record of that file.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "filenames.h"

#define MUST(c) do { if (!(c)) { fprintf(stderr, "fuzz_filenames: %s\n", #c); abort(); } } while (0)
#define MAX_RECORDS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct filenames table = { 0 };
	struct { __u32 dev; __u64 ino; char label[FILENAME_LABEL_MAX]; } *seen;
	size_t nseen = 0, len;
	char *buf;

	if (size < 1)
		return 0;
	len = 1 + data[0];	/* 1..256: short buffers cut labels */
	data++;
	size--;
	seen = calloc(MAX_RECORDS, sizeof(*seen));
	buf = malloc(len);
	MUST(seen && buf);
	for (int r = 0; r < MAX_RECORDS && size; r++) {
		/* heap, exactly its size: ASan sees a read past the record */
		struct file_name *n = calloc(1, sizeof(*n));
		size_t take = size < sizeof(*n) ? size : sizeof(*n);
		char whole[FILENAME_LABEL_MAX], big[4 * FILENAME_LABEL_MAX];
		size_t s;

		MUST(n);
		memcpy(n, data, take);
		data += take;
		size -= take;
		n->dev &= 0xff;	/* few files: records of one file repeat */
		n->ino &= 0xff;

		memset(buf, 'x', len);
		file_name_format(n, buf, len);
		MUST(memchr(buf, '\0', len));
		/* the whole label fits FILENAME_LABEL_MAX: nothing is cut */
		file_name_format(n, big, sizeof(big));
		MUST(strlen(big) < FILENAME_LABEL_MAX);
		file_name_format(n, whole, sizeof(whole));
		MUST(!strcmp(whole, big));
		MUST(!strncmp(buf, whole, len - 1));	/* a short buffer holds its start */

		MUST(filenames_add(&table, n) == 0);
		for (s = 0; s < nseen && (seen[s].dev != n->dev || seen[s].ino != n->ino); s++)
			;
		if (n->ino) {
			if (s == nseen)
				nseen++;
			seen[s].dev = n->dev;
			seen[s].ino = n->ino;
			strcpy(seen[s].label, whole);
		}
		free(n);
	}
	for (size_t s = 0; s < nseen; s++) {
		const char *got = filenames_get(&table, seen[s].dev, seen[s].ino);

		MUST(got && !strcmp(got, seen[s].label));
	}
	filenames_free(&table);
	free(buf);
	free(seen);
	return 0;
}
