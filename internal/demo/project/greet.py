"""Greet someone by name."""

import sys


def greet(name):
    """Return the greeting for name."""
    return "Hello " + name


def main():
    name = sys.argv[1] if len(sys.argv) > 1 else "world"
    print(greet(name))


if __name__ == "__main__":
    main()
