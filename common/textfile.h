/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * --textfile: the run's metrics as a file for node_exporter's textfile
 * collector, replaced whole after every report, so that a scrape never
 * reads half of one (common/textfile.c).
 */
#ifndef COMMON_TEXTFILE_H
#define COMMON_TEXTFILE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* What node_exporter's textfile collector reads: "*.prom" files only. */
#define TEXTFILE_SUFFIX ".prom"
/* The label naming the file on every series (common/runtime.c). */
#define TEXTFILE_LABEL "textfile"

struct textfile {
	const char *path;		/* as given, for messages */
	int dir_fd;			/* its directory (O_PATH), opened as the user; -1: none */
	char name[NAME_MAX + 1];	/* its name in that directory */
	unsigned int temp_seq;		/* for the temporary files' names */
	bool written;			/* replaced at least once: ours to remove */
	unsigned long long errors;	/* writes that failed, in all */
	/* The rate-limited line on stderr: when it was last printed
	 * (CLOCK_MONOTONIC, ns) and how many failures it has not told of. */
	bool warned;
	unsigned long long warned_ns, untold;
};

/* Writes the whole exposition to @f; 0, or non-zero if it could not. */
typedef int (*textfile_render_fn)(void *arg, FILE *f);

/* Check that @path's directory exists and that the real user may create
 * files in it, and keep it open for the writes. 0, or -1 with one line
 * in @why (nothing is left open). */
int textfile_open(struct textfile *tf, const char *path, char *why, size_t len);
/* Render into a temporary file beside the path and rename it over the
 * path. 0, or a positive errno: the file is then as it was, the failure
 * counted in tf->errors and told on stderr (at most once a minute). */
int textfile_write(struct textfile *tf, textfile_render_fn render, void *arg);
/* @path's file name less TEXTFILE_SUFFIX, into @out: what its series'
 * TEXTFILE_LABEL says by default. */
void textfile_label(const char *path, char *out, size_t len);
/* Remove the file, if this run wrote it (unless @keep), and close. */
void textfile_close(struct textfile *tf, bool keep);

#endif /* COMMON_TEXTFILE_H */
