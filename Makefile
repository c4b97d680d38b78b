# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# opentoe: eBPF/XDP-assisted TCP offload.
#
#   make            build the eBPF objects, skeletons and user programs
#   make check      install what is missing, build, run every selftest (root)
#   make demo       install what is missing, build, run the demo (root)
#   make check-fresh  make check as a new machine runs it: a clean clone of
#                   HEAD, an empty cache (root; before saying a change works)
#   make check-guest  the datapath tests on Debian 12's 6.1 in a qemu guest (root)
#   make fuzz       differential parser fuzzing, 1,000,000 packets; the
#                   configuration and control-request parsers, 60 s each
#   make soak       toed under load for 60 s (root)
#   make model      the forward path's model-based test, long, on both hooks
#                   (root; MODEL_STEPS=200, MODEL_SEED=N replays a run)
#   make kmod       the kernel module against the running kernel (KDIR=)
#   make mutants    the mutation gate (root, long; MUTANTS=id,id for some), then 50
#                   mutants made by rule (MUTANT_SEED=N replays a sample)
#   make install    PREFIX=/usr/local DESTDIR=
#   make deb        the Debian package, build/deb/opentoe_VERSION_ARCH.deb

# CAPTURE=0: the datapath without toectl dump's capture (bpf/capture.h's
# calls compiled out; its maps stay, and toectl dump says there is no
# capture), built in its own folder; make bench-xdp CAPTURE=0 and
# make bench-forward CAPTURE=0 run on it, their results in
# bench/results-nocap, beside bench/results of the same benches with it.
CAPTURE  ?= 1
ifeq ($(CAPTURE),0)
O        ?= build-nocap
BENCH_ENV := BENCH_RESULTS=$(CURDIR)/bench/results-nocap
endif
O        ?= build
PREFIX   ?= /usr/local
DESTDIR  ?=
CLANG    ?= clang
CC       ?= gcc
BPFTOOL  ?= bpftool
ARCH     := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux

CFLAGS   ?= -O2 -g
# -MMD: every object records the headers it read (build/*.d), so a header
# change rebuilds exactly what uses it.
DEPFLAGS := -MMD -MP
CFLAGS   += -Wall -Wextra -Werror -Iinclude -Iuser -I$(O) $(DEPFLAGS)
# TEST_KNOBS=1 (the default: the tree's own build, which the selftests
# run): the fault-injection and test knobs of user/lib/knob.h compiled in.
# make install and the Debian package ship programs built with
# TEST_KNOBS=0, in which none of them exists.
TEST_KNOBS ?= 1
ifeq ($(TEST_KNOBS),1)
CFLAGS   += -DTOE_TEST_KNOBS
endif
LDLIBS   += -lbpf -lelf -lz
BPF_CFLAGS := -target bpf -O2 -g -Wall -Werror -D__TARGET_ARCH_$(ARCH) \
	      -Iinclude -Ibpf -I$(O) $(DEPFLAGS)
# BPF_EXTRA: more flags for the datapath's compile, for a benchmark's own
# build only (bench-forward STEPS=1: a step compiled out, TOE_BENCH_NO_*
# in bpf/stats.h, fwd_ct.h, forward.h; never a shipped build)
BPF_CFLAGS += $(BPF_EXTRA)
ifeq ($(CAPTURE),0)
BPF_CFLAGS += -DTOE_NO_CAPTURE
CFLAGS     += -DTOE_NO_CAPTURE
endif

