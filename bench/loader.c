// SPDX-License-Identifier: GPL-2.0-only
/* loader OBJ: load a BPF object, attach every program, print "attached"
 * on stderr, and hold until SIGINT/SIGTERM. For the floor and references. */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include <bpf/libbpf.h>

static int quiet(enum libbpf_print_level l, const char *f, va_list ap)
{
	return l == LIBBPF_WARN ? vfprintf(stderr, f, ap) : 0;
}

static void nothing(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	struct bpf_program *prog;
	struct bpf_object *obj;

	if (argc != 2) {
		fprintf(stderr, "usage: loader OBJ\n");
		return 2;
	}
	libbpf_set_print(quiet);
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj))
		return 1;
	bpf_object__for_each_program(prog, obj)
		if (!bpf_program__attach(prog))
			return 1;
	signal(SIGINT, nothing);
	signal(SIGTERM, nothing);
	fprintf(stderr, "attached\n");
	pause();
	bpf_object__close(obj);
	return 0;
}
