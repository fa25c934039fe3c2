# SPDX-License-Identifier: GPL-2.0
#
# Rust port of the block layer's per-CPU bio cache, on Debian's
# linux-source-6.12. See README.md.
#
#   make            build both variants, boot them, run the polled-IO
#                   workload, print the results
#   make test       build, boot and run the whole test suite; the last line
#                   is "N passed, N failed"
#   make help       every other target

# The one place the upstream version is pinned. scripts/prepare-tree.sh
# refuses an installed linux-source-6.12 of any other version.
KVER := 6.12.118

BUILD ?= $(CURDIR)/build
SRC ?= $(BUILD)/linux
VARIANTS ?= c rust
VARIANT ?= rust
# make test adds the debug variant: the Rust cache under KASAN, lockdep,
# kmemleak and slab debugging.
TEST_VARIANTS ?= $(VARIANTS) rust-debug
# CPU offline/online cycles of make soak.
CYCLES ?= 10000
JOBS ?= $(shell echo $$(($$(nproc) + 1)))

export KVER BUILD SRC JOBS VARIANTS T V ACCEL SMP DISTRO FORCE

S := $(CURDIR)/scripts
comma := ,

KERNEL_TARGETS := $(addprefix kernel-,c rust c-debug rust-debug c-bench rust-bench c-distro \
	rust-distro c-distro-bench rust-distro-bench)

.PHONY: export tree-exists all test test-debug soak mutants docs kunit check bisect series bench codegen deps tree kernels initramfs workload shell \
	test-distro reset-tree clean distclean help $(KERNEL_TARGETS)

all: deps tree kernels initramfs
	@$(S)/workload.sh $(VARIANTS)

# The first variant is built here, each of the others while the previous
# one's guests run, and the style checks run during the last one's
# (BUILD_AHEAD in scripts/test.sh). T= alone runs on $(VARIANTS), not on
# the debug variant, the costliest build (TEST_VARIANTS=... widens it), and
# only on the variants where one of its tests runs (test.sh --variants).
T_ALONE = $(and $(T),$(filter file,$(origin TEST_VARIANTS)))
test: deps tree initramfs
	@$(if $(T_ALONE),echo '    T=$(T) on $(VARIANTS) only (TEST_VARIANTS="$(TEST_VARIANTS)" for more)' >&2;) \
	v=$$($(S)/test.sh --variants $(if $(T_ALONE),$(VARIANTS),$(TEST_VARIANTS))) && \
	$(S)/build-kernel.sh $${v%% *} && BUILD_AHEAD=1 $(S)/test.sh $$v

# The C cache under the same checkers as rust-debug (KASAN, lockdep,
# kmemleak, slab debugging), through the same tests: c-debug. Not part of
# make test, whose budget it would overrun (see README).
DEBUG_VARIANTS ?= c-debug
test-debug: deps tree initramfs
	@$(S)/build-kernel.sh $(firstword $(DEBUG_VARIANTS))
	@BUILD_AHEAD=1 CHECKS=0 $(S)/test.sh $(DEBUG_VARIANTS)

# The distro-shaped pair (Debian's config, either cache) through the default
# boot profile's tests; not part of make test.
DISTRO_VARIANTS ?= c-distro rust-distro
test-distro: deps tree initramfs
	@for v in $(DISTRO_VARIANTS); do $(S)/build-kernel.sh $$v || exit 1; done
	@T=$$($(S)/test.sh --list default) CHECKS=0 $(S)/test.sh $(DISTRO_VARIANTS)

# The stress test alone, CYCLES hotplug cycles long (make soak VARIANT=c),
# under 6.19's rule (bio_alloc_cache=all), so that ext4's bios go through
# the cache with the other streams'; its run in $(BUILD)/soak, apart from
# make test's. The test's timeout grows with CYCLES, the time a stream may
# stall does not. scripts/record.sh soak VARIANT records what it measured.
soak: deps tree kernel-$(VARIANT) initramfs
	@$(S)/soak.sh $(VARIANT) $(CYCLES)

# Each of the cache's historical bugs put back, one at a time (tests/mutants),
# built incrementally and run against the tests that must catch it: a table,
# $(BUILD)/mutants/table.md. Not part of make test. M=a,b: only those.
mutants: deps tree initramfs
	@$(S)/mutants.sh $(subst $(comma), ,$(M))

