# dqsgd - header-only; this Makefile builds tests, benchmarks and examples, and installs headers.
# Variables follow the xxHash/zstd habit: CC, CFLAGS, MOREFLAGS, PREFIX, DESTDIR, V=1.

CC       ?= cc
CXX      ?= c++
CFLAGS   ?= -O2
BUILD    ?= build
PREFIX   ?= /usr/local
INCLUDEDIR   ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(PREFIX)/lib/pkgconfig
INSTALL_DATA ?= install -m 644

# Determinism needs IEEE float without contraction (see dqsgd.h).
STDFLAGS  = -std=c99 -ffp-contract=off
WARNFLAGS = -Wall -Wextra -Wpedantic -Wshadow -Wcast-qual -Wcast-align -Wstrict-prototypes \
            -Wmissing-prototypes -Wundef -Wpointer-arith -Wvla -Wformat=2 -Wwrite-strings \
            -Wconversion -Wsign-conversion -Wdouble-promotion -Wc++-compat
CXXWARN   = -Wall -Wextra -Wpedantic -Wshadow -Wcast-qual -Wcast-align -Wundef -Wpointer-arith \
            -Wformat=2 -Wwrite-strings -Wconversion -Wsign-conversion -Wdouble-promotion
ALLFLAGS  = $(STDFLAGS) $(WARNFLAGS) -Werror $(CFLAGS) $(MOREFLAGS) -I.
LDLIBS    = -lm -pthread # -pthread for tests/test_threads.c; harmless for the rest

