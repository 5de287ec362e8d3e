/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What clang's analyzer cannot see inside libbpf, for make lint only
 * (tests/lint.mk includes it before each file it checks): libbpf's
 * headers are system headers, and the analyzer takes a function there
 * to free nothing. The skeletons bpftool generates free what they
 * allocated with bpf_object__destroy_skeleton() on their error paths;
 * without this, each tool's skeleton open is a "potential leak".
 */
struct bpf_object_skeleton;
void bpf_object__destroy_skeleton(struct bpf_object_skeleton *s)
	__attribute__((ownership_takes(malloc, 1)));
