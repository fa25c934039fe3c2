// SPDX-License-Identifier: GPL-2.0
/*
 * window-mark begin|end: execute one mark of QEMU's vcpu-insns plugin
 * (tests/src/window-mark.h), for a window that a script times: make
 * bench's microbenchmark, which the kernel times itself. A NOP without the
 * plugin.
 */
#include <stdio.h>
#include <string.h>

#include "window-mark.h"

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "begin")) {
		window_begin();
	} else if (argc == 2 && !strcmp(argv[1], "end")) {
		window_end();
	} else {
		fprintf(stderr, "usage: window-mark begin|end\n");
		return 2;
	}
	return 0;
}