# opentoe_kctx: the same datapath for kernels with bpf_cast_to_kern_ctx
# (6.3 on; toe-loader picks the object at load, skel.c)
BPF_OBJS  := $(O)/opentoe.bpf.o $(O)/opentoe_kctx.bpf.o
SKELS     := $(O)/opentoe.skel.h $(O)/opentoe_kctx.skel.h
PROGS     := $(O)/toe-loader $(O)/toed $(O)/toectl
# the man pages as make install installs them (below: their lists made)
MAN_PAGES := $(patsubst man/%,$(O)/man/%,$(wildcard man/*.8))
# user/ has one folder per program and one for what they share:
#   user/lib/     linked into all three, as $(O)/lib/libtoe.a
#   user/loader/  toe-loader (objects in $(O)/loader/)
#   user/toed/    toed (objects in $(O)/toed-objs/: $(O)/toed is the program)
#   user/toectl/  toectl (objects in $(O)/toectl-objs/)
LIB_OBJS  := $(patsubst user/lib/%.c,$(O)/lib/%.o,$(wildcard user/lib/*.c))
LIBTOE    := $(O)/lib/libtoe.a
TOED_OBJS := $(patsubst user/toed/%.c,$(O)/toed-objs/%.o,$(wildcard user/toed/*.c))
TOECTL_OBJS := $(patsubst user/toectl/%.c,$(O)/toectl-objs/%.o,$(wildcard user/toectl/*.c))
TEST_TOOLS := $(O)/selftests/toe_events $(O)/selftests/bypass_check $(O)/selftests/flowfill \
	$(O)/selftests/connstorm $(O)/selftests/cfg_limits $(O)/selftests/nl_feed \
	$(O)/selftests/nsrestrict
BENCH_TOOLS := $(O)/bench/connrate $(O)/bench/neighlat $(O)/bench/loadgen $(O)/bench/pktblast \
	       $(O)/bench/udpflow
FUZZERS   := $(O)/config/fuzz_config $(O)/ctl/fuzz_ctl

# make bench-NAME runs bench/bench_NAME.sh (see Benchmarks below)
BENCHES := policy xdp forward neigh hostflow bypass apply mem apps
# every make bench-* target: selftests/bench/test_bench_smoke.sh runs each
# in its smoke mode (make list-bench-targets prints them)
BENCH_TARGETS := $(addprefix bench-,$(BENCHES)) bench-parser bench-report
.PHONY: all progs deps check check-fresh check-guest demo fuzz soak kmod install deb clean bench list-bench-targets $(BENCH_TARGETS) bench-flowtable
.SECONDARY:
TEST_BPF  := $(patsubst selftests/progs/%.c,$(O)/selftests/%.o,$(wildcard selftests/progs/*.bpf.c))
# the reference forwarders make bench-xdp and make bench-forward run beside
# opentoe (bench/progs/min_fwd.h): benchmark code, never opentoe's
BENCH_BPF := $(patsubst bench/progs/%.c,$(O)/bench/%.o,$(wildcard bench/progs/*.bpf.c))

all: $(PROGS) $(TEST_BPF) $(BENCH_BPF) $(TEST_TOOLS) $(BENCH_TOOLS) $(FUZZERS) parser

# The three programs only (what make install and the Debian package need).
progs: $(PROGS)

$(O):
	@mkdir -p $@

# CO-RE: one vmlinux.h from the running kernel's BTF, made once.
$(O)/vmlinux.h: | $(O)
	@test -r $(VMLINUX_BTF) || { echo "no kernel BTF at $(VMLINUX_BTF)" >&2; exit 1; }
	$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@.tmp && mv $@.tmp $@

# The version, in one place: the file VERSION.  The programs' --version
# (through this header) and the Debian package's changelog (make deb) take it.
$(O)/toe_version.h: VERSION | $(O)
	printf '#ifndef __TOE_VERSION_H\n#define __TOE_VERSION_H\n#define OPENTOE_VERSION "%s"\n#endif /* __TOE_VERSION_H */\n' \
		"$$(cat VERSION)" > $@.tmp && mv $@.tmp $@

# The files that include it (-MMD knows them after their first build).
$(O)/lib/parse_rc.o $(O)/loader/main.o: $(O)/toe_version.h

$(O)/%.bpf.o: bpf/%.bpf.c $(O)/vmlinux.h | $(O)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# The datapath again, reading the namespace by plain loads (TOE_KERN_CTX:
# bpf/xdp.h, bpf/tc.h): a kfunc that 6.1 refuses and libbpf 1.1 cannot
# make optional, so a second object, not a branch in the first.
$(O)/opentoe_kctx.bpf.o: bpf/opentoe.bpf.c $(O)/vmlinux.h | $(O)
	$(CLANG) $(BPF_CFLAGS) -DTOE_KERN_CTX -c $< -o $@

$(O)/selftests/%.bpf.o: selftests/progs/%.bpf.c $(O)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(O)/%.skel.h: $(O)/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $* > $@.tmp && mv $@.tmp $@

# skel.c opens opentoe_kctx's image through opentoe's skeleton: the two
# must declare the same maps, programs and variables, in the same layout.
$(O)/opentoe_kctx.skel.h: $(O)/opentoe_kctx.bpf.o $(O)/opentoe.skel.h
	$(BPFTOOL) gen skeleton $< name opentoe_kctx > $@.tmp
	sed -n '/^struct opentoe {/,/^};/p' $(O)/opentoe.skel.h > $@.want
	sed -n '/^struct opentoe_kctx {/,/^};/p' $@.tmp | sed 's/opentoe_kctx/opentoe/g' | \
		cmp -s - $@.want || \
		{ echo "opentoe_kctx.bpf.o and opentoe.bpf.o differ in maps, programs or variables" >&2; \
		  rm -f $@.tmp $@.want; exit 1; }
	rm -f $@.want
	mv $@.tmp $@

$(O)/lib/%.o: user/lib/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(LIBTOE): $(LIB_OBJS)
	$(AR) rcs $@ $^

$(O)/toed-objs/%.o: user/toed/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(O)/toectl-objs/%.o: user/toectl/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# toed's metrics (user/toed/metrics.c): libmicrohttpd, and the version
# opentoe_build_info reports.
TOE_VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo unknown)
$(O)/toed-objs/metrics.o: CFLAGS += -DTOE_VERSION='"$(TOE_VERSION)"'

$(O)/toed: $(TOED_OBJS) $(LIBTOE)
	$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS) -lmicrohttpd -pthread

