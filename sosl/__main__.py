"""``python -m sosl``: the ``sosl`` command line (:mod:`sosl.cli`)."""

if __name__ == "__main__":
    import sys

    from sosl.cli import console_main

    sys.exit(console_main())
