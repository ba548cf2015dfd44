# make <stage> | all | test | clean
#   make 01_matmul_add && ./run        build one stage, then run it
#   make test                          CPU tests everywhere, GPU tests where a GPU is present
#   make CUDA_ARCH="-gencode arch=compute_90,code=sm_90" all    one architecture only
#
# Host code is C11 built by the C compiler; kernels are .cu files built by nvcc and exported
# with C linkage; the program is linked by the C compiler against the CUDA runtime, cuBLAS,
# cuBLASLt and CUPTI. NVTX is header-only (nvtx3), so there is no -lnvToolsExt.

STAGES := 01_matmul_add 02_linear 03_simple_mlp 04_fused_mlp
BUILT_STAGES := $(foreach s,$(STAGES),$(if $(wildcard $(s)/main.c),$(s)))

# CUDA location: CUDA_HOME if set, else the directory above the nvcc on PATH.
NVCC_PATH := $(shell command -v nvcc 2>/dev/null)
CUDA_HOME ?= $(if $(NVCC_PATH),$(patsubst %/bin/,%,$(dir $(realpath $(NVCC_PATH)))),/usr/local/cuda)
NVCC := $(CUDA_HOME)/bin/nvcc

# One fat binary: A100 (sm_80) and H100/H200 (sm_90) machine code, plus PTX for newer GPUs.
CUDA_ARCH ?= -gencode arch=compute_80,code=sm_80 \
             -gencode arch=compute_90,code=sm_90 \
             -gencode arch=compute_90,code=compute_90

CUDA_INC := -I$(CUDA_HOME)/include -I$(CUDA_HOME)/extras/CUPTI/include
CUDA_LIBDIRS := $(CUDA_HOME)/lib64 $(CUDA_HOME)/lib $(CUDA_HOME)/extras/CUPTI/lib64
CUDA_LIBS := $(foreach d,$(CUDA_LIBDIRS),-L$(d) -Wl,-rpath,$(d)) \
             -lcublasLt -lcublas -lcupti -lcudart -lstdc++ -lm -ldl -lpthread

CC ?= cc
CFLAGS ?= -O2 -g
CFLAGS += -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -Wshadow -Wno-missing-field-initializers
CPPFLAGS += -Icommon $(CUDA_INC)
NVCCFLAGS ?= -O3 -lineinfo
NVCCFLAGS += $(CUDA_ARCH) -std=c++17 -Icommon --Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror

# SAN=1: AddressSanitizer and UndefinedBehaviorSanitizer on host code (CPU tests).
ifeq ($(SAN),1)
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=address,undefined
endif

