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
LDLIBS    = -lm

# ISA levels: each is a complete build of the suite; the CPU decides which can run here.
ISA_scalar = -DDQ_NO_SIMD
ISA_sse2   = -msse2
ISA_avx2   = -mavx2
ISA_avx512 = -mavx512f
CPUFLAGS  := $(shell grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
ISAS       = scalar sse2 $(if $(findstring avx2,$(CPUFLAGS)),avx2) $(if $(findstring avx512f,$(CPUFLAGS)),avx512)
SKIPPED    = $(filter-out $(ISAS),scalar sse2 avx2 avx512)

HEADERS    = dqsgd.h dqsgd_simd.h
TEST_SRC   = $(wildcard tests/test_*.c)
TEST_NAMES = $(patsubst tests/%.c,%,$(TEST_SRC))
TEST_BINS  = $(foreach i,$(ISAS),$(foreach t,$(TEST_NAMES),$(BUILD)/$(t)_$(i)))
FUZZ_NAMES = decode roundtrip
REPLAY_BINS = $(addprefix $(BUILD)/replay_,$(FUZZ_NAMES))

ifeq ($(V),1)
Q =
else
Q = @
endif

.PHONY: all help deps test test-build cxx asan ubsan valgrind fuzz bench examples demo demo-data install uninstall clean

all: test-build examples ## build tests and examples

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 14

deps: ## install missing Debian packages (libsimde-dev; valgrind for `make valgrind`)
	@sh tools/deps.sh libsimde-dev:/usr/include/simde/x86/sse2.h

test: deps test-build cxx ## build and run every test once per ISA level the CPU runs, plus C++ builds
	@$(if $(SKIPPED),echo "note: this CPU cannot run ISA level(s): $(SKIPPED) (skipped)";)
	@sh tests/run_all.sh $(TEST_BINS) $(foreach f,$(FUZZ_NAMES),'$(BUILD)/replay_$(f) tests/fuzz/corpus/$(f)')

test-build: $(TEST_BINS) $(REPLAY_BINS)

# The fuzz targets replayed over their committed corpus without libFuzzer (tests/fuzz/replay.c).
$(BUILD)/replay_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c $(HEADERS) | $(BUILD)
	@echo "  CC  $@"
	$(Q)$(CC) $(ALLFLAGS) -march=native $< tests/fuzz/replay.c -o $@ $(LDLIBS)

SECONDS ?= 60
fuzz: deps | $(BUILD) ## run each libFuzzer target (clang, ASan+UBSan) for SECONDS (default 60)
	@sh tools/deps.sh clang:/usr/bin/clang
	$(Q)for f in $(FUZZ_NAMES); do \
	  clang $(STDFLAGS) -O1 -g -march=native -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -I. \
	    tests/fuzz/fuzz_$$f.c -o $(BUILD)/fuzz_$$f $(LDLIBS) || exit 1; \
	  mkdir -p $(BUILD)/corpus_$$f; \
	  echo "fuzz: $$f for $(SECONDS) s"; \
	  $(BUILD)/fuzz_$$f -max_total_time=$(SECONDS) -print_final_stats=1 $(BUILD)/corpus_$$f tests/fuzz/corpus/$$f \
	    > $(BUILD)/fuzz_$$f.log 2>&1; rc=$$?; \
	  grep -E 'stat::(number_of_executed_units|new_units_added)' $(BUILD)/fuzz_$$f.log; \
	  if [ $$rc -ne 0 ]; then tail -40 $(BUILD)/fuzz_$$f.log; echo "fuzz: $$f FAILED (log: $(BUILD)/fuzz_$$f.log)"; exit 1; fi; \
	done

define TEST_RULE
$(BUILD)/$(1)_$(2): tests/$(1).c tests/harness.h $(HEADERS) | $(BUILD)
	@echo "  CC  $$@"
	$(Q)$(CC) $(ALLFLAGS) $(ISA_$(2)) -DDQ_TEST_ISA='"$(2)"' $$< -o $$@ $(LDLIBS)
endef
$(foreach i,scalar sse2 avx2 avx512,$(foreach t,$(TEST_NAMES),$(eval $(call TEST_RULE,$(t),$(i)))))

cxx: $(HEADERS) tests/cxx_compile.cpp | $(BUILD) ## compile both headers as C++ with g++ and clang++ at every ISA
	@for cxx in g++ clang++; do command -v $$cxx >/dev/null || continue; \
	  for isa in "-DDQ_NO_SIMD" "-msse2" "-mavx2" "-mavx512f"; do \
	    echo "  CXX $$cxx $$isa"; \
	    $$cxx -std=c++11 -ffp-contract=off $(CXXWARN) -Werror $(CFLAGS) $$isa -I. -c tests/cxx_compile.cpp -o $(BUILD)/cxx.o || exit 1; \
	  done; done

SANFLAGS = -O1 -g -fno-omit-frame-pointer -fno-sanitize-recover=all
asan: deps | $(BUILD) ## run the suite (native ISA) under AddressSanitizer
	$(Q)for t in $(TEST_NAMES); do $(CC) $(STDFLAGS) $(WARNFLAGS) -Werror $(SANFLAGS) -fsanitize=address -march=native -I. \
	  -DDQ_TEST_ISA='"asan"' tests/$$t.c -o $(BUILD)/$${t}_asan $(LDLIBS) || exit 1; done
	@sh tests/run_all.sh $(addprefix $(BUILD)/,$(addsuffix _asan,$(TEST_NAMES)))

ubsan: deps | $(BUILD) ## run the suite (native ISA) under UndefinedBehaviorSanitizer
	$(Q)for t in $(TEST_NAMES); do $(CC) $(STDFLAGS) $(WARNFLAGS) -Werror $(SANFLAGS) -fsanitize=undefined -march=native -I. \
	  -DDQ_TEST_ISA='"ubsan"' tests/$$t.c -o $(BUILD)/$${t}_ubsan $(LDLIBS) || exit 1; done
	@sh tests/run_all.sh $(addprefix $(BUILD)/,$(addsuffix _ubsan,$(TEST_NAMES)))

# valgrind 3.19 cannot execute AVX-512, so memcheck runs the scalar and AVX2 builds.
VG_ISAS = scalar $(filter avx2,$(ISAS))
valgrind: test-build ## run the scalar and AVX2 suites under valgrind memcheck
	@sh tools/deps.sh valgrind:/usr/bin/valgrind
	@DQ_TEST_WRAPPER="valgrind -q --error-exitcode=99 --leak-check=full" sh tests/run_all.sh \
	  $(foreach i,$(VG_ISAS),$(foreach t,$(TEST_NAMES),$(BUILD)/$(t)_$(i)))

BENCH_ISAS = $(ISAS)
bench: deps | $(BUILD) ## run the throughput benchmark for every ISA level (ARGS=--csv for CSV)
	$(Q)for i in $(BENCH_ISAS); do \
	  case $$i in scalar) f=-DDQ_NO_SIMD;; sse2) f=-msse2;; avx2) f=-mavx2;; avx512) f=-mavx512f;; esac; \
	  $(CC) $(STDFLAGS) $(WARNFLAGS) -Werror -O2 $(MOREFLAGS) $$f -I. bench/bench.c -o $(BUILD)/bench_$$i $(LDLIBS) || exit 1; done
	@first=1; for i in $(BENCH_ISAS); do \
	  if [ $$first = 1 ]; then $(BUILD)/bench_$$i $(ARGS) || exit 1; first=0; \
	  else $(BUILD)/bench_$$i --no-header $(ARGS) || exit 1; fi; done

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
demo: deps $(BUILD)/trainer ## DQSGD vs fixed-bit QSGD on Fashion-MNIST: tables, plots in BUILD/demo (3-5 min)
	@BUILD='$(BUILD)' MAKE='$(MAKE)' FMNIST_SRC='$(FMNIST_SRC)' sh tools/demo.sh

demo-data: $(FMNIST) ## decompress Fashion-MNIST from FMNIST_SRC into BUILD/fashion-mnist

$(BUILD)/fashion-mnist/%: $(FMNIST_SRC)/%.gz
	@mkdir -p $(@D)
	@echo "  GZ  $@"
	$(Q)gzip -dc $< > $@.tmp && mv $@.tmp $@

$(BUILD):
	@mkdir -p $(BUILD)

install: ## install the headers and dqsgd.pc under DESTDIR/PREFIX
	install -d $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR)
	$(INSTALL_DATA) dqsgd.h dqsgd_simd.h $(DESTDIR)$(INCLUDEDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(shell sed -n 's/^#define DQSGD_VERSION_STRING "\(.*\)"/\1/p' dqsgd.h)|' \
	    dqsgd.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/dqsgd.pc

uninstall: ## remove what install put there
	rm -f $(DESTDIR)$(INCLUDEDIR)/dqsgd.h $(DESTDIR)$(INCLUDEDIR)/dqsgd_simd.h $(DESTDIR)$(PKGCONFIGDIR)/dqsgd.pc

clean: ## remove build outputs
	rm -rf $(BUILD)