# ISA levels: each is a complete build of the suite; the CPU decides which can run here.
ISA_scalar = -DDQ_NO_SIMD
ISA_sse2   = -msse2
ISA_avx2   = -mavx2
ISA_avx512 = -mavx512f
CPUFLAGS  := $(shell grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
ISAS       = scalar sse2 $(if $(findstring avx2,$(CPUFLAGS)),avx2) $(if $(findstring avx512f,$(CPUFLAGS)),avx512)
SKIPPED    = $(filter-out $(ISAS),scalar sse2 avx2 avx512)

HEADERS    = dqsgd.h dqsgd_simd.h
# Test binaries run this many at a time (tests/run_all.sh; scripts and multi-process runs alone).
DQ_TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
export DQ_TEST_JOBS
TEST_HDRS  = tests/harness.h tests/internals.h
TEST_SRC   = $(wildcard tests/test_*.c)
TEST_NAMES = $(patsubst tests/%.c,%,$(TEST_SRC))
TEST_BINS  = $(foreach i,$(ISAS),$(foreach t,$(TEST_NAMES),$(BUILD)/$(t)_$(i)))
# Arguments of a test binary wherever it is run: TEST_ARGS_<test name>. A run is passed to
# tests/run_all.sh as one quoted entry '$(BUILD)/<test>_<isa> <args>'.
TEST_ARGS_test_golden = tests/golden
FUZZ_NAMES = decode roundtrip simd ckpt coders index sparse sketch shared
REPLAY_BINS = $(addprefix $(BUILD)/replay_,$(FUZZ_NAMES))

ifeq ($(V),1)
Q =
else
Q = @
endif

.PHONY: all help headers deps test-names dist-deps dist-build test test-run check check-run test-build port port-build test-arm arm-build arm-auto cxx cxx-build sanitize matrix tsan clang-dep valgrind fuzz bench sizes examples demo demo-data install uninstall clean

all: test-build examples ## build tests and examples

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 14

# The shipped headers are generated from the library's parts under src/ (tools/amalgamate.sh);
# both are committed, and `make test` fails when they differ from what the parts give.
headers: ## regenerate dqsgd.h and dqsgd_simd.h from the parts under src/ (after editing a part)
	@sh tools/amalgamate.sh

deps: ## install missing Debian packages (libsimde-dev; valgrind for `make valgrind`)
	@sh tools/deps.sh libsimde-dev:/usr/include/simde/x86/sse2.h

# The distributed parts of `make check` (MPI ranks, the PyTorch hook) and their packages.
dist-deps: ## install OpenMPI, Debian's python3-torch and python3-numpy, and the Fashion-MNIST files
	@sh tools/deps.sh $(MPI_DEPS) $(HOOK_DEPS)
dist-build: mpi-build $(BUILD)/libdqsgd.so $(BUILD)/binding_ref
DIST_RUNS = $(foreach np,$(MPI_NP),'timeout 120 $(MPIRUN) $(MPIRUN_FLAGS) -np $(np) $(BUILD)/test_mpi') \
            'timeout 600 sh tests/mpi/trainer_identical.sh' 'timeout 300 sh tests/trainer/topk.sh'
# The PyTorch hook's tests are in both tiers: tests/hook/test_hook.py (2, 3 and 4 processes,
# 35-45 s), its state's options, statistics and checkpoints (tests/hook/test_state.py, resumed
# runs in new processes, 10-20 s), the Python package installed as doc/PYTHON.md says, with the
# same bytes from each of its kernel levels (tests/hook/test_install.sh, about 50 s of CPU: four
# compiles of dqsgd.h; under `make check` (INSTALL_TEST_ALL=1) also the doc's other claims, 20 s
# more) and the binding against the C library's results (tests/python/test_binding.py, 3 s).
HOOK_RUN = 'timeout 300 $(HOOK_PY) tests/hook/test_hook.py' 'timeout 300 $(HOOK_PY) tests/hook/test_state.py' \
           'timeout 300 $(HOOK_PY) tests/hook/test_sparse.py' \
           'timeout 300 sh tests/hook/test_install.sh' \
           'timeout 120 $(HOOK_PY) tests/python/test_binding.py $(BUILD)/binding_ref'

# Two tiers. `make test`: a first answer in a few minutes (the suite at the scalar reference and
# the widest ISA this CPU runs, the golden files, the fuzz corpora, C++ at that ISA, the README
# example, the documentation's links, the generated headers, the CMake package). `make check`:
# all of it and everything else (every ISA level, the portability builds and contraction audit,
# Arm under qemu, MPI at 2-4 ranks, the DDP hook, ASan + UBSan, ThreadSanitizer), in one run
# with one total; .ci/run runs it.
# `make test` builds its programs in groups (tests/group.sh: one program running several, the
# library compiled once per group, not once per program): GROUP_1 (the slowest tests, about half
# the run time) and GROUP_2, every other test, each at both quick ISA levels and run side by side,
# and BUILD/replays, every fuzz target over its corpus. `make check` builds and runs each test and
# replay on its own (at every level), as the other tiers do.
NATIVE_ISA  = $(lastword $(ISAS))
QUICK_ISAS  = scalar $(NATIVE_ISA)
GROUP_1     = test_coders test_optimizer test_rd test_quant test_simd
GROUP_2     = $(filter-out $(GROUP_1),$(TEST_NAMES))
GROUP_BINS  = $(foreach i,$(QUICK_ISAS),$(BUILD)/group1_$(i) $(BUILD)/group2_$(i)) $(BUILD)/replays
QUICK_BINS  = $(GROUP_BINS) $(foreach c,$(CXX_HAVE),$(BUILD)/cxx_$(c)_$(NATIVE_ISA))
REPLAY_RUNS = $(foreach f,$(FUZZ_NAMES),'$(BUILD)/replay_$(f) tests/fuzz/corpus/$(f)')
QUICK_RUNS  = $(GROUP_BINS) \
              $(foreach c,$(CXX_HAVE),$(BUILD)/cxx_$(c)_$(NATIVE_ISA)) 'sh tools/amalgamate.sh --check' 'sh tests/readme_example.sh' \
              'sh tests/doc_links.sh' $(CMAKE_RUN) $(HOOK_RUN)
CHECK_RUNS  = $(foreach i,$(ISAS),$(foreach t,$(TEST_NAMES),'$(strip $(BUILD)/$(t)_$(i) $(TEST_ARGS_$(t)))')) $(REPLAY_RUNS) \
              $(filter-out $(foreach c,$(CXX_HAVE),$(BUILD)/cxx_$(c)_$(NATIVE_ISA)),$(CXX_RUNS)) $(PORT_RUNS) \
              'sh tests/contraction_audit.sh' $(call vruns,sanitize) \
              $(foreach t,$(TSAN_TESTS),'$(strip $(BUILD)/tsan/$(t)_tsan $(TEST_ARGS_$(t)))') $(DIST_RUNS)


test-build: $(TEST_BINS) $(REPLAY_BINS)

# The fuzz targets replayed over their committed corpus without libFuzzer (tests/fuzz/replay.c).
$(BUILD)/replay_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c $(TEST_HDRS) $(HEADERS) | $(BUILD)
	@echo "  CC  $@"
	$(Q)$(CC) $(ALLFLAGS) -march=native $< tests/fuzz/replay.c -o $@ $(LDLIBS)

SECONDS ?= 60
# One target per fuzzer, so that make -j runs them side by side; each prints its lines at its end.
FUZZ_RUNS = $(addprefix fuzz-,$(FUZZ_NAMES))
.PHONY: fuzz $(FUZZ_RUNS)
fuzz: $(FUZZ_RUNS) ## run each libFuzzer target (clang, ASan+UBSan) for SECONDS (default 60); make -j2 runs two at once
$(FUZZ_RUNS): fuzz-%: deps clang-dep | $(BUILD)
	$(Q)clang $(STDFLAGS) -O1 -g -march=native -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -I. \
	  tests/fuzz/fuzz_$*.c -o $(BUILD)/fuzz_$* $(LDLIBS)
	@mkdir -p $(BUILD)/corpus_$*
	@$(BUILD)/fuzz_$* -max_total_time=$(SECONDS) -print_final_stats=1 $(BUILD)/corpus_$* tests/fuzz/corpus/$* \
	  > $(BUILD)/fuzz_$*.log 2>&1; rc=$$?; \
	  echo "fuzz: $* for $(SECONDS) s: $$(grep -E 'stat::(number_of_executed_units|new_units_added)' $(BUILD)/fuzz_$*.log | tr -s ' \n' ' ')"; \
	  if [ $$rc -ne 0 ]; then tail -40 $(BUILD)/fuzz_$*.log; echo "fuzz: $* FAILED (log: $(BUILD)/fuzz_$*.log)"; exit 1; fi

$(BUILD)/group%.c: tests/group.sh $(TEST_SRC) | $(BUILD)
	$(Q)sh tests/group.sh $(GROUP_$*) > $@.tmp && mv $@.tmp $@
FUZZ_SRC = $(addprefix tests/fuzz/fuzz_,$(addsuffix .c,$(FUZZ_NAMES))) tests/fuzz/replay.c
$(BUILD)/replays.c: tests/group.sh $(FUZZ_SRC) | $(BUILD)
	$(Q)sh tests/group.sh $(addprefix fuzz_,$(FUZZ_NAMES)) > $@.tmp && mv $@.tmp $@
$(BUILD)/replays: $(BUILD)/replays.c $(FUZZ_SRC) $(TEST_HDRS) $(HEADERS)
	@echo "  CC  $@"
	$(Q)$(CC) $(ALLFLAGS) -march=native $< -o $@ $(LDLIBS)
define GROUP_RULE
$(BUILD)/group$(1)_$(2): $(BUILD)/group$(1).c $(TEST_SRC) $(TEST_HDRS) $(HEADERS)
	@echo "  CC  $$@"
	$(Q)$(CC) $(ALLFLAGS) $(ISA_$(2)) -DDQ_TEST_ISA='"$(2)"' $$< -o $$@ $(LDLIBS)
endef
$(foreach i,scalar sse2 avx2 avx512,$(foreach g,1 2,$(eval $(call GROUP_RULE,$(g),$(i)))))

define TEST_RULE
$(BUILD)/$(1)_$(2): tests/$(1).c $(TEST_HDRS) $(HEADERS) | $(BUILD)
	@echo "  CC  $$@"
	$(Q)$(CC) $(ALLFLAGS) $(ISA_$(2)) -DDQ_TEST_ISA='"$(2)"' $$< -o $$@ $(LDLIBS)
endef
$(foreach i,scalar sse2 avx2 avx512,$(foreach t,$(TEST_NAMES),$(eval $(call TEST_RULE,$(t),$(i)))))

# Portability builds: the tests that compare bytes with frozen hashes and golden files, built
# for targets users build for and the ISA levels above miss, at each compiler's default
# contraction (no -ffp-contract flag): x86-64-v2 (SSE4.2 without AVX2: the CRC32C instruction
# path), and x86-64-v3 (FMA) with clang, which fuses a*b+c within one expression by default,
# and with gcc in ISO mode. BUILD/port/<test>_<variant>; run when the CPU has the flags.
PORT_TESTS    = test_quant test_golden test_coders test_sparse test_composed test_trunc test_sketch test_half test_schemes
PORT_VARIANTS = v2-gcc v2-clang v3-gcc v3-clang
PORT_CPU_v2   = $(and $(findstring sse4_2,$(CPUFLAGS)),$(findstring popcnt,$(CPUFLAGS)))
PORT_CPU_v3   = $(and $(findstring avx2,$(CPUFLAGS)),$(findstring fma,$(CPUFLAGS)),$(findstring bmi2,$(CPUFLAGS)))
PORT_RUNNABLE = $(foreach v,$(PORT_VARIANTS),$(if $(PORT_CPU_$(word 1,$(subst -, ,$(v)))),$(v)))
PORT_BINS     = $(foreach v,$(PORT_VARIANTS),$(foreach t,$(PORT_TESTS),$(BUILD)/port/$(t)_$(v)))
PORT_RUNS     = $(foreach v,$(PORT_RUNNABLE),$(foreach t,$(PORT_TESTS),'$(strip $(BUILD)/port/$(t)_$(v) $(TEST_ARGS_$(t)))'))
define PORT_RULE
$(BUILD)/port/$(1)_$(2): tests/$(1).c $(TEST_HDRS) $(HEADERS) | clang-dep
	@mkdir -p $$(@D)
	@echo "  CC  $$@"
	$(Q)$(word 2,$(subst -, ,$(2))) -std=c99 $(WARNFLAGS) -Werror -O2 $(MOREFLAGS) -march=x86-64-$(word 1,$(subst -, ,$(2))) \
	  -I. -DDQ_TEST_ISA='"$(2)"' $$< -o $$@ $(LDLIBS)
endef
$(foreach v,$(PORT_VARIANTS),$(foreach t,$(PORT_TESTS),$(eval $(call PORT_RULE,$(t),$(v)))))
port-build: $(PORT_BINS)
port: deps clang-dep port-build ## the portability builds (x86-64-v2; x86-64-v3 with clang and gcc at default contraction) and the contraction audit
	@sh tests/run_all.sh $(PORT_RUNS) 'sh tests/contraction_audit.sh'

# C++: both headers as C++11 with g++ and clang++ at every ISA level (warnings as errors), built
# into tests/cxx_run.cpp, a round-trip test; the levels this CPU runs are run (`make cxx`, and
# `make test` with the rest). A C++ compiler that is not installed is skipped with a note.
CXX_COMPILERS = g++ clang++
CXX_HAVE  := $(foreach c,$(CXX_COMPILERS),$(if $(shell command -v $(c) 2>/dev/null),$(c)))
CXX_BINS   = $(foreach c,$(CXX_HAVE),$(foreach i,scalar sse2 avx2 avx512,$(BUILD)/cxx_$(c)_$(i)))
CXX_RUNS   = $(foreach c,$(CXX_HAVE),$(foreach i,$(ISAS),$(BUILD)/cxx_$(c)_$(i)))
CXX_NOTE   = $(if $(filter-out $(CXX_HAVE),$(CXX_COMPILERS)),echo "note: $(filter-out $(CXX_HAVE),$(CXX_COMPILERS)) not installed: C++ build skipped";)
define CXX_RULE
$(BUILD)/cxx_$(1)_$(2): tests/cxx_run.cpp $(TEST_HDRS) $(HEADERS) | $(BUILD)
	@echo "  CXX $$@"
	$(Q)$(1) -std=c++11 -ffp-contract=off $(CXXWARN) -Werror $(CFLAGS) $(MOREFLAGS) $(ISA_$(2)) -DDQ_TEST_ISA='"$(1)-$(2)"' \
	  -I. $$< -o $$@ $(LDLIBS)
endef
$(foreach c,$(CXX_COMPILERS),$(foreach i,scalar sse2 avx2 avx512,$(eval $(call CXX_RULE,$(c),$(i)))))

cxx-build: $(CXX_BINS)

cxx: deps cxx-build ## build both headers as C++ (g++, clang++, every ISA) into a round-trip test and run it
	@$(CXX_NOTE)
	@sh tests/run_all.sh $(CXX_RUNS)

# Variant builds of the suite at the native ISA, one directory each under BUILD: `sanitize`
# (ASan + UBSan with CC) and the matrix gcc-O0 .. clang-O3 (compiler and -O level from the
# name). Each holds every tests/test_*.c (run with its TEST_ARGS_<name>) and every fuzz replay.
SANFLAGS = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
MATRIX   = gcc-O0 gcc-O3 clang-O0 clang-O2 clang-O3 # gcc -O2 is the default build of the test tiers
vcc      = $(if $(filter sanitize,$(1)),$(CC),$(word 1,$(subst -, ,$(1))))
vflags   = $(if $(filter sanitize,$(1)),$(SANFLAGS),-$(word 2,$(subst -, ,$(1))))
vbins    = $(foreach t,$(TEST_NAMES) $(addprefix replay_,$(FUZZ_NAMES)),$(BUILD)/$(1)/$(t)_$(1))
vruns    = $(foreach t,$(TEST_NAMES),'$(strip $(BUILD)/$(1)/$(t)_$(1) $(TEST_ARGS_$(t)))') \
           $(foreach f,$(FUZZ_NAMES),'$(BUILD)/$(1)/replay_$(f)_$(1) tests/fuzz/corpus/$(f)')
define VARIANT_RULE
$(BUILD)/$(1)/$(2)_$(1): $(3) $(4) $(TEST_HDRS) $(HEADERS) $(if $(findstring clang,$(1)),| clang-dep)
	@mkdir -p $$(@D)
	@echo "  CC  $$@"
	$(Q)$(call vcc,$(1)) $(STDFLAGS) $(WARNFLAGS) -Werror $(call vflags,$(1)) $(MOREFLAGS) -march=native -I. \
	  -DDQ_TEST_ISA='"$(1)"' $(3) $(4) -o $$@ $(LDLIBS)
endef
$(foreach v,sanitize $(MATRIX),$(foreach t,$(TEST_NAMES),$(eval $(call VARIANT_RULE,$(v),$(t),tests/$(t).c))) \
  $(foreach f,$(FUZZ_NAMES),$(eval $(call VARIANT_RULE,$(v),replay_$(f),tests/fuzz/fuzz_$(f).c,tests/fuzz/replay.c))))

clang-dep:
	@sh tools/deps.sh clang:/usr/bin/clang

sanitize: deps $(call vbins,sanitize) ## the suite and fuzz corpora (native ISA) under ASan + UBSan, in BUILD/sanitize
	@sh tests/run_all.sh $(call vruns,sanitize)

matrix: deps clang-dep $(foreach v,$(MATRIX),$(call vbins,$(v))) ## the suite (native ISA) by gcc and clang at -O0/-O2/-O3, in BUILD/<cc>-O<n>
	@sh tests/run_all.sh $(foreach v,$(MATRIX),$(call vruns,$(v)))

# ThreadSanitizer: the tests that start threads (TSAN_TESTS), native ISA, CC, in BUILD/tsan.
# The other suites are single-threaded: TSan could find nothing there, at 5-10 times their run
# time. halt_on_error: a race ends the run at its first report (exit 66, counted as a failure).
TSAN_TESTS = test_threads test_job
TSAN_BINS  = $(foreach t,$(TSAN_TESTS),$(BUILD)/tsan/$(t)_tsan)
$(TSAN_BINS): $(BUILD)/tsan/%_tsan: tests/%.c $(TEST_HDRS) $(HEADERS)
	@mkdir -p $(@D)
	@echo "  CC  $@"
	$(Q)$(CC) $(STDFLAGS) $(WARNFLAGS) -Werror -O1 -g -fno-omit-frame-pointer -fsanitize=thread $(MOREFLAGS) \
	  -march=native -I. -DDQ_TEST_ISA='"tsan"' $< -o $@ $(LDLIBS)

tsan: deps $(TSAN_BINS) ## the threaded tests (tests/test_threads.c, native ISA) under ThreadSanitizer, in BUILD/tsan
	@TSAN_OPTIONS="halt_on_error=1 $$TSAN_OPTIONS" sh tests/run_all.sh \
	  $(foreach t,$(TSAN_TESTS),'$(strip $(BUILD)/tsan/$(t)_tsan $(TEST_ARGS_$(t)))')

# Arm: every tests/test_*.c (with its TEST_ARGS_<name>) and tests/cxx_run.cpp cross-built for
# AArch64 (static, same warnings) at two levels, scalar (-DDQ_NO_SIMD) and neon (the SSE2
# kernels on native NEON through SIMDe), and run under qemu-aarch64; test_quant's frozen hashes
# prove the Arm bytes equal the x86 bytes. BUILD/arm/<name>_arm-<level> is a script running
# <name>_arm-<level>.elf under qemu. `make test-arm`, and part of `make test` unless ARM=0 or
# the tools cannot be installed (then skipped with a note). The cross compiler does not search
# /usr/include, so ARM_INC holds only a link to SIMDe.
ARM        ?= 1
ARM_CC      = aarch64-linux-gnu-gcc
ARM_CXX     = aarch64-linux-gnu-g++
ARM_QEMU    = qemu-aarch64
ARM_DEPS    = gcc-aarch64-linux-gnu:/usr/bin/aarch64-linux-gnu-gcc g++-aarch64-linux-gnu:/usr/bin/aarch64-linux-gnu-g++ \
              qemu-user:/usr/bin/qemu-aarch64
ARM_ISAS    = scalar neon
ARM_scalar  = -DDQ_NO_SIMD
ARM_neon    = -march=armv8-a
ARM_INC     = $(BUILD)/arm/include
ARM_NAMES   = $(TEST_NAMES) $(if $(wildcard tests/cxx_run.cpp),cxx_run)
ARM_RUNNERS = $(foreach i,$(ARM_ISAS),$(foreach t,$(ARM_NAMES),$(BUILD)/arm/$(t)_arm-$(i)))
ARM_RUNS    = $(foreach i,$(ARM_ISAS),$(foreach t,$(ARM_NAMES),'$(strip $(BUILD)/arm/$(t)_arm-$(i) $(TEST_ARGS_$(t)))'))
# `make test`: arm-auto installs the tools and builds, or writes why not to ARM_STATUS; ARM_PREP,
# the shell prefix of the run_all.sh line, puts the Arm runs in "$@" or prints that note.
ARM_STATUS  = $(BUILD)/arm/status
ARM_PREP    = set --; s=$$(cat $(ARM_STATUS) 2>/dev/null); \
  if [ "$$s" = ok ]; then set -- $(ARM_RUNS); else echo "$${s:-note: Arm build skipped: no $(ARM_STATUS)}"; fi;
define ARM_RULE
$(BUILD)/arm/$(1)_arm-$(2).elf: tests/$(1).c $(TEST_HDRS) $(HEADERS) | $(ARM_INC)/simde
	@echo "  CC  $$@"
	$(Q)$(ARM_CC) $(ALLFLAGS) -I$(ARM_INC) $(ARM_$(2)) -DDQ_TEST_ISA='"arm-$(2)"' -static $$< -o $$@ $(LDLIBS)
endef
$(foreach i,$(ARM_ISAS),$(foreach t,$(TEST_NAMES),$(eval $(call ARM_RULE,$(t),$(i)))))
$(BUILD)/arm/cxx_run_arm-%.elf: tests/cxx_run.cpp $(TEST_HDRS) $(HEADERS) | $(ARM_INC)/simde
	@echo "  CXX $@"
	$(Q)$(ARM_CXX) -std=c++11 -ffp-contract=off $(CXXWARN) -Werror $(CFLAGS) $(MOREFLAGS) $(ARM_$*) \
	  -DDQ_TEST_ISA='"arm-g++-$*"' -I. -I$(ARM_INC) -static $< -o $@ $(LDLIBS)
$(ARM_RUNNERS): %: %.elf
	$(Q)printf '#!/bin/sh\nexec $(ARM_QEMU) "$$0.elf" "$$@"\n' > $@ && chmod +x $@
$(ARM_INC)/simde:
	@mkdir -p $(@D)
	$(Q)ln -sfn /usr/include/simde $@

arm-build: $(ARM_RUNNERS)

arm-auto: deps
	@mkdir -p $(BUILD)/arm; if [ "$(ARM)" = 0 ]; then echo "note: Arm build skipped: ARM=0" > $(ARM_STATUS); \
	elif out=$$(sh tools/deps.sh $(ARM_DEPS) 2>&1); then [ -z "$$out" ] || printf '%s\n' "$$out"; echo ok > $(ARM_STATUS); \
	else echo "note: Arm build skipped: cannot install the cross tools: $$(printf '%s\n' "$$out" | tail -n 1)" > $(ARM_STATUS); fi
	@if [ "$$(cat $(ARM_STATUS) 2>/dev/null)" = ok ]; then $(MAKE) --no-print-directory arm-build; fi

test-arm: deps ## cross-build the suite for AArch64 (scalar, NEON) and run it under qemu-aarch64
	@sh tools/deps.sh $(ARM_DEPS)
	@$(MAKE) --no-print-directory arm-build
	@sh tests/run_all.sh $(ARM_RUNS)

# valgrind 3.19 cannot execute AVX-512, so memcheck runs the scalar and AVX2 builds.
VG_ISAS = scalar $(filter avx2,$(ISAS))
valgrind: test-build ## run the scalar and AVX2 suites under valgrind memcheck
	@sh tools/deps.sh valgrind:/usr/bin/valgrind
	@DQ_TEST_WRAPPER="valgrind -q --error-exitcode=99 --leak-check=full" sh tests/run_all.sh \
	  $(foreach i,$(VG_ISAS),$(foreach t,$(TEST_NAMES),'$(strip $(BUILD)/$(t)_$(i) $(TEST_ARGS_$(t)))'))

# The CMake package (CMakeLists.txt, cmake/): tests/cmake/test_cmake.sh builds a consumer by
# add_subdirectory, FetchContent and find_package after cmake --install, as C and C++ (about
# 25 s of CPU). cmake-deps installs Debian's cmake when missing; where it cannot, the test
# skips itself with a note.
CMAKE_RUN = 'sh tests/cmake/test_cmake.sh'
.PHONY: cmake-deps cmake-test
cmake-deps:
	@sh tools/deps.sh cmake:/usr/bin/cmake || echo "note: cmake could not be installed: the CMake package test is skipped"
cmake-test: cmake-deps ## the CMake package used by add_subdirectory, FetchContent and find_package, as C and C++ (tests/cmake)
	@sh tests/run_all.sh $(CMAKE_RUN)

# The test interface: tests/internals.h is the one file under tests/ and bench/ that names the
# headers' private identifiers (dq__, DQ__); the test tiers fail first when any other file does.
test-names: ## fail when a file under tests/ or bench/ other than tests/internals.h names a private dq__/DQ__ identifier
	@out=$$(grep -rnIiE '\bdq__' tests bench | grep -v '^tests/internals\.h:'); if [ -n "$$out" ]; then \
	  printf '%s\n' "$$out"; echo "test-names: private names in tests/ or bench/ (use the dqt_ names of tests/internals.h)"; exit 1; fi

# The two test tiers (variables above, by `test-build`); here, after every variable they use.
# Each tier installs its packages first (apt-get takes one caller at a time), then builds on
# JOBS cores (default: all) and runs DQ_TEST_JOBS test binaries at once.
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
test: deps hook-deps cmake-deps ## the quick tier: scalar and native-ISA suites, golden files, fuzz corpora, C++, the README example, the doc links, the generated headers, the CMake package, the DDP hook (a few minutes)
	@$(MAKE) --no-print-directory -j$(JOBS) test-run
test-run: test-names $(QUICK_BINS) $(BUILD)/libdqsgd.so $(BUILD)/binding_ref
	@$(CXX_NOTE)
	@DQSGD_LIB='$(abspath $(BUILD))/libdqsgd.so' sh tests/run_all.sh $(QUICK_RUNS)

check: deps hook-deps cmake-deps dist-deps clang-dep ## everything: every ISA level, portability builds, Arm under qemu, MPI (2-4 ranks), the DDP hook, sanitizers
	@$(MAKE) --no-print-directory -j$(JOBS) check-run
check-run: test-names test-build cxx-build port-build arm-auto dist-build $(call vbins,sanitize) $(TSAN_BINS)
	@$(if $(SKIPPED),echo "note: this CPU cannot run ISA level(s): $(SKIPPED) (skipped)";)
	@$(CXX_NOTE)
	@$(ARM_PREP) BUILD='$(BUILD)' MPIRUN='$(MPIRUN) $(MPIRUN_FLAGS)' DQSGD_LIB='$(abspath $(BUILD))/libdqsgd.so' \
	  TSAN_OPTIONS="halt_on_error=1 $$TSAN_OPTIONS" INSTALL_TEST_ALL=1 sh tests/run_all.sh $(filter-out $(GROUP_BINS),$(QUICK_RUNS)) $(CHECK_RUNS) "$$@"

BENCH_ISAS = $(ISAS)
bench: deps | $(BUILD) ## run the throughput benchmark for every ISA level (ARGS=--csv for CSV)
	$(Q)for i in $(BENCH_ISAS); do \
	  case $$i in scalar) f=-DDQ_NO_SIMD;; sse2) f=-msse2;; avx2) f=-mavx2;; avx512) f=-mavx512f;; esac; \
	  $(CC) $(STDFLAGS) $(WARNFLAGS) -Werror -O2 $(MOREFLAGS) $$f -I. bench/bench.c -o $(BUILD)/bench_$$i $(LDLIBS) || exit 1; done
	@first=1; for i in $(BENCH_ISAS); do \
	  if [ $$first = 1 ]; then $(BUILD)/bench_$$i $(ARGS) || exit 1; first=0; \
	  else $(BUILD)/bench_$$i --no-header $(ARGS) || exit 1; fi; done