BUILD := build
COMMON_C := $(wildcard common/*.c common/profiler/*.c)
COMMON_CU := $(wildcard common/*.cu common/profiler/*.cu)
COMMON_OBJ := $(COMMON_C:%.c=$(BUILD)/%.o) $(COMMON_CU:%.cu=$(BUILD)/%.cu.o)

# Builds use every CPU unless a -j is given (make -j 1 for one job at a time).
ifeq ($(filter -j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)
endif

.PHONY: all test test-full test-cpu sanitize clean ceilings fuzz $(STAGES)
.DEFAULT_GOAL := all
# keep object files of tests between runs
.SECONDARY:

all: $(BUILT_STAGES) bin/ceilings bin/decode_timeline

# A stage's objects: every .c and .cu in its directory.
stage_obj = $(patsubst %.c,$(BUILD)/%.o,$(wildcard $(1)/*.c)) $(patsubst %.cu,$(BUILD)/%.cu.o,$(wildcard $(1)/*.cu))
# A stage's code without its main, for stages, tests and bench programs that build on it.
stage_lib = $(filter-out $(BUILD)/$(1)/main.o,$(call stage_obj,$(1)))
# 04_fused_mlp climbs from 03_simple_mlp's eager forward, which is in 03's main.c: it links that
# object with its main() made local (objcopy), so both stages run the same code, not a copy.
OBJCOPY ?= objcopy
$(BUILD)/03_simple_mlp/main_lib.o: $(BUILD)/03_simple_mlp/main.o
	$(OBJCOPY) --localize-symbol=main $< $@
STAGE_DEPS_04_fused_mlp := $(call stage_lib,03_simple_mlp) $(BUILD)/03_simple_mlp/main_lib.o

# 04's GEMM with the GeGLU epilogue also carries Hopper's wgmma path (sm_90a machine code);
# it dispatches at run time, so the same binary still runs on sm_80.
$(BUILD)/04_fused_mlp/gemm_geglu.cu.o: NVCCFLAGS += -gencode arch=compute_90a,code=sm_90a
# Its numbered versions and the instruction wrappers the decode kernels share.
$(BUILD)/04_fused_mlp/gemm_geglu.cu.o $(BUILD)/04_fused_mlp/decode.cu.o: $(wildcard 04_fused_mlp/gemm/*.cuh)

# Each stage: bin/<stage>, and .last_stage remembers it for ./run.
define stage_rule
$(1): bin/$(1)
	@echo $(1) > .last_stage
bin/$(1): $(call stage_obj,$(1)) $(STAGE_DEPS_$(1)) $(COMMON_OBJ) | bin
	$$(CC) $$(LDFLAGS) -o $$@ $$^ $$(CUDA_LIBS)
endef
$(foreach s,$(BUILT_STAGES),$(eval $(call stage_rule,$(s))))

$(BUILD)/%.o: %.c $(wildcard common/*.h common/profiler/*.h) $(wildcard */*.h) | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/%.cu.o: %.cu $(wildcard common/*.h common/profiler/*.h) $(wildcard */*.h) $(wildcard */*.cuh) | $(BUILD)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -c -o $@ $<

# bench/ceilings: the GEMM and copy ceilings of this GPU, the reference of every report.
ceilings: bin/ceilings
bin/ceilings: $(BUILD)/bench/ceilings.o $(BUILD)/bench/empty_kernel.cu.o $(COMMON_OBJ) | bin
	$(CC) $(LDFLAGS) -o $@ $^ $(CUDA_LIBS)

# bench/decode_timeline: where 04's decode forward spends its time, block by block: 04's decode
# kernels, on 03's model (its setup).
bin/decode_timeline: $(BUILD)/bench/decode_timeline.o $(BUILD)/04_fused_mlp/decode.cu.o \
                     $(STAGE_DEPS_04_fused_mlp) $(COMMON_OBJ) | bin
	$(CC) $(LDFLAGS) -o $@ $^ $(CUDA_LIBS)

bin $(BUILD):
	@mkdir -p $@

# ---- tests ---------------------------------------------------------------------------
# tests/test_*.c run on the CPU; tests/gpu_*.c need a GPU and report SKIP without one.
# tests/test_*.py are CPU tests too (run by python3; tests/test_hta.py uses bin/tests/test_trace).
# PYTHON: the project's virtual environment where it exists (.venv/, see .ci/run), else python3.
PYTHON ?= $(if $(wildcard .venv/bin/python3),.venv/bin/python3,python3)
export PYTHON
CPU_TESTS := $(patsubst tests/%.c,bin/tests/%,$(wildcard tests/test_*.c))
CPU_SCRIPTS := $(wildcard tests/test_*.py tests/test_*.sh)
GPU_TESTS := $(patsubst tests/%.c,bin/tests/%,$(wildcard tests/gpu_*.c))

bin/tests/test_%: $(BUILD)/tests/test_%.o $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(CUDA_LIBS)

# GPU tests link every stage's code but its main (all C linkage, distinct names).
STAGE_LIB_OBJ := $(sort $(foreach s,$(BUILT_STAGES),$(call stage_lib,$(s))))
bin/tests/gpu_%: $(BUILD)/tests/gpu_%.o $(COMMON_OBJ) $(STAGE_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(CUDA_LIBS)

# tests/gpu_*.sh drive the stage programs themselves on a GPU (SKIP without one).
# make test: every CPU test, and on a GPU every GPU test at one dtype and small shapes, 04's rungs
# checked in one run of the whole ladder per shape. make test-full adds every dtype, each rung in
# a run of its own, the big shapes, 03's sweep, and PyTorch side by side (TEST_LEVEL picks; each
# tests/gpu_*.sh says what it leaves to test-full).
GPU_SCRIPTS := $(wildcard tests/gpu_*.sh)
GPU_SCRIPTS_QUICK := $(filter-out tests/gpu_compare.sh,$(GPU_SCRIPTS))
TEST_PROGRAMS := $(CPU_TESTS) $(GPU_TESTS) $(addprefix bin/,$(BUILT_STAGES)) bin/decode_timeline

test: $(TEST_PROGRAMS)
	@TEST_LEVEL=quick tests/run_tests.sh $(CPU_TESTS) $(CPU_SCRIPTS) $(GPU_TESTS) $(GPU_SCRIPTS_QUICK) -- $(BUILT_STAGES)

test-full: $(TEST_PROGRAMS)
	@TEST_LEVEL=full tests/run_tests.sh $(CPU_TESTS) $(CPU_SCRIPTS) $(GPU_TESTS) $(GPU_SCRIPTS) -- $(BUILT_STAGES)

# Every stage and the GPU tests under compute-sanitizer (memcheck, racecheck, initcheck,
# synccheck) at small, tail-heavy shapes; needs a GPU.
sanitize: $(addprefix bin/,$(BUILT_STAGES)) $(GPU_TESTS)
	@tests/sanitize.sh

test-cpu: $(CPU_TESTS)
	@tests/run_tests.sh $(CPU_TESTS) $(CPU_SCRIPTS) --

# The flag parser under libFuzzer (clang, with ASan and UBSan): make fuzz && bin/fuzz_cli -max_total_time=60
FUZZ_CC ?= clang
FUZZ_FLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 -Icommon -fsanitize=fuzzer,address,undefined
fuzz: bin/fuzz_cli
bin/fuzz_cli: tests/fuzz_cli.c common/cli.c common/dtype.c common/program.c common/cli.h common/dtype.h | bin
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz_cli.c common/cli.c common/dtype.c common/program.c

clean:
	rm -rf $(BUILD) bin .last_stage
