"""The wheel carries the firmware and the board profiles as package data.

They live where a reader of the repository expects them (firmware/,
hardware/profiles/); building the wheel copies them into the package as
hapenny/_data/firmware and hapenny/_data/profiles, where hapenny.firmware
finds them with importlib.resources. An editable install keeps reading the
repository's own folders, so there is one copy of each file."""
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
DATA = {"firmware": HERE / "firmware", "profiles": HERE / "hardware" / "profiles"}
SKIP = ("__pycache__", ".pyc", ".mpy")  # compiled leftovers are made again where they are used


class BuildWithData(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for name, src in DATA.items():
            if not src.is_dir():
                raise SystemExit("cannot build hapenny: %s is missing" % src)
            for f in sorted(src.rglob("*")):
                rel = f.relative_to(src)
                if not f.is_file() or any(part == SKIP[0] or part.endswith(SKIP[1:]) for part in rel.parts):
                    continue
                dst = Path(self.build_lib) / "hapenny" / "_data" / name / rel
                self.mkpath(str(dst.parent))
                self.copy_file(str(f), str(dst))


setup(cmdclass={"build_py": BuildWithData})
