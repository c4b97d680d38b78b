/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Fault injection and test knobs: environment variables the selftests set
 * to make a program fail at a chosen step, hide a kernel feature, sleep,
 * or take its BTF from a file.  Compiled in only for the test build (make
 * with TEST_KNOBS=1, the default for the tree's own build/, as the kernel
 * has CONFIG_FAULT_INJECTION): the programs make install and the Debian
 * package ship are built with TEST_KNOBS=0, where toe_knob() is NULL and
 * the variable's name is not in the binary (selftests/deb/test_deb.sh
 * looks for each name in the packaged programs).  Never for what an
 * operator may set (TOE_DEBUG, libxdp's LIBXDP_*).
 */
#ifndef __TOE_LIB_KNOB_H
#define __TOE_LIB_KNOB_H

#include <stdlib.h>

#ifdef TOE_TEST_KNOBS
#define toe_knob(name) ((const char *)getenv(name))
#else
#define toe_knob(name) ((void)sizeof(name), (const char *)NULL)
#endif

#endif /* __TOE_LIB_KNOB_H */
