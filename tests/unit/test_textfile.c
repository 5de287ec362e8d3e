// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests for --textfile's atomic writer, common/textfile.c, in a
 * temporary directory of their own. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "capture.h"
#include "diag.h"
#include "textfile.h"

static char dir[64];
static char path[128];
static char stderr_text[4096];

static int render_text(void *arg, FILE *f)
{
	return fputs(arg, f) == EOF;
}

static int render_fails(void *arg, FILE *f)
{
	(void)arg;
	fputs("half of it", f);
	return -1;
}

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/test_textfile.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/t.prom", dir);
	diag_set_tool("t");
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

static void expect_content(const char *want)
{
	char buf[256] = "";
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	assert_true(fread(buf, 1, sizeof(buf) - 1, f) == strlen(want));
	fclose(f);
	assert_string_equal(buf, want);
}

/* The directory holds exactly @n entries: no temporary file is left. */
static void expect_entries(int n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int seen = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		seen += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	assert_int_equal(seen, n);
}

/* textfile_write(), what it says on stderr in stderr_text. */
static int with_stderr(struct textfile *tf, textfile_render_fn render, void *arg)
{
	struct capture c;
	int err;

	capture_begin(&c, STDERR_FILENO);
	err = textfile_write(tf, render, arg);
	capture_end(&c, stderr_text, sizeof(stderr_text));
	return err;
}

static void test_write_replace(void **state)
{
	struct textfile tf;
	char why[512];
	struct stat st;
	mode_t old = umask(077);	/* a shell's strict umask: still 0644 */

	(void)state;
	assert_int_equal(textfile_open(&tf, path, why, sizeof(why)), 0);
	assert_int_equal(textfile_write(&tf, render_text, "a 1\n"), 0);
	umask(old);
	expect_content("a 1\n");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(textfile_write(&tf, render_text, "a 2\n"), 0);
	expect_content("a 2\n");
	expect_entries(1);
	assert_int_equal(tf.errors, 0);
	textfile_close(&tf, false);
	assert_int_equal(access(path, F_OK), -1);
	expect_entries(0);
}

/* A reader that has the file open keeps reading the old one whole. */
static void test_reader_sees_whole_file(void **state)
{
	struct textfile tf;
	char why[512], buf[16] = "";
	FILE *reader;

	(void)state;
	assert_int_equal(textfile_open(&tf, path, why, sizeof(why)), 0);
	assert_int_equal(textfile_write(&tf, render_text, "old\n"), 0);
	reader = fopen(path, "r");
	assert_non_null(reader);
	assert_int_equal(textfile_write(&tf, render_text, "new\n"), 0);
	assert_non_null(fgets(buf, sizeof(buf), reader));
	fclose(reader);
	assert_string_equal(buf, "old\n");
	expect_content("new\n");
	textfile_close(&tf, true);
	expect_content("new\n");	/* kept */
}

static void test_failure_keeps_old_file(void **state)
{
	struct textfile tf;
	char why[512], target[160];

	(void)state;
	assert_int_equal(textfile_open(&tf, path, why, sizeof(why)), 0);
	assert_int_equal(textfile_write(&tf, render_text, "good\n"), 0);
	assert_int_not_equal(with_stderr(&tf, render_fails, NULL), 0);
	expect_content("good\n");
	expect_entries(1);
	assert_int_equal(tf.errors, 1);
	assert_non_null(strstr(stderr_text, "t: cannot write "));
	assert_non_null(strstr(stderr_text, "previous file is kept"));
	/* The rename fails (a directory is in the way): the temporary goes. */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(target, sizeof(target), "%s/x", path);
	assert_int_equal(mkdir(target, 0755), 0);
	assert_int_not_equal(with_stderr(&tf, render_text, "good\n"), 0);
	assert_int_equal(tf.errors, 2);
	expect_entries(1);
	/* Within the minute: counted, not told again. */
	assert_string_equal(stderr_text, "");
	tf.warned_ns -= 61 * 1000000000ULL;
	assert_int_not_equal(with_stderr(&tf, render_text, "good\n"), 0);
	assert_non_null(strstr(stderr_text, "2 writes failed since the last message"));
	assert_int_equal(strchr(stderr_text, '\n') - stderr_text + 1, (long)strlen(stderr_text));
	assert_int_equal(rmdir(target), 0);
	assert_int_equal(rmdir(path), 0);
	textfile_close(&tf, false);
}

/* make_file NAME [AGE]: an empty file in dir, its mtime AGE s ago. */
static void make_file(const char *name, int age)
{
	char p[192];
	struct timespec ts[2];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= age;
	ts[1] = ts[0];
	assert_int_equal(futimens(fd, ts), 0);
	close(fd);
}

