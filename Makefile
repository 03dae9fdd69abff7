# Thin wrapper: scripts/deps.sh builds the dependencies into a cache, CMake builds the project.
#   make demo    the showcase: an unmodified HDF5 program writes zarr, read back by h5dump and zarrita
#   make test    build everything and run the whole test suite (ctest) + format check
#   make bench   benchmarks (results under bench/results/)
#   make env     prints `export` lines: eval "$(make -s env)"
#   make asan    the test suite under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)
BUILD  ?= build
JOBS   ?= $(shell nproc 2>/dev/null || echo 2)
CTEST_ARGS ?=

.PHONY: all deps build test demo bench env asan format format-check clean interop-deps install

all: build

# The deps prefix is recorded in $(BUILD)/deps.prefix by the deps step.
deps:
	@mkdir -p $(BUILD)
	@scripts/deps.sh > $(BUILD)/deps.prefix.new && mv $(BUILD)/deps.prefix.new $(BUILD)/deps.prefix

interop-deps:
	@scripts/interop-deps.sh

$(BUILD)/build.ninja: CMakeLists.txt | deps
	@cmake -S . -B $(BUILD) -G Ninja -DH5ZARR_DEPS="$$(cat $(BUILD)/deps.prefix)" $(CMAKE_ARGS) >$(BUILD)/cmake.log 2>&1 \
	  || { tail -n 20 $(BUILD)/cmake.log; echo "make: FAILED: cmake configure (log: $(BUILD)/cmake.log)"; exit 1; }

build: deps $(BUILD)/build.ninja
	@cmake --build $(BUILD) -j $(JOBS)

test: build interop-deps format-check
	@cd $(BUILD) && ctest --output-on-failure --timeout 900 -j $(JOBS) $(CTEST_ARGS)

demo: build interop-deps
	@scripts/demo.sh $(BUILD)

bench: build interop-deps
	@scripts/bench.sh $(BUILD)

env: deps
	@p=$$(cat $(BUILD)/deps.prefix); b=$$(cd $(BUILD) && pwd); \
	echo "export PATH=\"$$p/hdf5/bin:$$p/netcdf/bin:\$$PATH\""; \
	echo "export HDF5_PLUGIN_PATH=\"$$b/plugins:$$p/netcdf/hdf5/lib/plugin\""; \
	echo "export LD_LIBRARY_PATH=\"$$p/hdf5/lib:$$p/netcdf/lib\$${LD_LIBRARY_PATH:+:\$$LD_LIBRARY_PATH}\""; \
	echo "export PKG_CONFIG_PATH=\"$$b/pkgconfig:$$p/hdf5/lib/pkgconfig:$$p/netcdf/lib/pkgconfig\$${PKG_CONFIG_PATH:+:\$$PKG_CONFIG_PATH}\""

# make install PREFIX=<dir>: plugins in <dir>/lib/h5zarr/plugin, headers, CMake package, h5zarr.pc, bin/h5zarr-config.
install:
	@[ -n "$(PREFIX)" ] || { echo "make: FAILED: install needs PREFIX=<dir>"; exit 1; }
	@$(MAKE) --no-print-directory build
	@cmake --install $(BUILD) --prefix "$(PREFIX)"

# Programs built here (core and HDF5 C tests) run sanitized; the shell tests drive prebuilt tools
# (h5dump, node, python) that cannot host the sanitizer runtime, so they are left to `make test`.
asan:
	@$(MAKE) --no-print-directory test BUILD=build-asan CMAKE_ARGS="-DH5ZARR_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug" \
	  CTEST_ARGS="-R '^(core|hdf5|fuzz)\.|^script\.api_suite'"

FORMAT_SOURCES = $(shell git ls-files '*.c' '*.h' 2>/dev/null)
format:
	@clang-format -i $(FORMAT_SOURCES)
format-check:
	@clang-format --dry-run -Werror $(FORMAT_SOURCES) || { echo "make: FAILED: clang-format (run 'make format')"; exit 1; }

clean:
	rm -rf $(BUILD) build-asan
