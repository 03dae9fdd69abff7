# Thin wrapper: scripts/deps.sh builds the dependencies into a cache, CMake builds the project.
#   make demo    the showcase: an unmodified HDF5 program writes zarr, read back by h5dump and zarrita
#   make test    build everything and run the whole test suite (ctest) + format check
#   make bench   benchmarks (results under bench/results/)
#   make env     prints `export` lines: eval "$(make -s env)"
#   make asan    the test suite under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)
#   make tsan    the core and HDF5 C tests under ThreadSanitizer (build-tsan/)
#   make test-mpi  the MPI tests (mpirun -np 4) on a parallel HDF5 (scripts/deps-mpi.sh), in build-mpi/
#   make env-mpi   builds build-mpi, then prints `export` lines for it: eval "$(make -s env-mpi)"
#   make python  h5py built against the project's HDF5 (scripts/python.sh); `make env` then puts it on PYTHONPATH
#   make test-peers  other projects' own suites (h5py's, netCDF-C's) natively and through the connector, compared
BUILD  ?= build
JOBS   ?= $(shell nproc 2>/dev/null || echo 2)
CTEST_ARGS ?=

.PHONY: all deps build test demo bench env asan tsan format format-check clean interop-deps install \
	deps-mpi build-mpi test-mpi env-mpi python test-peers

all: build

# The deps prefix is recorded in $(BUILD)/deps.prefix by the deps step.
deps:
	@mkdir -p $(BUILD)
	@t=$$(mktemp $(BUILD)/deps.prefix.XXXXXX) && scripts/deps.sh > "$$t" && mv "$$t" $(BUILD)/deps.prefix || { rm -f "$$t"; exit 1; }

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
	echo "export PATH=\"$$b/bin:$$p/hdf5/bin:$$p/netcdf/bin:\$$PATH\""; \
	echo "export HDF5_PLUGIN_PATH=\"$$b/plugins:$$p/netcdf/hdf5/lib/plugin\""; \
	echo "export LD_LIBRARY_PATH=\"$$p/hdf5/lib:$$p/netcdf/lib\$${LD_LIBRARY_PATH:+:\$$LD_LIBRARY_PATH}\""; \
	echo "export PKG_CONFIG_PATH=\"$$b/pkgconfig:$$p/hdf5/lib/pkgconfig:$$p/netcdf/lib/pkgconfig\$${PKG_CONFIG_PATH:+:\$$PKG_CONFIG_PATH}\""; \
	if py=$$(scripts/python.sh "$$p" --if-built 2>/dev/null); then \
	  echo "export PYTHONPATH=\"$$py\$${PYTHONPATH:+:\$$PYTHONPATH}\""; \
	else echo "# h5py for Python programs: run 'make python' first"; fi; \
	[ -e "$$b/plugins/libh5zarr_vol.so" ] || echo "# $$b/plugins has no connector yet: run 'make build' first"

# h5py built against the project's HDF5 into the deps cache (source: ../shared/deps or H5PY_TARBALL).
python: deps
	@scripts/python.sh "$$(cat $(BUILD)/deps.prefix)" >/dev/null

# Peer suites: h5py's own tests natively and with every created file a store; fails on a test that passes
# natively and not through the connector unless tests/peers/h5py_exceptions.txt lists it (docs/PEERS.md).
test-peers: build
	@scripts/peers.sh $(BUILD)

# ---- MPI: a parallel HDF5 1.14.5 on Debian's OpenMPI (scripts/deps-mpi.sh, its own cache beside the
# serial one), the plugins built against it in $(BUILD_MPI) (only what the MPI tests need: target
# mpi_all). Built only when asked: `make test` does not build it; .ci/run calls `make test-mpi`.
BUILD_MPI ?= build-mpi
deps-mpi:
	@mkdir -p $(BUILD_MPI)
	@t=$$(mktemp $(BUILD_MPI)/deps.prefix.XXXXXX) && scripts/deps-mpi.sh > "$$t" && mv "$$t" $(BUILD_MPI)/deps.prefix || { rm -f "$$t"; exit 1; }

$(BUILD_MPI)/build.ninja: CMakeLists.txt | deps-mpi
	@cmake -S . -B $(BUILD_MPI) -G Ninja -DH5ZARR_DEPS="$$(cat $(BUILD_MPI)/deps.prefix)" $(CMAKE_ARGS) >$(BUILD_MPI)/cmake.log 2>&1 \
	  || { tail -n 20 $(BUILD_MPI)/cmake.log; echo "make: FAILED: cmake configure (log: $(BUILD_MPI)/cmake.log)"; exit 1; }

build-mpi: deps-mpi $(BUILD_MPI)/build.ninja
	@cmake --build $(BUILD_MPI) -j $(JOBS) --target mpi_all

test-mpi: build-mpi interop-deps
	@cd $(BUILD_MPI) && ctest -L mpi --output-on-failure --timeout 600 $(CTEST_ARGS)

# Builds build-mpi first (its output on stderr, so stdout is only the export lines): the HDF5_PLUGIN_PATH it
# prints then holds the plugins (tests/scripts/env_mpi.sh).
env-mpi:
	@$(MAKE) --no-print-directory build-mpi >&2
	@p=$$(cat $(BUILD_MPI)/deps.prefix); b=$$(cd $(BUILD_MPI) && pwd); \
	m=$$(dirname "$$(command -v mpirun)"); \
	echo "export PATH=\"$$p/hdf5/bin:$$m:\$$PATH\""; \
	echo "export HDF5_PLUGIN_PATH=\"$$b/plugins\""; \
	echo "export LD_LIBRARY_PATH=\"$$p/hdf5/lib\$${LD_LIBRARY_PATH:+:\$$LD_LIBRARY_PATH}\""; \
	echo "export PKG_CONFIG_PATH=\"$$p/hdf5/lib/pkgconfig\$${PKG_CONFIG_PATH:+:\$$PKG_CONFIG_PATH}\""

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

# The same programs under ThreadSanitizer: any data race or lock-order inversion fails its test. A pool
# restarts its threads in a forked child (die_after_fork=0 lets it); two tests cannot run under TSan at all:
# test_clobber forks with live threads whose ids TSan then sees twice, and test_pool_shutdown counts the
# process's threads (TSan adds its own).
tsan:
	@$(MAKE) --no-print-directory build BUILD=build-tsan CMAKE_ARGS="-DH5ZARR_TSAN=ON -DCMAKE_BUILD_TYPE=Debug"
	@cd build-tsan && TSAN_OPTIONS="halt_on_error=1 die_after_fork=0 $$TSAN_OPTIONS" ctest --output-on-failure \
	  --timeout 900 -j $(JOBS) -R '^(core|hdf5)\.' -E '^hdf5\.test_(clobber|pool_shutdown)$$'

FORMAT_SOURCES = $(shell git ls-files --cached --others --exclude-standard '*.c' '*.h' 2>/dev/null)
format:
	@clang-format -i $(FORMAT_SOURCES)
format-check:
	@clang-format --dry-run -Werror $(FORMAT_SOURCES) || { echo "make: FAILED: clang-format (run 'make format')"; exit 1; }

clean:
	rm -rf $(BUILD) build-asan build-tsan $(BUILD_MPI)
