"""The `hapenny` command line."""
import argparse
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(prog="hapenny")
    parser.parse_args(argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