$(O)/toectl: $(TOECTL_OBJS) $(LIBTOE)
	$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

# libFuzzer + ASan + UBSan build of the configuration parser (toed's).  Its
# headers are recorded in fuzz-config.d: the fuzz_config.d of an older tree
# names user/config.c, now user/toed/config.c.
$(O)/config/fuzz_config: selftests/config/fuzz_config.c user/toed/config.c user/lib/netns.c user/lib/json.c
	@mkdir -p $(@D)
	$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		$(DEPFLAGS) -MF $(@D)/fuzz-config.d -Iinclude -Iuser \
		selftests/config/fuzz_config.c user/toed/config.c user/lib/netns.c user/lib/json.c -o $@

# libFuzzer + ASan + UBSan build of toed's control-request parser.
$(O)/ctl/fuzz_ctl: selftests/toed/fuzz_ctl.c user/toed/ctl_parse.c
	@mkdir -p $(@D)
	$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		$(DEPFLAGS) -Iuser -Iuser/toed selftests/toed/fuzz_ctl.c user/toed/ctl_parse.c -o $@

$(O)/bench/%.bpf.o: bench/progs/%.bpf.c $(O)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -Ibench/progs -c $< -o $@

$(O)/bench/%: bench/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< -o $@ $(LDLIBS)

$(O)/selftests/%: selftests/tools/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< -o $@ $(LDLIBS)

# toed's rtnetlink reader fed crafted messages: it compiles user/toed/neigh.c
# in (-MMD records it), and links what that needs of libtoe.
$(O)/selftests/nl_feed: selftests/tools/nl_feed.c $(LIBTOE)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< -o $@ $(LIBTOE) $(LDLIBS)