sizes: deps | $(BUILD) ## coded message sizes (fixed, Elias, rANS, auto) against the codes' entropy (ARGS="--n N")
	$(Q)$(CC) $(STDFLAGS) $(WARNFLAGS) -Werror -O2 $(MOREFLAGS) -march=native -I. bench/sizes.c -o $(BUILD)/sizes $(LDLIBS)
	$(Q)$(BUILD)/sizes $(ARGS)

# This version's rows against another version's headers (bench/versus.c), alternated in one
# process, for every ISA level. On x86 both sides are assembled with no jump crossing or ending
# on a 32-byte boundary: on Intel cores whose microcode works around the JCC erratum, where the
# code fell moved rows of the same source by up to 30% between builds. VERSUS_ALIGN= turns that off.
VERSUS_ALIGN ?= $(if $(filter x86_64 i386 i686,$(shell uname -m)),$(if $(findstring clang,$(shell $(CC) --version 2>/dev/null)),-mbranches-within-32B-boundaries,-Wa$(COMMA)-mbranches-within-32B-boundaries))
COMMA := ,
bench-versus: deps | $(BUILD) ## this version against OLD=DIR (another version's dqsgd.h, dqsgd_simd.h): each row's speed ratio (ARGS="--n N --rounds R --only KERNEL --csv")
	@if [ -z "$(OLD)" ] || [ ! -f "$(OLD)/dqsgd.h" ] || [ ! -f "$(OLD)/dqsgd_simd.h" ]; then \
	  echo "bench-versus: OLD=DIR must hold the other version's dqsgd.h and dqsgd_simd.h"; exit 2; fi
	$(Q)first=1; for i in $(BENCH_ISAS); do \
	  case $$i in scalar) f=-DDQ_NO_SIMD;; sse2) f=-msse2;; avx2) f=-mavx2;; avx512) f=-mavx512f;; esac; \
	  fl="$(STDFLAGS) $(WARNFLAGS) -Werror -O2 $(MOREFLAGS) $(VERSUS_ALIGN) $$f"; \
	  $(CC) $$fl -I$(OLD) -Ibench -DVS_SIDE=vs_old -c bench/versus_side.c -o $(BUILD)/versus_old_$$i.o && \
	  $(CC) $$fl -I. -Ibench -DVS_SIDE=vs_new -c bench/versus_side.c -o $(BUILD)/versus_new_$$i.o && \
	  $(CC) $$fl -Ibench bench/versus.c $(BUILD)/versus_old_$$i.o $(BUILD)/versus_new_$$i.o -o $(BUILD)/versus_$$i $(LDLIBS) || exit 1; \
	  if [ $$first = 1 ]; then $(BUILD)/versus_$$i $(ARGS) || exit 1; first=0; \
	  else $(BUILD)/versus_$$i --no-header $(ARGS) || exit 1; fi; done

