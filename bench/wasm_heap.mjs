// Runs MicroPython's official WebAssembly build (a 32-bit port) under Node
// with a staged board flash: node wasm_heap.mjs MANIFEST.json
// The manifest names the npm package's module, files to write into the
// interpreter's filesystem (base64), the Python to run, in steps, and
// optionally a cap; a step "#restart" starts a new port with the flash's
// files, as a power cut or a reset starts the chip. This port collects
// garbage only between two runPython calls (ports/webassembly/main.c:
// MICROPY_GC_SPLIT_HEAP_AUTO), so a step that calls gc.collect() is
// followed by another that reads the heap.
//
// The cap: that variant grows its heap whenever it fills (py/gc.c,
// gc_try_add_heap: a new area from malloc), so `heapsize` alone is only the
// first area. With a cap, the first area is the cap and growth is refused:
// the WebAssembly memory may not grow and what is left of it is taken by
// malloc here, so the interpreter's malloc for a new area fails and the
// allocation raises MemoryError, as on a chip whose heap cannot grow. A
// little is left free for the calls that run a step (at most a few dozen
// bytes each), far less than any new area (at least the heap's size).
// Stricter than the chip: garbage made inside a step is not collected
// before the step ends.
// Output: what the steps print, then one line "STEPS {json}" with the
// number of steps that raised, how many of them with a MemoryError, and
// the first messages.
import { readFileSync } from "node:fs";

const man = JSON.parse(readFileSync(process.argv[2], "utf8"));
const { loadMicroPython } = await import(man.module);
let out = "";
const grow = WebAssembly.Memory.prototype.grow;

// A port started with `files` written into its filesystem (and capped, with a cap).
async function boot(files) {
  WebAssembly.Memory.prototype.grow = grow;  // (refused again below, once this one is capped)
  const mp = await loadMicroPython({ heapsize: man.cap || man.heapsize, stdout: (s) => { out += s + "\n"; } });
  for (const [path, data] of Object.entries(files)) {
    const parts = path.split("/").filter(Boolean);
    let dir = "";
    for (const p of parts.slice(0, -1)) {
      dir += "/" + p;
      try { mp.FS.mkdir(dir); } catch (e) { /* exists */ }
    }
    mp.FS.writeFile(path, data);
  }
  if (man.cap) {
    const M = mp._module;
    console.error = console.warn = () => {};  // emscripten's notes on each refused growth
    WebAssembly.Memory.prototype.grow = function () { throw new RangeError("capped"); };
    // a little kept back for the step calls' own small allocations (a result
    // holder of 12 bytes each), taken before the rest and given back after
    const slack = [];
    for (let i = 0; i < 64; i++) slack.push(M._malloc(256));
    for (let size = 1 << 24; size >= 16; size >>= 1) {
      while (M._malloc(size)) { /* kept: the interpreter's heap cannot grow into it */ }
    }
    for (const p of slack) M._free(p);
  }
  return mp;
}

// The files under these folders of a port's filesystem, to carry into the next one.
function saved(mp) {
  const files = {};
  const walk = (dir) => {
    for (const name of mp.FS.readdir(dir)) {
      if (name === "." || name === "..") continue;
      const path = dir + "/" + name;
      if (mp.FS.isDir(mp.FS.stat(path).mode)) walk(path);
      else files[path] = mp.FS.readFile(path);
    }
  };
  for (const top of ["/flash", "/shim", "/tour"]) {
    try { walk(top); } catch (e) { /* not there */ }
  }
  return files;
}

const first = {};
for (const [path, b64] of Object.entries(man.files)) first[path] = Buffer.from(b64, "base64");
let mp = await boot(first);
// the step that starts the port again, as a power cut or a reset starts the chip: its heap
// whole and empty, every name interned before gone (bench/wasm_heap.py's RESTART)
const RESTART = "#restart";
const failed = [];
let n = 0;
let mem = 0;  // of them, the ones a MemoryError ended (outside the step's own guard)
for (const step of man.steps) {
  if (step === RESTART) {  // the chip's power cut or reset: a new interpreter, the flash's files kept
    mp = await boot(saved(mp));
    continue;
  }
  try {
    mp.runPython(step);
  } catch (e) {
    n += 1;
    if (String(e).includes("MemoryError")) mem += 1;
    if (failed.length < 8) failed.push(String(e).slice(-300) + " [in: " + step.slice(0, 60) + "]");
  }
}
process.stdout.write(out);
process.stdout.write("STEPS " + JSON.stringify({ raised: n, memory: mem, failed }) + "\n");
