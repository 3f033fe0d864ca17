# MicroPython side of the differential test: one JSON scenario a line in,
# one JSON record a line out, until end of input.
import sys
import json
import scenario

while True:
    line = sys.stdin.readline()
    if not line:
        break
    req = json.loads(line)
    print(json.dumps(scenario.play(req["setup"], req["actions"])))