# One program per bench/<name>.c besides bench.c and sizes.c, built for the native ISA and run
# by `make bench-<name>` (ARGS passed on).
bench-index: ## sparse index coders (gamma, varint, bitmap, rice): bytes per index, encode/decode speed (ARGS="--n N")
bench-sparse: ## top-k, random-k, threshold, and top-k with quantized values: encode and decode-add GB/s against a memory pass, bits per element
bench-sketch: ## count sketch: accumulate GB/s and heavy-hitter recovery time
bench-half: ## fp16/bf16 input and output against the float32 path
bench-ratedist: ## rate-distortion table: bits per element against relative error, every scheme
bench-rd: ## the measured rate-distortion model (dq_rd_measure): its cost against an encode, its predictions against the encoder
# htscodecs (Debian libhtscodecs-dev) is an optional comparator: linked only when its header is there.
HTS_LIBS = $(if $(wildcard /usr/include/htscodecs/rANS_static4x16.h),-lhtscodecs)
bench-rans32: deps | $(BUILD) ## 32-way rANS chunk kernels vs the 8-way coder, memcpy, fixed decode (and htscodecs if installed), M sym/s (ARGS="--n N --reps R --bits B")
	$(Q)$(CC) $(STDFLAGS) $(WARNFLAGS) -Werror -O2 $(MOREFLAGS) -march=native -D_POSIX_C_SOURCE=199309L -I. bench/rans32.c -o $(BUILD)/bench_rans32 $(LDLIBS) $(HTS_LIBS)
	$(Q)$(BUILD)/bench_rans32 $(ARGS)
