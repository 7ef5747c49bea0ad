# tilefuse — the two Quick start commands are `make run` and `make test`.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
MODEL ?= examples/models/mlp_block.onnx
PY ?= /usr/bin/python3

.PHONY: setup configure build run test node-tests fuzz tsan property-explore clean models bench-peers bench-real real-test-models bench-gemm

setup:
	@bash scripts/setup.sh

configure: setup
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# Builds, then runs the bundled example model end to end and prints a summary.
run: build
	@mkdir -p $(BUILD_DIR)/run-output
	$(BUILD_DIR)/tilefuse run $(MODEL) --output-dir $(BUILD_DIR)/run-output

# The ONNX project's backend node tests, generated once per build dir by python3-onnx.
node-tests: setup
	@$(PY) scripts/gen_onnx_node_tests.py $(BUILD_DIR)/onnx-node-tests

test: build node-tests
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)
	@grep -h '^conformance:' $(BUILD_DIR)/Testing/Temporary/LastTest.log || true

# The property tests (random graphs, fused vs unfused vs reference) with a random seed and
# PROPERTY_CASES cases per property instead of `make test`'s fixed seed; the seed is printed.
PROPERTY_CASES ?= 5000
property-explore: build
	@seed=$$(od -An -N4 -tu4 /dev/urandom | tr -d ' '); \
	  echo "property tests with seed $$seed"; \
	  RC_PARAMS="seed=$$seed max_success=$(PROPERTY_CASES)" TILEFUSE_LOG_LEVEL=warn $(BUILD_DIR)/property_tests

# Regenerates examples/models/*.onnx and their expected outputs (committed).
models: setup
	@$(PY) scripts/make_example_models.py examples/models

# Benchmarks tilefuse against ONNX Runtime, PyTorch eager and TorchInductor into bench/peers/results/
# (see bench/README.md). Builds only the tilefuse binary; PEERS_VENV is the Python env, created with
# PyPI packages when missing; PEERS_ARGS=--quick is the few-minute smoke test.
PEERS_VENV ?= $(BUILD_DIR)/peers-venv
bench-peers: configure
	@cmake --build $(BUILD_DIR) --target tilefuse -j $(JOBS)
	@bash bench/peers/setup_venv.sh $(PEERS_VENV)
	$(PEERS_VENV)/bin/python bench/peers/run_peers.py --tilefuse $(BUILD_DIR)/tilefuse --work-dir $(BUILD_DIR)/peers-work $(PEERS_ARGS)

# The GEMM/convolution engine shoot-out (bench/gemm/): tilefuse's own GEMM, OpenBLAS, BLIS, oneDNN,
# ONNX Runtime and the FMA peak on the real-model suite's shapes, into bench/gemm/results/.
# Installs libdnnl-dev and libblis-dev (Debian) first; GEMM_ARGS=--quick is the short version.
bench-gemm: configure
	@bash scripts/setup.sh deps/bench-gemm-packages.txt
	@cmake -S . -B $(BUILD_DIR) > /dev/null
	@cmake --build $(BUILD_DIR) --target gemm_shootout -j $(JOBS)
	@bash bench/peers/setup_venv.sh $(PEERS_VENV)
	$(PEERS_VENV)/bin/python bench/gemm/run_gemm.py --shootout $(BUILD_DIR)/gemm_shootout $(GEMM_ARGS)

# Fuzzes under ASan+UBSan for FUZZ_SECONDS each (default 600): the ONNX loader, then the
# executor on text IR graphs (fused vs reference; ir-corpus/ is seeded from fuzz/ir_corpus).
FUZZ_SECONDS ?= 600
fuzz: setup
	@cmake -S . -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
	  -DTILEFUSE_BUILD_FUZZERS=ON -DTILEFUSE_SANITIZE=ON -DTILEFUSE_BUILD_TESTS=OFF > /dev/null
	@cmake --build build-fuzz --target fuzz_onnx_loader fuzz_ir_executor -j $(JOBS)
	@mkdir -p build-fuzz/corpus build-fuzz/ir-corpus && cp examples/models/*.onnx build-fuzz/corpus/ \
	  && cp fuzz/ir_corpus/*.ir build-fuzz/ir-corpus/
	build-fuzz/fuzz_onnx_loader -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -artifact_prefix=build-fuzz/ build-fuzz/corpus
	build-fuzz/fuzz_ir_executor -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -timeout=120 -artifact_prefix=build-fuzz/ build-fuzz/ir-corpus

# The concurrency tests under ThreadSanitizer (build-tsan/): concurrent runs of one Executable
# (with first-run tuning), the thread team and its regions, the GEMM on it, and the SuperKernel
# against step-by-step runs. Any report fails the run.
tsan: setup
	@cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTILEFUSE_TSAN=ON > /dev/null
	@cmake --build build-tsan --target api_tests runtime_tests e2e_tests -j $(JOBS)
	TILEFUSE_LOG_LEVEL=warn TSAN_OPTIONS=halt_on_error=1 build-tsan/api_tests --gtest_filter='Executable.*'
	TILEFUSE_LOG_LEVEL=warn TSAN_OPTIONS=halt_on_error=1 build-tsan/runtime_tests --gtest_filter='ThreadTeam*:WorkerBlocks*:MatMul*:Sgemm*:StepRunner*:*Conv*:*Depthwise*'
	TILEFUSE_LOG_LEVEL=warn TSAN_OPTIONS=halt_on_error=1 build-tsan/e2e_tests --gtest_filter='*SuperKernel*'

clean:
	rm -rf $(BUILD_DIR) build-fuzz build-tsan

# Re-exports the tiny real-model test set (tests/models/real: each architecture of bench/real at
# 2 layers / hidden 64, static from the TorchScript exporter and with dynamic batch/sequence from
# the torch.export one, with inputs and PyTorch eager's outputs). Needs the bench venv (PyPI).
real-test-models: configure
	@bash bench/peers/setup_venv.sh $(PEERS_VENV)
	$(PEERS_VENV)/bin/python bench/real/export.py --size tiny --out tests/models/real \
	  --variants torchscript_static,dynamo_dynamic

# The real-model suite (bench/real/README.md): the eight architectures at full size, both
# exporters, checked against ONNX Runtime and PyTorch eager, then timed at 1 and 2 threads.
# Results in bench/real/results/. REAL_ARGS=--quick runs the tiny versions in a few minutes.
bench-real: configure
	@cmake --build $(BUILD_DIR) --target tilefuse -j $(JOBS)
	@bash bench/peers/setup_venv.sh $(PEERS_VENV)
	$(PEERS_VENV)/bin/python bench/real/run_real.py --tilefuse $(BUILD_DIR)/tilefuse --work-dir $(BUILD_DIR)/real-work $(REAL_ARGS)
