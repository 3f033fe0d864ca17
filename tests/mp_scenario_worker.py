# MicroPython side of the differential test: one JSON scenario a line in,
# one JSON record a line out, until end of input. A crash is reported as a
# record too, so the test shows it.
import sys
import io
import json
import scenario

while True:
    line = sys.stdin.readline()
    if not line:
        break
    req = json.loads(line)
    try:
        out = json.dumps(scenario.play(req["setup"], req["actions"]))
    except Exception as e:
        buf = io.StringIO()
        sys.print_exception(e, buf)
        out = json.dumps({"crash": buf.getvalue()})
    print(out)