bench-threads: deps | $(BUILD) ## one message encoded (dq_job) and decoded by 2 threads: fixed vs rANS and default, G elements/s (ARGS="--n N --threads T")
	$(Q)$(CC) $(STDFLAGS) $(WARNFLAGS) -Werror -O2 $(MOREFLAGS) -march=native -I. bench/threads.c -o $(BUILD)/bench_threads $(LDLIBS)
	$(Q)$(BUILD)/bench_threads $(ARGS)
bench-%: deps | $(BUILD)
	$(Q)$(CC) $(STDFLAGS) $(WARNFLAGS) -Werror -O2 $(MOREFLAGS) -march=native -D_POSIX_C_SOURCE=199309L -I. bench/$*.c -o $(BUILD)/bench_$* $(LDLIBS)
	$(Q)$(BUILD)/bench_$* $(ARGS)

EXAMPLES = $(patsubst examples/%.c,$(BUILD)/%,$(wildcard examples/*.c))
examples: deps $(EXAMPLES) ## build the programs under examples/

$(BUILD)/%: examples/%.c $(HEADERS) | $(BUILD)
	@echo "  CC  $@"
	$(Q)$(CC) $(ALLFLAGS) -march=native $< -o $@ $(LDLIBS)

# The demo: DQSGD against fixed-bit QSGD on Fashion-MNIST (Debian package dataset-fashion-mnist,
# decompressed once into $(BUILD)/fashion-mnist). tools/demo.sh installs the packages, runs
# build/trainer for every scheme and seed, and prints tables; plots go to $(BUILD)/demo.
FMNIST_SRC ?= /usr/share/datasets/fashion-mnist
FMNIST     = $(addprefix $(BUILD)/fashion-mnist/,train-images-idx3-ubyte train-labels-idx1-ubyte \
             t10k-images-idx3-ubyte t10k-labels-idx1-ubyte)
demo: deps $(BUILD)/trainer ## DQSGD and rd vs fixed-bit QSGD on Fashion-MNIST: tables, plots in BUILD/demo (about 9 min)
	@BUILD='$(BUILD)' MAKE='$(MAKE)' FMNIST_SRC='$(FMNIST_SRC)' sh tools/demo.sh

demo-data: $(FMNIST) ## decompress Fashion-MNIST from FMNIST_SRC into BUILD/fashion-mnist

$(BUILD)/fashion-mnist/%: $(FMNIST_SRC)/%.gz
	@mkdir -p $(@D)
	@echo "  GZ  $@"
	$(Q)gzip -dc $< > $@.tmp && mv $@.tmp $@

# PyTorch DDP communication hook (python/): BUILD/libdqsgd.so is dqsgd.h with its public functions
# exported (python/dqsgd_capi.c), loaded through ctypes by python/dqsgd/__init__.py; built for this
# machine (-march=native), for the tests here: the installed package has one per kernel level
# (setup.py). Needs Debian's
# python3-torch and python3-numpy (HOOK_PY); `ddp` also needs dataset-fashion-mnist.
HOOK_PY ?= /usr/bin/python3
HOOK_DEPS = python3-torch:/usr/lib/python3/dist-packages/torch/__init__.py \
            python3-numpy:/usr/lib/python3/dist-packages/numpy/__init__.py \
            dataset-fashion-mnist:$(FMNIST_SRC)/train-images-idx3-ubyte.gz
.PHONY: hook-test hook-deps ddp
# the install test also needs what doc/PYTHON.md installs: venv (python3-venv: ensurepip, which
# venv checks for) and wheel; and the system's pip, whose refusal of --user the doc describes
PKG_DEPS = python3-venv:$(firstword $(wildcard /usr/lib/python3*/ensurepip/__init__.py) /usr/lib/python3/ensurepip) \
           python3-wheel:/usr/lib/python3/dist-packages/wheel/__init__.py \
           python3-pip:/usr/lib/python3/dist-packages/pip/__init__.py
