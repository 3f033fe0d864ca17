# Runs portable test modules inside MicroPython; one JSON line per test.
# Usage: micropython mp_runner.py MODULE [MODULE...]   (cwd: tests/portable on sys.path)
import sys
import json
import io


def run(modname):
    mod = __import__(modname)
    for name in sorted(dir(mod)):
        if not name.startswith("test_"):
            continue
        fn = getattr(mod, name)
        if not callable(fn):
            continue
        rec = {"module": modname, "test": name, "ok": True, "err": ""}
        try:
            fn()
        except Exception as e:  # report every failure, keep going
            buf = io.StringIO()
            sys.print_exception(e, buf)
            rec["ok"] = False
            rec["err"] = buf.getvalue()
        print(json.dumps(rec))


for m in sys.argv[1:]:
    run(m)
print(json.dumps({"done": True}))
