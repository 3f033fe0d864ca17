// Runs MicroPython's official WebAssembly build (a 32-bit port) under Node
// with a staged board flash: node wasm_heap.mjs MANIFEST.json
// The manifest names the npm package's module, files to write into the
// interpreter's filesystem (base64) and the Python to run, in steps: this
// port collects garbage only between two runPython calls (ports/webassembly
// main.c, MICROPY_GC_SPLIT_HEAP_AUTO), so a step that calls gc.collect()
// is followed by another that reads the heap. Output goes to stdout.
import { readFileSync } from "node:fs";

const man = JSON.parse(readFileSync(process.argv[2], "utf8"));
const { loadMicroPython } = await import(man.module);
let out = "";
const mp = await loadMicroPython({ heapsize: man.heapsize, stdout: (s) => { out += s + "\n"; } });
for (const [path, b64] of Object.entries(man.files)) {
  const parts = path.split("/").filter(Boolean);
  let dir = "";
  for (const p of parts.slice(0, -1)) {
    dir += "/" + p;
    try { mp.FS.mkdir(dir); } catch (e) { /* exists */ }
  }
  mp.FS.writeFile(path, Buffer.from(b64, "base64"));
}
try {
  for (const step of man.steps) mp.runPython(step);
} catch (e) {
  out += "\nERROR " + e + "\n";
}
process.stdout.write(out);