hook-deps: ## install Debian's python3-torch, python3-numpy, venv, wheel and pip (the hook's tests, part of make test)
	@sh tools/deps.sh $(filter python3-%,$(HOOK_DEPS)) $(PKG_DEPS)
$(BUILD)/libdqsgd.so: python/dqsgd_capi.c $(HEADERS) | $(BUILD)
	@echo "  CC  $@"
	$(Q)$(CC) $(ALLFLAGS) -march=native -fPIC -shared $< -o $@ -lm
# tests/python/test_binding.py's reference: the calls the binding wraps, made in C
$(BUILD)/binding_ref: tests/python/binding_ref.c $(HEADERS) | $(BUILD)
	@echo "  CC  $@"
	$(Q)$(CC) $(ALLFLAGS) -march=native $< -o $@ -lm
hook-test: deps hook-deps $(BUILD)/libdqsgd.so $(BUILD)/binding_ref ## tests of the DDP hook (2, 3 and 4 processes), the ctypes binding and the package's offline install (about 1 min)
	@DQSGD_LIB=$(abspath $(BUILD))/libdqsgd.so sh tests/run_all.sh $(HOOK_RUN)
ddp: deps dist-deps $(BUILD)/libdqsgd.so demo-data ## DDP MLP on Fashion-MNIST: dqsgd hooks vs fp16 and PowerSGD (ARGS="--steps N", 2-4 min)
	$(Q)DQSGD_LIB=$(abspath $(BUILD))/libdqsgd.so $(HOOK_PY) python/train_ddp.py --data $(BUILD)/fashion-mnist $(ARGS)
