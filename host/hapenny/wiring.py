"""`hapenny wiring PROFILE`: the profile's wiring as an SVG picture: the
ESP32's GPIOs on the left, the matrix ribbons, LED strip and buttons on the
right, one labelled wire for each connection."""
import json
from xml.sax.saxutils import escape

from hapenny import firmware

ROW_H = 22
BOARDS = {"esp32": "ESP32 DevKit", "esp32s3": "ESP32-S3 DevKitC-1", "esp32c3": "ESP32-C3 board"}
COLOURS = {"row": "#c0392b", "col": "#2471a3", "led": "#1e8449", "button": "#7d3c98"}


def connections(profile):
    """[(gpio, kind, label)] in drawing order."""
    out = []
    m = profile["matrix"]
    for i, p in enumerate(m["rows"]):
        out.append((p, "row", "row ribbon, wire %d (row %d, open drain)" % (i + 1, i)))
    for i, p in enumerate(m["cols"]):
        out.append((p, "col", "column ribbon, wire %d (col %d, pull-up)" % (i + 1, i)))
    leds = profile.get("leds") or {}
    if leds.get("pin", -1) >= 0:
        n = leds.get("beds", 9) * 2 * leds.get("per_side", 3) + leds.get("status", 3)
        out.append((leds["pin"], "led", "WS2812 strip DIN via 74AHCT125 (%d pixels)" % n))
    for name, p in sorted((profile.get("buttons") or {}).items()):
        out.append((p, "button", "%s button to GND" % name))
    return out


def warnings(profile):
    why = firmware.profile_problem(json.dumps(profile))
    notes = ["the firmware refuses this profile: %s" % why] if why else []
    chip = profile.get("chip", "esp32")
    pins = firmware.module("profile")  # the chip's pins as the firmware knows them
    if chip not in pins.CHIPS:
        return notes
    _, never, input_only, strapping = pins.chip_pins(chip)
    conns = connections(profile)
    seen = {}
    for p, kind, label in conns:
        if p in seen:
            notes.append("GPIO %d is used twice (%s; %s)" % (p, seen[p], label))
        seen[p] = label
        if p in input_only and kind in ("col", "button"):
            notes.append("GPIO %d has no internal pull-up: add 10 kΩ to 3.3 V (listed in \"pullups\")" % p)
        if p in input_only and kind in ("row", "led"):
            notes.append("GPIO %d is input-only and cannot drive a %s" % (p, kind))
        if p in strapping:
            way = strapping[p]
            notes.append("GPIO %d is a strapping pin: keep it free of %s at power-up"
                         % (p, "any pull" if " or " in way else "pull-ups" if way == "high" else "pull-downs"))
        if p in never:
            notes.append("GPIO %d: %s" % (p, never[p]))
    return notes


def svg(profile):
    conns = connections(profile)
    notes = warnings(profile)
    h = 110 + ROW_H * len(conns) + 20 * len(notes) + 50
    w = 760
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
           'font-family="sans-serif" font-size="13">' % (w, h, w, h),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="20" y="28" font-size="18" font-weight="bold">%s wiring</text>' % escape(profile["name"]),
           '<text x="20" y="48" fill="#555">%s</text>' % escape(profile.get("description", ""))]
    top = 95
    out.append('<rect x="20" y="%d" width="150" height="%d" rx="8" fill="#222"/>' % (top - 32, ROW_H * len(conns) + 42))
    out.append('<text x="95" y="%d" fill="white" text-anchor="middle" font-weight="bold">%s</text>'
               % (top - 14, escape(BOARDS.get(profile.get("chip", "esp32"), "ESP32 board"))))
    for i, (p, kind, label) in enumerate(conns):
        y = top + i * ROW_H + 6
        colour = COLOURS[kind]
        out.append('<text x="160" y="%d" fill="white" text-anchor="end">GPIO %d</text>' % (y + 4, p))
        out.append('<circle cx="170" cy="%d" r="4" fill="%s"/>' % (y, colour))
        out.append('<line x1="170" y1="%d" x2="430" y2="%d" stroke="%s" stroke-width="2"/>' % (y, y, colour))
        out.append('<rect x="430" y="%d" width="10" height="12" fill="%s"/>' % (y - 6, colour))
        out.append('<text x="450" y="%d">%s</text>' % (y + 4, escape(label)))
    y = top + ROW_H * len(conns) + 50
    for n in notes:
        out.append('<text x="20" y="%d" fill="#b03a2e">⚠ %s</text>' % (y, escape(n)))
        y += 20
    out.append('<text x="20" y="%d" fill="#555">Power the strip from 5 V with a common ground; '
               'the %s from USB.</text>' % (y, escape(BOARDS.get(profile.get("chip", "esp32"), "board"))))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def load(name_or_path):
    return json.loads(firmware.profile_path(name_or_path).read_text())