static bool exists(const char *name)
{
	char p[192];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

/* A killed run's temporary file is removed at the next start: of a PID
 * that is gone (and a few seconds old), or older than a minute, even of
 * this process's PID (an earlier run's: in a container it is PID 1 each
 * time); nothing else is touched. */
static void test_stale_temps(void **state)
{
	char why[512], dead[64], dead_new[64], dead_other[64], live_new[64], live_old[64], own[64], own_new[64];
	struct textfile tf;
	pid_t child;

	(void)state;
	child = fork();
	assert_true(child >= 0);
	if (!child)
		_exit(0);
	assert_int_equal(waitpid(child, NULL, 0), child);
	snprintf(dead, sizeof(dead), ".t.prom.%d.3", (int)child);
	snprintf(dead_new, sizeof(dead_new), ".t.prom.%d.4", (int)child);	/* or another namespace's */
	snprintf(dead_other, sizeof(dead_other), ".u.prom.%d.3", (int)child);	/* another path's */
	snprintf(live_new, sizeof(live_new), ".t.prom.%d.0", (int)getppid());	/* being written */
	snprintf(live_old, sizeof(live_old), ".t.prom.%d.1", (int)getppid());
	snprintf(own, sizeof(own), ".t.prom.%d.0", (int)getpid());
	snprintf(own_new, sizeof(own_new), ".t.prom.%d.1", (int)getpid());
	make_file(dead, 10);
	make_file(dead_new, 0);
	make_file(dead_other, 10);
	make_file(live_new, 0);
	make_file(live_old, 120);
	make_file(own, 120);	/* an earlier run's of the same PID */
	make_file(own_new, 0);
	make_file(".t.prom.12x.0", 120);
	make_file(".t.prom.1.", 120);
	make_file("t.prom.1.0", 120);
	assert_int_equal(textfile_open(&tf, path, why, sizeof(why)), 0);
	assert_false(exists(dead));
	assert_false(exists(live_old));
	assert_true(exists(dead_other));
	assert_true(exists(live_new));
	assert_true(exists(dead_new));
	assert_false(exists(own));
	assert_true(exists(own_new));
	assert_true(exists(".t.prom.12x.0"));
	assert_true(exists(".t.prom.1."));
	assert_true(exists("t.prom.1.0"));
	textfile_close(&tf, false);
}

/* What this run did not write is not its own to remove. */
static void test_close_unwritten(void **state)
{
	struct textfile tf;
	char why[512];
	FILE *f = fopen(path, "w");

	(void)state;
	assert_non_null(f);
	fputs("someone's\n", f);
	fclose(f);
	assert_int_equal(textfile_open(&tf, path, why, sizeof(why)), 0);
	textfile_close(&tf, false);
	expect_content("someone's\n");
	unlink(path);
}

static void test_open_refused(void **state)
{
	struct textfile tf;
	char why[512], p[PATH_MAX + 64], file[160];

	(void)state;
	assert_int_equal(textfile_open(&tf, "/nonexistent-dir/t.prom", why, sizeof(why)), -1);
	assert_non_null(strstr(why, "--textfile /nonexistent-dir/t.prom: there is no directory /nonexistent-dir"));
	assert_int_equal(tf.dir_fd, -1);
	snprintf(file, sizeof(file), "%s/file", dir);
	close(open(file, O_CREAT | O_WRONLY, 0644));
	snprintf(p, sizeof(p), "%s/t.prom", file);
	assert_int_equal(textfile_open(&tf, p, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "/file is not a directory"));
	unlink(file);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(textfile_open(&tf, path, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "is a directory"));
	rmdir(path);
	memset(p, 'a', sizeof(p));
	memcpy(p, "/tmp/", 5);
	strcpy(p + NAME_MAX - 10, ".prom");
	assert_int_equal(textfile_open(&tf, p, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "the file name is too long (at most "));
}

/* A bare name is in the working directory. */
static void test_bare_name(void **state)
{
	struct textfile tf;
	char why[512], cwd[PATH_MAX];

	(void)state;
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(dir), 0);
	assert_int_equal(textfile_open(&tf, "t.prom", why, sizeof(why)), 0);
	assert_int_equal(textfile_write(&tf, render_text, "here\n"), 0);
	assert_int_equal(chdir(cwd), 0);
	expect_content("here\n");
	textfile_close(&tf, false);
	expect_entries(0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_write_replace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reader_sees_whole_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failure_keeps_old_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_unwritten, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bare_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_temps, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