# `ddp-link`: the CNN over a loopback shaped by tc in a network namespace of its own (root), for
# plain DDP, fp16, PowerSGD and dqsgd; tools/ddp_link.sh says what the variables do. Its pure
# parts (method names, byte counting, the report, the script's checks) are tested in both tiers.
.PHONY: ddp-link
LINK_RUN = 'timeout 120 $(HOOK_PY) tests/ddp_link/test_ddp_link.py'
QUICK_RUNS += $(LINK_RUN)
ddp-link: deps dist-deps $(BUILD)/libdqsgd.so demo-data ## DDP CNN over a shaped link (root): ms/step, bytes, time to accuracy; tables and plot in BUILD/ddp-link (QUICK=1: minutes; full: hours; METHODS RATES WORLDS SEEDS STEPS ARGS)
	@sh tools/deps.sh iproute2:/usr/sbin/tc gnuplot-nox:/usr/bin/gnuplot
	$(Q)BUILD='$(BUILD)' HOOK_PY='$(HOOK_PY)' DQSGD_LIB='$(abspath $(BUILD))/libdqsgd.so' QUICK='$(QUICK)' \
	  METHODS='$(METHODS)' RATES='$(RATES)' WORLDS='$(WORLDS)' SEEDS='$(SEEDS)' STEPS='$(STEPS)' ARGS='$(ARGS)' \
	  sh tools/ddp_link.sh