# The KUnit suite through the kernel's own runner, kunit.py, with the
# series' block/.kunitconfig (VARIANT=c or rust: which cache). Not part of
# make test, which runs the same suite at every boot.
kunit: deps tree
	@$(S)/kunit.sh $(if $(filter c,$(VARIANT)),c,rust)

# The series built at each of its patches, rust and (where a patch touches
# C) c, incrementally in $(BUILD)/bisect: "N of N patches build"; FIRST=k
# and LAST=m for patches k..m. Not part of make test: from cold folders it
# takes hours (docs/testing.md#make-bisect, with each recorded run's time).
bisect: deps tree
	@$(S)/bisect.sh $(or $(FIRST),1) $(LAST)

# checkpatch --strict, rustfmt, clippy, rustdoc and git am of the series
# (part of `make test`).
check: deps tree kernel-rust
	@$(S)/check.sh && python3 $(S)/ktap-summary.py $(BUILD)/runs/check/style

# The whole series as git format-patch files with a cover letter, in
# $(BUILD)/series, checked with git am on a pristine tree; To: and Cc: from
# the tree's get_maintainer.pl, base-commit: the pristine tree's. UPSTREAM=1:
# only the fixes of mainline code that patches/upstream lists, a series of
# their own on the pristine tree, in $(BUILD)/series-upstream.
series: tree
	@UPSTREAM='$(UPSTREAM)' $(S)/series.sh

# Guest instructions per IO and per bio alloc + put pair, C against Rust
# against no cache, under QEMU -icount: a table, $(BUILD)/bench.json and
# $(BUILD)/bench.svg. It fails if a boot's smoke test (verified IO on the
# kernel without statistics) fails, if a window was not counted, or if the
# witness was not flagged; a flagged figure is marked wherever it is used,
# never read as a figure. DISTRO=1:
# the same on the distro-shaped kernels (Debian's config), in
# $(BUILD)/bench-distro.json and .svg; likewise for make codegen.
bench: deps tree
	@$(S)/bench.sh

# The machine code of each path of both caches, side by side, and
# bloat-o-meter: $(BUILD)/codegen/ and $(BUILD)/codegen.md.
codegen: deps tree
	@$(S)/codegen.sh

# The results tables of README.md and docs/, and the charts in docs/*.svg,
# rendered from results/ (which scripts/record.sh fills from the runs
# above); make check fails if one differs from its rendering.
docs:
	@python3 $(S)/render-docs.py && python3 $(S)/chart.py

deps:
	@$(S)/deps.sh

tree: deps
	@$(S)/prepare-tree.sh

# Kernel builds run one after the other, never in parallel: each one
# already uses every core.
kernels: tree
	@for v in $(VARIANTS); do $(S)/build-kernel.sh $$v || exit 1; done

# A static pattern rule: make looks for no implicit rule for a phony target.
$(KERNEL_TARGETS): kernel-%: tree
	@$(S)/build-kernel.sh $*

initramfs: tree
	@$(S)/mkinitramfs.sh

workload:
	@$(S)/workload.sh $(VARIANTS)

# An interactive guest: make shell VARIANT=c. CMDLINE="..." is added to
# the kernel command line; SHARE=DIR is the host folder DIR at /mnt/share
# in the guest, copied back when the guest powers off.
shell: kernel-$(VARIANT) initramfs
	@$(S)/run-guest.sh -i -n shell $(if $(CMDLINE),-a '$(subst ','\'',$(CMDLINE))') \
		$(if $(SHARE),-s '$(subst ','\'',$(abspath $(SHARE)))') $(VARIANT)

# The commits on top of "base" in the kernel tree back into patches/ (and
# the files of .files sidecars into rust/ and c-glue/).
export: tree-exists
	@$(S)/export-series.sh

tree-exists:
	@[ -d $(SRC)/.git ] || { echo "error: no kernel tree in $(SRC): run make tree" >&2; exit 1; }

# Throw away local edits in the kernel tree and re-apply the series.
reset-tree:
	@git -C $(SRC) reset -q --hard && git -C $(SRC) clean -qfdx && \
		git -C $(SRC) rev-parse HEAD > $(SRC)/.git/biocache-applied && \
		$(S)/prepare-tree.sh

# Remove build outputs and guest runs; keep the tree and the O= folders.
clean:
	rm -rf $(BUILD)/runs $(BUILD)/initramfs $(BUILD)/initramfs.cpio $(BUILD)/logs

distclean:
	rm -rf $(BUILD)

help:
	@python3 $(S)/help.py