# toe-loader: user/loader/ (main.c: the subcommand table; see each file's
# header).  Every object waits for the skeleton, which skel.c and the
# subcommands that use the object include (an explicit prerequisite, not
# one of the pattern rule's).
LOADER_OBJS := $(patsubst user/loader/%.c,$(O)/loader/%.o,$(wildcard user/loader/*.c))

$(LOADER_OBJS) $(O)/toed-objs/tidpool.o: $(SKELS)

$(O)/loader/%.o: user/loader/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# libxdp: toe_xdp in libxdp's multi-program dispatcher (xdpdisp.c).
$(O)/toe-loader: $(LOADER_OBJS) $(LIBTOE)
	$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS) -lxdp

.PHONY: parser
parser: $(O)/vmlinux.h
	@if [ -f selftests/parser/Makefile ]; then \
		$(MAKE) --no-print-directory -C selftests/parser O=$(abspath $(O)); fi

deps:
	@sh scripts/install-deps.sh

# make check builds with one job a CPU (CHECK_JOBS): the build's rules
# are parallel-safe (make -j2 all is the developers' build), and the
# serial build was the part of make check nothing ran beside.
CHECK_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
check: deps
	@$(MAKE) --no-print-directory -j$(CHECK_JOBS) all
	@TOE_NO_BUILD=1 bash selftests/run.sh

# make check as a new machine runs it: a clean clone of HEAD, an empty
# cache, CI's entry point (scripts/check-fresh.sh): run it before saying a
# change works on a new machine.
check-fresh:
	@bash scripts/check-fresh.sh

# The datapath's tests on Debian 12's own kernel (6.1) in a qemu guest, all
# of selftests/guest/tests.txt (make check runs the part marked "check").
check-guest: deps
	@$(MAKE) --no-print-directory all
	@TOE_GUEST_ALL=1 TOE_GUEST_TIMEOUT=2400 TOE_TEST_TIMEOUT=2500 TOE_NO_BUILD=1 \
		bash selftests/run.sh selftests/guest/test_guest.sh

# The mutation gate: every mutant of selftests/mutants/mutants.txt must be
# caught by its tests; then (without MUTANTS) 50 mutants made by rule
# (selftests/mutants/gen.py: MUTANT_SEED replays a sample, MUTANT_SAMPLE
# sets its size), at least 90 % of them caught.  Not part of check (it
# builds and tests once a mutant).
.PHONY: mutants
mutants: all
	@MUTANTS="$(MUTANTS)" bash selftests/mutants/run.sh; rc=$$?; \
	if [ -z "$(MUTANTS)" ]; then python3 selftests/mutants/gen.py run || rc=1; fi; exit $$rc

# The control plane against its model, a long run (make check runs 20 steps):
# MODEL_STEPS steps (400), MODEL_SEED replays one (selftests/policy/test_ctl_model.sh).
.PHONY: model-ctl
model-ctl: all
	@TOE_MODEL_STEPS=$(or $(MODEL_STEPS),400) TOE_MODEL_SEED=$(MODEL_SEED) TOE_BUILD=$(abspath $(O)) TOE_NO_BUILD=1 bash selftests/run.sh selftests/policy/test_ctl_model.sh

demo: deps
	@$(MAKE) --no-print-directory all
	@bash scripts/demo.sh

# Benchmarks: ratios against a baseline run in the same invocation.
# bench-NAME runs bench/bench_NAME.sh; bench-parser lives with the parser.
# Each proves that every variant took the path it names, or prints no
# figure and fails (bench/lib.sh).  BENCH_SMOKE=1: one short round each,
# seconds (the figures mean nothing); BENCH_RESULTS=DIR: the CSVs there,
# not in bench/results.
# bench-apps fails when a server's data check does (a finding, not a
# broken benchmark): it runs last, and the report is made all the same.
bench: $(addprefix bench-,$(filter-out apps,$(BENCHES))) bench-parser
	@$(MAKE) --no-print-directory bench-apps; s=$$?; \
	$(MAKE) --no-print-directory bench-report; exit $$s

# Summary table of every comparison and a gnuplot SVG next to each CSV
# (of BENCH_RESULTS=DIR, if set: the folder the benches wrote into).
bench-report:
	@python3 bench/report.py $(BENCH_RESULTS)

list-bench-targets:
	@echo $(BENCH_TARGETS)

$(addprefix bench-,$(BENCHES)): bench-%: deps
	@$(MAKE) --no-print-directory all
	@TOE_BUILD=$(abspath $(O)) $(BENCH_ENV) bash bench/bench_$*.sh

bench-parser: $(O)/vmlinux.h
	@$(MAKE) --no-print-directory -C selftests/parser O=$(abspath $(O)) bench

# The router against nft's flowtable, in Debian 12's 6.1 kernel booted in
# qemu (this kernel has no nf_flow_table): measured under emulation (TCG),
# ratios only.  Tens of minutes: not in make bench, nor in BENCH_TARGETS
# (the bench smoke test gives each 150 s); BENCH_SMOKE=1 as the others.
bench-flowtable: deps
	@$(MAKE) --no-print-directory all
	@TOE_BUILD=$(abspath $(O)) bash bench/bench_flowtable.sh

fuzz: $(O)/vmlinux.h $(FUZZERS)
	@$(MAKE) --no-print-directory -C selftests/parser O=$(abspath $(O)) fuzz
	@TOE_CONFIG_FUZZ_SECONDS=60 bash selftests/run.sh selftests/config/test_config_fuzz.sh
	@TOE_CTL_FUZZ_SECONDS=60 bash selftests/run.sh selftests/toed/test_ctl_fuzz.sh

# toed under load for 60 s: 1,000 requests/s, 1,000 connections/s (root).
soak: all
	@TOE_SOAK_LONG=1 TOE_NO_BUILD=1 bash selftests/run.sh selftests/toed/test_soak.sh

# The forward path's model-based test (selftests/xdp/test_fwd_model.sh)
# with a long sequence, on XDP and on tc: MODEL_STEPS seeded random events
# (200: some 15 minutes a hook), MODEL_SEED=N to replay a run (a random
# seed otherwise, printed).  make check runs it short (4 steps).
MODEL_STEPS ?= 200
.PHONY: model
model: all
	@TOE_MODEL_STEPS=$(MODEL_STEPS) $(if $(MODEL_SEED),TOE_MODEL_SEED=$(MODEL_SEED)) \
		TOE_TEST_TIMEOUT=$$(($(MODEL_STEPS) * 10 + 120)) TOE_BUILD=$(abspath $(O)) TOE_NO_BUILD=1 \
		bash selftests/run.sh selftests/xdp/test_fwd_model.sh selftests/xdp/test_fwd_model_tc.sh

UNITDIR  ?= $(PREFIX)/lib/systemd/system

# The kernel module against the running kernel's headers (or KDIR=), into
# $(O)/kmod/kmod/opentoe.ko.  Where the headers are missing it says so and
# fails: the tests build it against Debian 12's 6.1 headers in a guest.
KDIR ?= /lib/modules/$(shell uname -r)/build
kmod:
	@if [ ! -e "$(KDIR)/Makefile" ]; then \
		echo "make kmod: no kernel headers at $(KDIR) (for the running kernel $$(uname -r));" >&2; \
		echo "  install them (Debian: apt-get install linux-headers-$$(uname -r)) or name a build tree with KDIR=" >&2; \
		exit 1; fi
	@# O= : our build folder is not the kernel's output folder (O= of Kbuild)
	$(MAKE) --no-print-directory -C kmod O= KDIR=$(KDIR) BUILD_DIR=$(abspath $(O))/kmod
	@echo "built $(O)/kmod/kmod/opentoe.ko for $$(modinfo -F vermagic $(O)/kmod/kmod/opentoe.ko | cut -d' ' -f1)"

# The Prometheus rules are installed when the tree has them.
PROM_RULES := dist/prometheus/opentoe-rules.yml

# The programs make install installs: built without the test knobs, in
# $(O)/dist when this build has them (a make of its own, so that a test
# build is never what gets installed).
ifeq ($(TEST_KNOBS),1)
DIST_PROGS := $(O)/dist/toe-loader $(O)/dist/toed $(O)/dist/toectl
.PHONY: dist-progs
$(DIST_PROGS): dist-progs ;
dist-progs:
	@$(MAKE) --no-print-directory O=$(O)/dist TEST_KNOBS=0 progs
else
DIST_PROGS := $(PROGS)
endif
install: $(DIST_PROGS) $(MAN_PAGES)
	install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(UNITDIR) \
		$(DESTDIR)$(PREFIX)/share/opentoe/trace $(DESTDIR)$(PREFIX)/share/man/man8
	install -m 0755 $(DIST_PROGS) $(DESTDIR)$(PREFIX)/sbin/
	install -m 0644 $(MAN_PAGES) $(DESTDIR)$(PREFIX)/share/man/man8/
	for u in toed opentoe-loader; do \
		sed 's|@SBINDIR@|$(PREFIX)/sbin|g' dist/$$u.service.in > $(DESTDIR)$(UNITDIR)/$$u.service; \
		chmod 0644 $(DESTDIR)$(UNITDIR)/$$u.service; done
	install -m 0755 scripts/trace/*.bt $(DESTDIR)$(PREFIX)/share/opentoe/trace/
	if [ -e $(PROM_RULES) ]; then \
		install -d $(DESTDIR)$(PREFIX)/share/opentoe/prometheus && \
		install -m 0644 $(PROM_RULES) $(DESTDIR)$(PREFIX)/share/opentoe/prometheus/; fi

# The Debian package, built by dpkg-buildpackage from a copy of the work
# tree (less what .gitignore names) in $(O)/deb/opentoe-VERSION/; the .deb, .buildinfo and .changes go
# to $(O)/deb/ (scripts/mkdeb.sh; needs debhelper, dpkg-dev: make deps).
deb:
	@sh scripts/mkdeb.sh $(O)

clean:
	rm -rf $(O)

# The headers each object read, recorded by -MMD at its last build.  Not
# toe-loader.d, toed.d and toectl.d: left by the single-file programs of
# older trees, they name user/toe-loader.c, user/toed.c and user/toectl.c,
# now gone; nor config/fuzz_config.d, which names user/config.c (now
# fuzz-config.d).  The other $(O)/*.d of objects an older tree built there
# (user/*.c, now in rooms) name targets nothing asks for: no harm.
-include $(filter-out $(O)/toe-loader.d $(O)/toed.d $(O)/toectl.d $(O)/config/fuzz_config.d,$(wildcard \
	$(O)/*.d $(O)/bench/*.d $(O)/selftests/*.d $(O)/config/*.d $(O)/ctl/*.d \
	$(O)/lib/*.d $(O)/loader/*.d $(O)/toed-objs/*.d $(O)/toectl-objs/*.d))

# toe-tables: every vocabulary table (include/'s, user/lib/ctl_cmds.h's)
# dumped as text or JSON (-j), for the scripts and tests that need the
# names (user/tables/toe-tables.c).  Not installed.
$(O)/toe-tables: user/tables/toe-tables.c $(LIBTOE) | $(O)
	$(CC) $(CFLAGS) -MF $(O)/toe-tables.d $< -o $@ $(LIBTOE)

# The man pages as installed: their lists made from the tables (a line
# '.\" toe-tables: ...' of man/*.8: toe-tables --man).
$(O)/man/%.8: man/%.8 $(O)/toe-tables
	@mkdir -p $(@D)
	$(O)/toe-tables --man $< > $@.tmp && mv $@.tmp $@
all: $(MAN_PAGES)

# The pinned maps' names and the toe_stats indexes for the shell tests and
# benches (selftests/lib.sh sources it), from toe-tables -j
# (scripts/gen-names.py).
$(O)/toe_names.sh: scripts/gen-names.py $(O)/toe-tables
	$(O)/toe-tables -j | python3 scripts/gen-names.py - > $@.tmp && mv $@.tmp $@
all: $(O)/toe-tables $(O)/toe_names.sh