# MPI (optional; doc/DISTRIBUTED.md): dqsgd_mpi.h, the MPI trainer examples/mpi/mpi_trainer.c and the
# tests tests/mpi/, built with MPICC (OpenMPI's mpicc: Debian openmpi-bin, libopenmpi-dev) and run
# on this machine with MPIRUN. More ranks than cores need --oversubscribe; as root OpenMPI also
# wants --allow-run-as-root (MPIRUN_FLAGS). `mpi-test`: tests/mpi/test_mpi.c with 2, 3 and 4
# ranks, then tests/mpi/trainer_identical.sh (allgather = trainer --workers 4, bit for bit;
# sra and shared train). `mpi-train`: the three patterns at M = 2, 4 and b = 4, 8 (a table).
MPICC        ?= mpicc
MPIRUN       ?= mpirun
MPIRUN_FLAGS ?= --oversubscribe $(if $(filter 0,$(shell id -u)),--allow-run-as-root)
MPI_NP       ?= 2 3 4
MPI_DEPS      = openmpi-bin:/usr/bin/mpirun.openmpi \
                libopenmpi-dev:/usr/lib/$(shell $(CC) -dumpmachine)/openmpi/include/mpi.h \
                dataset-fashion-mnist:$(FMNIST_SRC)/train-images-idx3-ubyte.gz
MPI_HDRS      = dqsgd_mpi.h $(HEADERS)
.PHONY: mpi-build mpi-test mpi-train
$(BUILD)/trainer: examples/fmnist.h
$(BUILD)/mpi_trainer: examples/mpi/mpi_trainer.c examples/fmnist.h $(MPI_HDRS) | $(BUILD)
	@echo "  MPICC $@"
	$(Q)$(MPICC) $(ALLFLAGS) -march=native $< -o $@ -lm
$(BUILD)/test_mpi: tests/mpi/test_mpi.c $(MPI_HDRS) | $(BUILD)
	@echo "  MPICC $@"
	$(Q)$(MPICC) $(ALLFLAGS) -march=native $< -o $@ -lm
mpi-build: $(BUILD)/test_mpi $(BUILD)/mpi_trainer $(BUILD)/trainer demo-data
mpi-test: deps dist-deps ## MPI patterns: tests/mpi with 2, 3, 4 ranks and the trainer identity (OpenMPI, 1-2 min)
	@$(MAKE) --no-print-directory mpi-build
	@fail=0; for np in $(MPI_NP); do \
	  echo "mpi-test: $$np ranks"; \
	  timeout 120 $(MPIRUN) $(MPIRUN_FLAGS) -np $$np $(BUILD)/test_mpi || { echo "mpi-test: $$np ranks FAILED"; fail=1; }; \
	done; \
	BUILD='$(BUILD)' MPIRUN='$(MPIRUN) $(MPIRUN_FLAGS)' timeout 600 sh tests/mpi/trainer_identical.sh || fail=1; \
	exit $$fail
mpi-train: deps dist-deps ## MPI trainer: allgather, sra, shared at M = 2, 4 and b = 4, 8: accuracy and bytes per worker per step (STEPS=300)
	@$(MAKE) --no-print-directory mpi-build
	@BUILD='$(BUILD)' MPIRUN='$(MPIRUN) $(MPIRUN_FLAGS)' STEPS='$(STEPS)' sh examples/mpi/train_table.sh

$(BUILD):
	@mkdir -p $(BUILD)

install: ## install the headers (dqsgd_mpi.h too: optional, for MPI users) and dqsgd.pc under DESTDIR/PREFIX
	install -d $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR)
	$(INSTALL_DATA) dqsgd.h dqsgd_simd.h dqsgd_mpi.h $(DESTDIR)$(INCLUDEDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(shell sed -n 's/^#define DQSGD_VERSION_STRING "\(.*\)"/\1/p' dqsgd.h)|' \
	    dqsgd.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/dqsgd.pc

uninstall: ## remove what install put there
	rm -f $(DESTDIR)$(INCLUDEDIR)/dqsgd.h $(DESTDIR)$(INCLUDEDIR)/dqsgd_simd.h $(DESTDIR)$(INCLUDEDIR)/dqsgd_mpi.h \
	      $(DESTDIR)$(PKGCONFIGDIR)/dqsgd.pc

clean: ## remove build outputs
	rm -rf $(BUILD)
